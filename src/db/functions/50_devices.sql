-- Hardware authenticators: trigger functions of device and device_challenge (the triggers themselves are schema, in 020_devices.sql).
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- A challenge may only be created for an active device of that PSU.
CREATE OR REPLACE FUNCTION device_challenge_check() RETURNS trigger
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

-- device_challenge_new (payload: device serial) wakes the daemons when a
-- challenge becomes claimable; device_challenge_done (payload: challenge
-- id) wakes the service, and the daemon holding a cancelled claim.
--
-- A transaction that notifies holds PostgreSQL's database-wide notify
-- lock through its commit, so durable commits that notify are flushed
-- one after another, never together. Payment initiation therefore sets
-- psd2.defer_notify for its transaction and sends device_challenge_new
-- right after its commit, in a transaction of its own without a flush
-- (pis_wake, 60_pis.sql); a lost wake-up costs only the daemons' sweep.
CREATE OR REPLACE FUNCTION device_challenge_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.status = 'pending' AND TG_OP = 'INSERT'
	    AND current_setting('psd2.defer_notify', true) = 'on' THEN
		RETURN NULL;
	END IF;
	IF NEW.status = 'pending' AND (TG_OP = 'INSERT'
	    OR OLD.status IS DISTINCT FROM 'pending') THEN
		PERFORM pg_notify('device_challenge_new', NEW.device_serial);
	ELSIF NEW.status IN ('done', 'failed', 'cancelled')
	    AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status) THEN
		PERFORM pg_notify('device_challenge_done', NEW.id::text);
	END IF;
	RETURN NULL;
END $$;

-- device_changed (payload: serial): enrolment, assignment, blocking.
CREATE OR REPLACE FUNCTION device_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status
	    OR OLD.psu_id IS DISTINCT FROM NEW.psu_id THEN
		PERFORM pg_notify('device_changed', NEW.serial);
	END IF;
	RETURN NULL;
END $$;
