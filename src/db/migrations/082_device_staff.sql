-- Authenticators managed from the staff pages (issue 10): a device can
-- be retired (a new status), a PSU has at most one active device, and an
-- assignment requested by one staff member becomes active only when a
-- second one approves it (four eyes), recorded in device_assignment.
ALTER TABLE device DROP CONSTRAINT device_status_check;
ALTER TABLE device ADD CONSTRAINT device_status_check
    CHECK (status IN ('not_enrolled', 'active', 'blocked', 'retired'));
ALTER TABLE device ADD COLUMN retired_at timestamptz;

CREATE UNIQUE INDEX device_one_active_per_psu ON device (psu_id)
    WHERE status = 'active';

CREATE TABLE device_assignment (
	id		bigserial PRIMARY KEY,
	device_serial	text NOT NULL REFERENCES device(serial),
	psu_id		bigint NOT NULL REFERENCES psu(id),
	-- 'staff:<username>' or 'operator:<name>' (psd2ctl), as in audit_log
	requested_by	text NOT NULL,
	requested_at	timestamptz NOT NULL DEFAULT now(),
	decided_by	text,
	decided_at	timestamptz,
	status		text NOT NULL DEFAULT 'pending'
			CHECK (status IN ('pending', 'approved', 'rejected',
			    'withdrawn')),
	CHECK ((status = 'pending') = (decided_by IS NULL)),
	-- the second pair of eyes is another person
	CHECK (decided_by IS NULL OR decided_by <> requested_by)
);
CREATE UNIQUE INDEX device_assignment_pending ON device_assignment
    (device_serial) WHERE status = 'pending';
CREATE INDEX device_assignment_psu ON device_assignment (psu_id, id);

-- The PSU page's look-up of audit rows naming a PSU.
CREATE INDEX audit_log_psu ON audit_log ((detail->>'psu'), id)
    WHERE detail ? 'psu';
