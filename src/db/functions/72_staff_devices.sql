-- Status and PSU changes of authenticators by staff (the staff pages,
-- actor 'staff:<username>') and by psd2ctl (actor 'operator:<login>').
-- Kept apart from 70_staff.sql because the device test
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

-- Whether device d may be assigned to the PSU p_psu_id (both rows locked
-- by the caller): ok, bad_status, psu_has_device.
CREATE OR REPLACE FUNCTION device_assignable(d device, p_psu_id bigint)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT CASE
	    WHEN d.status <> 'active' OR d.psu_id IS NOT NULL THEN 'bad_status'
	    WHEN EXISTS (SELECT 1 FROM device WHERE psu_id = p_psu_id
		AND status = 'active') THEN 'psu_has_device'
	    ELSE 'ok' END;
$$;

-- Locks device p_serial and PSU p_psu (username), in that order, and
-- says whether the one may be assigned to the other: result no_device,
-- no_psu, or as device_assignable; psu_id the PSU's id.
CREATE OR REPLACE FUNCTION device_assign_target(p_serial text, p_psu text,
    OUT result text, OUT psu_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
	d device%ROWTYPE;
BEGIN
	SELECT * INTO d FROM device WHERE serial = p_serial FOR UPDATE;
	IF NOT FOUND THEN
		result := 'no_device';
		RETURN;
	END IF;
	SELECT p.id INTO psu_id FROM psu p WHERE p.username = p_psu
	FOR UPDATE;
	IF NOT FOUND THEN
		result := 'no_psu';
		RETURN;
	END IF;
	result := device_assignable(d, psu_id);
END;
$$;

-- p_action: assign_request (p_psu: username), assign_approve,
-- assign_reject (the device's pending request; not by its requester),
-- unassign, block, retire. There is no direct assignment here: four eyes
-- (a request, then another member's approval) on the staff pages and in
-- psd2ctl alike; the one exception is device_assign_break_glass.
-- result: ok, no_device, no_psu, bad_status, psu_has_device,
-- pending_exists, no_request, same_person.
--
-- SECURITY DEFINER: the roles of the service and psd2ctl may not write
-- device.psu_id or device_assignment themselves (migration 130), so no
-- assignment bypasses these checks.
CREATE OR REPLACE FUNCTION staff_device_action(p_actor text, p_action text,
    p_serial text, p_psu text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	d device%ROWTYPE;
	a device_assignment%ROWTYPE;
	who psu%ROWTYPE;
	t record;
	failed integer := 0;
	holder text;
	r text;
BEGIN
	SELECT * INTO d FROM device WHERE serial = p_serial FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_device';
	END IF;
	SELECT username INTO holder FROM psu WHERE id = d.psu_id;
	IF p_action = 'assign_request' THEN
		SELECT * INTO t FROM device_assign_target(p_serial, p_psu);
		IF t.result <> 'ok' THEN
			RETURN t.result;
		END IF;
		IF EXISTS (SELECT 1 FROM device_assignment
		    WHERE device_serial = p_serial AND status = 'pending') THEN
			RETURN 'pending_exists';
		END IF;
		INSERT INTO device_assignment (device_serial, psu_id,
		    requested_by)
		VALUES (p_serial, t.psu_id, p_actor);
		holder := p_psu;
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
		SELECT * INTO who FROM psu WHERE id = a.psu_id FOR UPDATE;
		holder := who.username;
		IF p_action = 'assign_approve' THEN
			r := device_assignable(d, who.id);
			IF r <> 'ok' THEN
				RETURN r;
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


-- The named exception to four eyes, for psd2ctl only (psd2ctl device
-- break-glass-assign): one operator assigns at once, with a reason, and
-- the row says so (device.assign_break_glass). A pending request for the
-- device is withdrawn. result: ok, no_reason, no_device, no_psu,
-- bad_status, psu_has_device. SECURITY DEFINER like staff_device_action;
-- only the operator's role may execute it (below).
CREATE OR REPLACE FUNCTION device_assign_break_glass(p_actor text,
    p_serial text, p_psu text, p_reason text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	t record;
BEGIN
	IF coalesce(btrim(p_reason), '') = '' THEN
		RETURN 'no_reason';
	END IF;
	SELECT * INTO t FROM device_assign_target(p_serial, p_psu);
	IF t.result <> 'ok' THEN
		RETURN t.result;
	END IF;
	UPDATE device SET psu_id = t.psu_id WHERE serial = p_serial;
	UPDATE device_assignment SET status = 'withdrawn',
	    decided_by = p_actor, decided_at = now()
	WHERE device_serial = p_serial AND status = 'pending';
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'device.assign_break_glass', jsonb_build_object(
	    'serial', p_serial, 'psu', p_psu, 'reason', p_reason));
	RETURN 'ok';
END;
$$;

-- Enrolment, by psd2ctl device enrol and by the staff pages, after
-- devenrol_check (src/common/devenrol.c) verified the manufacturer's
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
