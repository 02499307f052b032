-- 020_devices: hardware authenticators and their confirmation challenges.
-- Contract between psd2gate (the service), psd2ctl and psd2-deviced; see
-- device/PROTOCOL.md, "PostgreSQL contract". Run inside the migration
-- runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE device (
	serial		text PRIMARY KEY
			CHECK (serial ~ '^[A-Za-z0-9._-]{1,32}$'),
	model		text NOT NULL CHECK (length(model) BETWEEN 1 AND 32),
	firmware	text NOT NULL CHECK (length(firmware) BETWEEN 1 AND 16),
	-- uncompressed P-256 point (0x04 || X || Y), as the device sent it
	public_key	bytea NOT NULL CHECK (length(public_key) = 65),
	-- manufacturer's ECDSA signature (DER) and the daemon's opinion of
	-- it; psd2ctl re-verifies the signature itself before enrolling
	attestation	bytea NOT NULL,
	attestation_ok	boolean NOT NULL,
	host		text NOT NULL,
	first_seen	timestamptz NOT NULL DEFAULT now(),
	last_seen	timestamptz NOT NULL DEFAULT now(),
	status		text NOT NULL DEFAULT 'not_enrolled'
			CHECK (status IN ('not_enrolled', 'active', 'blocked')),
	psu_id		bigint REFERENCES psu(id),
	-- highest signature counter the service has accepted; only the
	-- service raises it, after verifying a signature
	last_counter	bigint NOT NULL DEFAULT 0 CHECK (last_counter >= 0),
	enrolled_at	timestamptz,
	blocked_at	timestamptz,
	CHECK (status <> 'active' OR attestation_ok)
);

CREATE INDEX device_psu_idx ON device (psu_id);

CREATE TABLE device_challenge (
	id		uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	device_serial	text NOT NULL REFERENCES device(serial),
	psu_id		bigint NOT NULL REFERENCES psu(id),
	nonce		bytea NOT NULL CHECK (length(nonce) = 32),
	amount_minor	bigint NOT NULL CHECK (amount_minor > 0),
	currency	text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
	payee_name	text NOT NULL CHECK (octet_length(payee_name) BETWEEN 1 AND 70
			    AND payee_name !~ '[[:cntrl:]]'),
	payee_iban	text NOT NULL
			CHECK (payee_iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$'),
	deadline	timestamptz NOT NULL,
	status		text NOT NULL DEFAULT 'pending'
			CHECK (status IN ('pending', 'claimed', 'done', 'failed',
			    'cancelled')),
	lease_owner	text,
	lease_expires	timestamptz,
	attempts	integer NOT NULL DEFAULT 0,
	last_error	text,
	outcome		text CHECK (outcome IN ('approved', 'declined',
			    'timed_out')),
	counter		bigint,
	signature	bytea,
	failure_reason	text,
	created_at	timestamptz NOT NULL DEFAULT now(),
	claimed_at	timestamptz,
	finished_at	timestamptz,
	CHECK ((status = 'claimed') = (lease_owner IS NOT NULL)),
	CHECK ((status = 'claimed') = (lease_expires IS NOT NULL)),
	CHECK (status <> 'done' OR (outcome IS NOT NULL AND counter IS NOT NULL
	    AND signature IS NOT NULL)),
	CHECK (status <> 'failed' OR failure_reason IS NOT NULL)
);

-- The daemons' work queue: open challenges per device.
CREATE INDEX device_challenge_open_idx ON device_challenge
	(device_serial, created_at) WHERE status IN ('pending', 'claimed');

-- A challenge may only be created for an active device of that PSU.
CREATE FUNCTION device_challenge_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM device d
	    WHERE d.serial = NEW.device_serial AND d.status = 'active'
	    AND d.psu_id = NEW.psu_id) THEN
		RAISE EXCEPTION 'device % is not active for this PSU',
		    NEW.device_serial USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END $$;

CREATE TRIGGER device_challenge_check BEFORE INSERT ON device_challenge
	FOR EACH ROW EXECUTE FUNCTION device_challenge_check();

-- device_challenge_new (payload: device serial) wakes the daemons when a
-- challenge becomes claimable; device_challenge_done (payload: challenge
-- id) wakes the service, and the daemon holding a cancelled claim.
CREATE FUNCTION device_challenge_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.status = 'pending' AND (TG_OP = 'INSERT'
	    OR OLD.status IS DISTINCT FROM 'pending') THEN
		PERFORM pg_notify('device_challenge_new', NEW.device_serial);
	ELSIF NEW.status IN ('done', 'failed', 'cancelled')
	    AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status) THEN
		PERFORM pg_notify('device_challenge_done', NEW.id::text);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER device_challenge_notify
	AFTER INSERT OR UPDATE OF status ON device_challenge
	FOR EACH ROW EXECUTE FUNCTION device_challenge_notify();

-- device_changed (payload: serial): enrolment, assignment, blocking.
CREATE FUNCTION device_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status
	    OR OLD.psu_id IS DISTINCT FROM NEW.psu_id THEN
		PERFORM pg_notify('device_changed', NEW.serial);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER device_notify AFTER INSERT OR UPDATE ON device
	FOR EACH ROW EXECUTE FUNCTION device_notify();
