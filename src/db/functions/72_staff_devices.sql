-- Status and PSU changes of authenticators by staff (the staff pages,
-- actor 'staff:<username>') and by psd2ctl (actor 'operator:<login>'),
-- issue 10. Kept apart from 70_staff.sql because the device test
-- database (tests/device/testdb.sh: a stand-in psu and audit_log, then
-- migrations 020 and 082) loads this file too. Every change is one
-- transaction with its audit row; blocking, unassigning and retiring
-- fail the device's open challenges at once (the payment follows as RJCT
-- with the reason).

-- Fails the open challenges of a device; returns how many.
CREATE OR REPLACE FUNCTION device_fail_open(p_serial text, p_reason text)
RETURNS integer LANGUAGE sql AS $$
	WITH c AS (
		UPDATE device_challenge SET status = 'failed',
		    failure_reason = p_reason, finished_at = now(),
		    lease_owner = NULL, lease_expires = NULL
		WHERE device_serial = p_serial
		    AND status IN ('pending', 'claimed')
		RETURNING 1
	)
	SELECT count(*)::integer FROM c;
$$;

-- p_action: assign_request (p_psu: username), assign_approve,
-- assign_reject (the device's pending request; not by its requester),
-- assign_direct (psd2ctl only), unassign, block, retire.
-- result: ok, no_device, no_psu, bad_status, psu_has_device,
-- pending_exists, no_request, same_person.
CREATE OR REPLACE FUNCTION staff_device_action(p_actor text, p_action text,
    p_serial text, p_psu text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d device%ROWTYPE;
	a device_assignment%ROWTYPE;
	who psu%ROWTYPE;
	failed integer := 0;
	holder text;
BEGIN
	SELECT * INTO d FROM device WHERE serial = p_serial FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_device';
	END IF;
	SELECT username INTO holder FROM psu WHERE id = d.psu_id;
	IF p_action IN ('assign_request', 'assign_direct') THEN
		SELECT * INTO who FROM psu WHERE username = p_psu;
		IF NOT FOUND THEN
			RETURN 'no_psu';
		END IF;
		IF d.status <> 'active' OR d.psu_id IS NOT NULL THEN
			RETURN 'bad_status';
		END IF;
		PERFORM 1 FROM psu WHERE id = who.id FOR UPDATE;
		IF EXISTS (SELECT 1 FROM device WHERE psu_id = who.id
		    AND status = 'active') THEN
			RETURN 'psu_has_device';
		END IF;
		IF p_action = 'assign_direct' THEN
			UPDATE device SET psu_id = who.id WHERE serial = p_serial;
		ELSE
			IF EXISTS (SELECT 1 FROM device_assignment
			    WHERE device_serial = p_serial
				AND status = 'pending') THEN
				RETURN 'pending_exists';
			END IF;
			INSERT INTO device_assignment (device_serial, psu_id,
			    requested_by)
			VALUES (p_serial, who.id, p_actor);
		END IF;
		holder := who.username;
	ELSIF p_action IN ('assign_approve', 'assign_reject') THEN
		SELECT * INTO a FROM device_assignment
		WHERE device_serial = p_serial AND status = 'pending'
		FOR UPDATE;
		IF NOT FOUND THEN
			RETURN 'no_request';
		END IF;
		IF a.requested_by = p_actor THEN
			RETURN 'same_person';
		END IF;
		SELECT * INTO who FROM psu WHERE id = a.psu_id;
		holder := who.username;
		IF p_action = 'assign_approve' THEN
			IF d.status <> 'active' OR d.psu_id IS NOT NULL THEN
				RETURN 'bad_status';
			END IF;
			PERFORM 1 FROM psu WHERE id = who.id FOR UPDATE;
			IF EXISTS (SELECT 1 FROM device WHERE psu_id = who.id
			    AND status = 'active') THEN
				RETURN 'psu_has_device';
			END IF;
			UPDATE device SET psu_id = who.id WHERE serial = p_serial;
		END IF;
		UPDATE device_assignment SET status = CASE p_action
		    WHEN 'assign_approve' THEN 'approved' ELSE 'rejected' END,
		    decided_by = p_actor, decided_at = now()
		WHERE id = a.id;
	ELSIF p_action = 'unassign' THEN
		IF d.psu_id IS NULL THEN
			RETURN 'bad_status';
		END IF;
		failed := device_fail_open(p_serial, 'device unassigned');
		UPDATE device SET psu_id = NULL WHERE serial = p_serial;
	ELSIF p_action = 'block' THEN
		IF d.status IN ('blocked', 'retired') THEN
			RETURN 'bad_status';
		END IF;
		failed := device_fail_open(p_serial, 'device blocked');
		UPDATE device SET status = 'blocked', blocked_at = now()
		WHERE serial = p_serial;
	ELSIF p_action = 'retire' THEN
		IF d.status = 'retired' THEN
			RETURN 'bad_status';
		END IF;
		failed := device_fail_open(p_serial, 'device retired');
		UPDATE device SET status = 'retired', retired_at = now()
		WHERE serial = p_serial;
		UPDATE device_assignment SET status = 'withdrawn',
		    decided_by = p_actor, decided_at = now()
		WHERE device_serial = p_serial AND status = 'pending';
	ELSE
		RAISE EXCEPTION 'unknown device action %', p_action;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'device.' || p_action, jsonb_strip_nulls(
	    jsonb_build_object('serial', p_serial, 'psu', holder,
		'failed_challenges', NULLIF(failed, 0))));
	RETURN 'ok';
END;
$$;


-- Enrolment, by psd2ctl device enrol and by the staff pages, after
-- devenrol_check (device/devenrol.c) verified the manufacturer's
-- attestation of the key p_public_key: not_enrolled -> active, with its
-- audit row (device.enrol, the actor named, the fingerprint compared).
-- A row whose key changed since the check is not enrolled. result: ok,
-- no_device, bad_status, key_changed.
CREATE OR REPLACE FUNCTION device_enrol(p_actor text, p_serial text,
    p_public_key bytea, p_fingerprint text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d device%ROWTYPE;
BEGIN
	SELECT * INTO d FROM device WHERE serial = p_serial FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_device';
	END IF;
	IF d.status <> 'not_enrolled' THEN
		RETURN 'bad_status';
	END IF;
	IF d.public_key IS DISTINCT FROM p_public_key THEN
		RETURN 'key_changed';
	END IF;
	UPDATE device SET status = 'active', enrolled_at = now()
	WHERE serial = p_serial;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'device.enrol', jsonb_build_object('serial',
	    p_serial, 'fingerprint', p_fingerprint));
	RETURN 'ok';
END;
$$;

-- An enrolment refused because the attestation does not verify (by the
-- staff pages or psd2ctl): nothing changes on the device, but the attempt
-- is a row (device.enrol.refused, the actor named), since handing out a
-- device of unknown origin is what enrolment guards against. result:
-- attestation_invalid, or no_device.
CREATE OR REPLACE FUNCTION device_enrol_refused(p_actor text,
    p_serial text, p_fingerprint text)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM device WHERE serial = p_serial;
	IF NOT FOUND THEN
		RETURN 'no_device';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'device.enrol.refused', jsonb_strip_nulls(
	    jsonb_build_object('serial', p_serial, 'fingerprint',
		p_fingerprint, 'reason', 'attestation does not verify')));
	RETURN 'attestation_invalid';
END;
$$;
