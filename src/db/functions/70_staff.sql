-- Staff login and sessions for the staff pages (src/staff/). The same
-- lockout rules as PSUs (login_factor): consecutive failures of either
-- factor lock the member; a lock is revealed only with a right factor.
-- Every outcome writes an audit row (actor staff:<username>).

-- Password step: counts the address against the login rate limit and
-- finds an active member. No row data when unknown or disabled.
CREATE OR REPLACE FUNCTION staff_login_lookup(p_username text, p_addr text,
    p_limit integer, OUT rate_ok boolean, OUT staff_id bigint,
    OUT password_hash text)
LANGUAGE plpgsql AS $$
BEGIN
	rate_ok := rate_hit('staff-login:' || p_addr, p_limit);
	SELECT s.id, s.password_hash INTO staff_id, password_hash
	FROM staff s WHERE s.username = p_username AND s.status = 'active';
END;
$$;

-- Outcome of one factor (p_factor 'password' or 'totp'); result ok,
-- failed, locked. p_username names an unknown member in the audit row.
CREATE OR REPLACE FUNCTION staff_login_factor(p_staff_id bigint,
    p_username text, p_factor text, p_ok boolean, p_max_failures integer,
    p_lock_seconds integer, p_addr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s staff%ROWTYPE;
	r text;
BEGIN
	SELECT * INTO s FROM staff WHERE id = p_staff_id FOR UPDATE;
	IF NOT FOUND THEN
		r := 'failed';
	ELSIF s.locked_until IS NOT NULL AND s.locked_until > now() THEN
		r := CASE WHEN p_ok THEN 'locked' ELSE 'failed' END;
	ELSIF NOT p_ok THEN
		IF s.failed_logins + 1 >= p_max_failures THEN
			UPDATE staff SET failed_logins = 0, locked_until =
			    now() + make_interval(secs => p_lock_seconds)
			WHERE id = p_staff_id;
			INSERT INTO audit_log (actor, action, detail)
			VALUES ('staff:' || s.username, 'staff.locked',
			    jsonb_build_object('seconds', p_lock_seconds));
		ELSE
			UPDATE staff SET failed_logins = failed_logins + 1
			WHERE id = p_staff_id;
		END IF;
		r := 'failed';
	ELSE
		r := 'ok';
	END IF;
	IF r <> 'ok' OR p_factor = 'totp' THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('staff:' || coalesce(s.username, p_username),
		    CASE WHEN r = 'ok' THEN 'staff.login'
			ELSE 'staff.login_failed' END,
		    jsonb_build_object('factor', p_factor, 'outcome', r,
			'addr', p_addr));
	END IF;
	RETURN r;
END;
$$;

-- TOTP step: p_step the time step the code matches (NULL: none); a step
-- is accepted once per member. Success resets the failures and opens a
-- session (p_session_hash, idle p_idle seconds).
CREATE OR REPLACE FUNCTION staff_login_totp(p_staff_id bigint,
    p_step bigint, p_max_failures integer, p_lock_seconds integer,
    p_session_hash bytea, p_idle integer, p_addr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	fresh boolean;
	r text;
BEGIN
	PERFORM 1 FROM staff WHERE id = p_staff_id FOR UPDATE;
	fresh := p_step IS NOT NULL AND EXISTS (SELECT 1 FROM staff
	    WHERE id = p_staff_id AND totp_last_step < p_step
		AND status = 'active');
	r := staff_login_factor(p_staff_id, NULL, 'totp', fresh,
	    p_max_failures, p_lock_seconds, p_addr);
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	UPDATE staff SET totp_last_step = p_step, failed_logins = 0,
	    locked_until = NULL
	WHERE id = p_staff_id;
	INSERT INTO web_session (id_hash, subject_kind, subject_id,
	    expires_at)
	VALUES (p_session_hash, 'staff', p_staff_id,
	    now() + make_interval(secs => p_idle));
	RETURN 'ok';
END;
$$;

-- A live staff session (idle timeout renewed on use) of an active
-- member: id, username, display name and role; no row otherwise.
CREATE OR REPLACE FUNCTION staff_session(p_session_hash bytea,
    p_idle integer, OUT staff_id bigint, OUT username text,
    OUT display_name text, OUT role text)
RETURNS SETOF record LANGUAGE sql AS $$
	WITH w AS (
		UPDATE web_session SET last_seen_at = now(),
		    expires_at = now() + make_interval(secs => p_idle)
		WHERE id_hash = p_session_hash AND subject_kind = 'staff'
		    AND expires_at > now()
		RETURNING subject_id
	)
	SELECT s.id, s.username, s.display_name, s.role
	FROM w JOIN staff s ON s.id = w.subject_id
	WHERE s.status = 'active';
$$;

-- Ends a staff session (logout); true when there was one.
CREATE OR REPLACE FUNCTION staff_logout(p_session_hash bytea)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	who text;
BEGIN
	DELETE FROM web_session w USING staff s
	WHERE w.id_hash = p_session_hash AND w.subject_kind = 'staff'
	    AND s.id = w.subject_id
	RETURNING s.username INTO who;
	IF who IS NULL THEN
		RETURN false;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES ('staff:' || who, 'staff.logout', '{}');
	RETURN true;
END;
$$;
