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

-- psd2-deviced's writes (device/deviced_db.c). The psd2_daemon role may
-- only SELECT device and device_challenge and call these (migration 140),
-- so a compromised device host can record the devices it sees and claim,
-- renew and end the challenges of its own leases, and nothing else:
-- never a device's status, PSU or counter, a challenge's payment fields,
-- or its finished_at (stamped here and by device_challenge_finish_time,
-- 60_pis.sql, whatever a writer says). SECURITY DEFINER: they run as the
-- owner; every argument is data, never SQL.

-- A device the daemon sees: inserted the first time; after that only
-- last_seen, host and firmware change, and only while the device presents
-- the recorded public key. No row: another key (a clone or a swapped
-- device), which the daemon then does not use.
CREATE OR REPLACE FUNCTION deviced_record(p_serial text, p_model text,
    p_firmware text, p_public_key bytea, p_attestation bytea,
    p_attestation_ok boolean, p_host text)
RETURNS TABLE (status text, first_time boolean)
LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
	INSERT INTO device AS d (serial, model, firmware, public_key,
	    attestation, attestation_ok, host)
	VALUES (p_serial, p_model, p_firmware, p_public_key, p_attestation,
	    p_attestation_ok, p_host)
	ON CONFLICT (serial) DO UPDATE SET last_seen = now(),
	    host = EXCLUDED.host, firmware = EXCLUDED.firmware
	WHERE d.public_key = EXCLUDED.public_key
	RETURNING d.status, (d.xmax = 0);
$$;

-- A lease's length as the daemon asks for it, within what its
-- configuration allows (psd2_device_lease_seconds, 3..3600).
CREATE OR REPLACE FUNCTION deviced_lease(p_seconds integer)
RETURNS interval LANGUAGE sql IMMUTABLE AS $$
	SELECT make_interval(secs => LEAST(3600, GREATEST(3, p_seconds)));
$$;

-- Claims the oldest claimable challenge of device p_serial for lease
-- owner p_owner (device/PROTOCOL.md 7.3): the device active for the
-- challenge's PSU with the public key the daemon sees, the deadline at
-- least 2 seconds away, pending or with an expired lease. SKIP LOCKED:
-- several daemons share one queue. timeout_s is the CONFIRM's timeout
-- (PROTOCOL.md 5.6). No row: nothing to do.
CREATE OR REPLACE FUNCTION deviced_claim(p_owner text,
    p_lease_seconds integer, p_serial text, p_public_key bytea)
RETURNS TABLE (id uuid, nonce bytea, amount_minor bigint, currency text,
    payee_name text, payee_iban text, timeout_s integer, attempts integer,
    request_id uuid)
LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
	UPDATE device_challenge c SET status = 'claimed',
	    lease_owner = p_owner,
	    lease_expires = now() + deviced_lease(p_lease_seconds),
	    attempts = c.attempts + 1, claimed_at = now()
	WHERE c.id = (SELECT c2.id FROM device_challenge c2
	    JOIN device d ON d.serial = c2.device_serial
	    WHERE c2.device_serial = p_serial AND d.status = 'active'
		AND d.psu_id = c2.psu_id AND d.public_key = p_public_key
		AND c2.deadline > now() + interval '2 seconds'
		AND (c2.status = 'pending' OR (c2.status = 'claimed'
		    AND c2.lease_expires < now()))
	    ORDER BY c2.created_at LIMIT 1 FOR UPDATE OF c2 SKIP LOCKED)
	RETURNING c.id, c.nonce, c.amount_minor, c.currency, c.payee_name,
	    c.payee_iban, GREATEST(1, LEAST(600,
		floor(extract(epoch FROM c.deadline - now())) - 1))::integer,
	    c.attempts, c.request_id;
$$;

-- Renews every lease of p_owner; returns the challenges still held.
CREATE OR REPLACE FUNCTION deviced_renew(p_owner text,
    p_lease_seconds integer)
RETURNS SETOF uuid
LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
	UPDATE device_challenge
	SET lease_expires = now() + deviced_lease(p_lease_seconds)
	WHERE lease_owner = p_owner AND status = 'claimed'
	RETURNING id;
$$;

-- Whether p_owner may end challenge p_id, under the row's lock: 'held',
-- or why not: 'cancelled' (the service ended it first: a cancelled
-- payment, a deadline, a blocked device), 'ended' (done or failed
-- already), 'lease lost' (pending again, or claimed by another daemon),
-- 'unknown'. The lock makes the daemon's end and the service's cancel
-- one serialised step: whichever takes it first decides, the other sees
-- the result.
CREATE OR REPLACE FUNCTION deviced_held(p_id uuid, p_owner text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	SELECT ch.status, ch.lease_owner INTO c FROM device_challenge ch
	WHERE ch.id = p_id FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'unknown';
	ELSIF c.status = 'cancelled' THEN
		RETURN 'cancelled';
	ELSIF c.status IN ('done', 'failed') THEN
		RETURN 'ended';
	ELSIF c.status <> 'claimed' OR c.lease_owner <> p_owner THEN
		RETURN 'lease lost';
	END IF;
	RETURN 'held';
END;
$$;

-- The device's signed outcome of challenge p_id (approved, declined,
-- timed_out), as the RESULT carried it. Returns 'written' or
-- deviced_held()'s reason for refusing it.
CREATE OR REPLACE FUNCTION deviced_finish(p_id uuid, p_owner text,
    p_outcome text, p_counter bigint, p_signature bytea)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
	v text := deviced_held(p_id, p_owner);
BEGIN
	IF v <> 'held' THEN
		RETURN v;
	END IF;
	UPDATE device_challenge SET status = 'done', outcome = p_outcome,
	    counter = p_counter, signature = p_signature,
	    finished_at = clock_timestamp(), lease_owner = NULL,
	    lease_expires = NULL
	WHERE id = p_id;
	RETURN 'written';
END;
$$;

-- Challenge p_id ends without an outcome: failed on the device or the
-- way to it (PROTOCOL.md 7.3, "Failure reasons"; final, never sent
-- again), or with p_retry back to the queue (a busy device: pending, the
-- reason in last_error). Returns as deviced_finish().
CREATE OR REPLACE FUNCTION deviced_fail(p_id uuid, p_owner text,
    p_reason text, p_retry boolean)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
	v text := deviced_held(p_id, p_owner);
BEGIN
	IF v <> 'held' THEN
		RETURN v;
	END IF;
	UPDATE device_challenge SET
	    status = CASE WHEN p_retry THEN 'pending' ELSE 'failed' END,
	    failure_reason = CASE WHEN p_retry THEN NULL ELSE p_reason END,
	    last_error = CASE WHEN p_retry THEN p_reason ELSE last_error END,
	    finished_at = CASE WHEN p_retry THEN NULL
		ELSE clock_timestamp() END,
	    lease_owner = NULL, lease_expires = NULL
	WHERE id = p_id;
	RETURN 'written';
END;
$$;

-- A stopping daemon gives back every claim it holds (last_error
-- p_reason); returns how many.
CREATE OR REPLACE FUNCTION deviced_release_all(p_owner text, p_reason text)
RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
	WITH r AS (
		UPDATE device_challenge SET status = 'pending',
		    last_error = p_reason, lease_owner = NULL,
		    lease_expires = NULL
		WHERE lease_owner = p_owner AND status = 'claimed'
		RETURNING 1)
	SELECT count(*)::integer FROM r;
$$;

-- Challenges nobody can answer any more (deadline passed more than a
-- second ago, no live lease) end as failed, with last_error if a daemon
-- left one (e.g. device busy). SKIP LOCKED: a row another writer holds
-- is ended by the next sweep. Returns how many.
CREATE OR REPLACE FUNCTION deviced_sweep()
RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
	WITH r AS (
		UPDATE device_challenge SET status = 'failed',
		    failure_reason = coalesce(last_error,
			'deadline passed without an answer'),
		    finished_at = clock_timestamp(), lease_owner = NULL,
		    lease_expires = NULL
		WHERE id IN (SELECT id FROM device_challenge
		    WHERE status IN ('pending', 'claimed')
			AND deadline < now() - interval '1 second'
			AND (status = 'pending' OR lease_expires < now())
		    FOR UPDATE SKIP LOCKED)
		RETURNING 1)
	SELECT count(*)::integer FROM r;
$$;
