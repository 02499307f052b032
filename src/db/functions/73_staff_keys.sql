-- Bank staff's FIDO2 security keys (WebAuthn): registration (attested,
-- then approved by another admin), the login's key step, removal. The
-- attestation and signatures are verified in C (src/common/webauthn.c,
-- webauthn_trust.c) before these run; they decide under the member's
-- lock what the verdict changes. Every step is an audit row.

-- The credential ids of a member's approved keys (allowCredentials of
-- the login's key step): a JSON array, empty when there are none.
CREATE OR REPLACE FUNCTION staff_key_ids(p_staff_id bigint)
RETURNS json LANGUAGE sql STABLE AS $$
	SELECT coalesce(json_agg(b64url(credential_id) ORDER BY id), '[]')
	FROM staff_key WHERE staff_id = p_staff_id
	    AND approved_at IS NOT NULL AND removed_at IS NULL;
$$;

-- One key as the keys page shows it.
CREATE OR REPLACE FUNCTION staff_key_json(k staff_key)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('id', k.id, 'name', k.name,
	    'member', s.username, 'aaguid', k.aaguid,
	    'credential_id', b64url(k.credential_id),
	    'live', k.approved_at IS NOT NULL,
	    'approved_by', k.approved_by,
	    'created', to_char(k.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'last_used', to_char(k.last_used_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'))
	FROM staff s WHERE s.id = k.staff_id;
$$;

-- The keys page of a member: the user handle for a new key, the
-- member's own keys (waiting for approval, or live), and for an admin
-- the other members' keys (to approve, refuse or remove).
CREATE OR REPLACE FUNCTION staff_keys_json(p_staff_id bigint,
    p_admin boolean)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object(
	    'handle', (SELECT key_handle FROM staff WHERE id = p_staff_id),
	    'mine', (SELECT coalesce(jsonb_agg(staff_key_json(k)
		ORDER BY k.id), '[]') FROM staff_key k
		WHERE k.staff_id = p_staff_id AND k.removed_at IS NULL),
	    'others', CASE WHEN p_admin THEN (SELECT coalesce(jsonb_agg(
		staff_key_json(k) ORDER BY k.approved_at IS NOT NULL, k.id),
		'[]') FROM staff_key k
		WHERE k.staff_id <> p_staff_id AND k.removed_at IS NULL)
		ELSE '[]' END);
$$;

-- Registers a key a member has just made (its attestation, chain and
-- AAGUID verified in C). It waits for another admin's approval. result:
-- ok, used (the page's challenge served a key already: posted twice),
-- duplicate (the credential is registered already), too_many (p_max
-- keys not removed).
CREATE OR REPLACE FUNCTION staff_key_add(p_staff_id bigint,
    p_challenge_hash bytea, p_challenge_ttl integer, p_credential_id bytea,
    p_alg integer, p_public_key bytea, p_sign_count bigint, p_aaguid uuid,
    p_name text, p_max integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
BEGIN
	PERFORM 1 FROM staff WHERE id = p_staff_id FOR UPDATE;
	IF webauthn_challenge_spend(p_challenge_hash, p_challenge_ttl)
	    IS NULL THEN
		RETURN 'used';
	END IF;
	IF EXISTS (SELECT 1 FROM staff_key
	    WHERE credential_id = p_credential_id) THEN
		RETURN 'duplicate';
	END IF;
	IF (SELECT count(*) FROM staff_key WHERE staff_id = p_staff_id
	    AND removed_at IS NULL) >= p_max THEN
		RETURN 'too_many';
	END IF;
	INSERT INTO staff_key (staff_id, credential_id, alg, public_key,
	    sign_count, aaguid, name)
	VALUES (p_staff_id, p_credential_id, p_alg, p_public_key,
	    p_sign_count, p_aaguid, p_name)
	RETURNING id INTO v_id;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'staff:' || username, 'staff.key_added',
	    jsonb_build_object('key', v_id, 'name', p_name,
		'aaguid', p_aaguid, 'alg', p_alg)
	FROM staff WHERE id = p_staff_id;
	RETURN 'ok';
END;
$$;

-- One step on a staff key by a member (p_actor_id):
--   approve   an admin approves another member's new key: from now on
--             it signs the member's logins (four eyes)
--   refuse    an admin refuses another member's new key
--   withdraw  the member takes back a key of theirs not yet approved
--   remove    an admin removes another member's approved key (lost,
--             or the member left): it never signs again
-- result: ok, no_key (no such key waiting or live), not_admin,
-- same_person (an admin's step on a key of their own), bad_status.
CREATE OR REPLACE FUNCTION staff_key_action(p_actor_id bigint,
    p_action text, p_key_id bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	k staff_key%ROWTYPE;
	a staff%ROWTYPE;
	v_member text;
BEGIN
	SELECT * INTO a FROM staff WHERE id = p_actor_id AND status = 'active';
	SELECT * INTO k FROM staff_key
	WHERE id = p_key_id AND removed_at IS NULL FOR UPDATE;
	IF NOT FOUND OR a.id IS NULL THEN
		RETURN 'no_key';
	END IF;
	SELECT username INTO v_member FROM staff WHERE id = k.staff_id;
	IF p_action = 'withdraw' THEN
		IF k.staff_id <> a.id THEN
			RETURN 'no_key';
		END IF;
		IF k.approved_at IS NOT NULL THEN
			RETURN 'bad_status';
		END IF;
		UPDATE staff_key SET removed_at = now(), removed_by = 'staff:'
		    || a.username, removed_why = 'withdrawn'
		WHERE id = k.id;
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('staff:' || a.username, 'staff.key_withdrawn',
		    jsonb_build_object('key', k.id));
		RETURN 'ok';
	END IF;
	IF p_action NOT IN ('approve', 'refuse', 'remove') THEN
		RETURN 'bad_status';
	END IF;
	IF a.role <> 'admin' THEN
		RETURN 'not_admin';
	END IF;
	IF k.staff_id = a.id THEN
		RETURN 'same_person';
	END IF;
	IF (p_action = 'remove') <> (k.approved_at IS NOT NULL) THEN
		RETURN 'bad_status';
	END IF;
	IF p_action = 'approve' THEN
		UPDATE staff_key SET approved_by = 'staff:' || a.username,
		    approved_at = now()
		WHERE id = k.id;
	ELSE
		UPDATE staff_key SET removed_at = now(), removed_by = 'staff:'
		    || a.username, removed_why = CASE p_action
			WHEN 'refuse' THEN 'refused' ELSE 'removed' END
		WHERE id = k.id;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES ('staff:' || a.username, CASE p_action
	    WHEN 'approve' THEN 'staff.key_approved'
	    WHEN 'refuse' THEN 'staff.key_refused'
	    ELSE 'staff.key_removed' END,
	    jsonb_build_object('member', v_member, 'key', k.id,
		'name', k.name, 'aaguid', k.aaguid));
	RETURN 'ok';
END;
$$;

-- An admin holding an approved key logs in with it, not with the TOTP
-- code (staff_login_totp refuses the code).
CREATE OR REPLACE FUNCTION staff_key_required(p_staff_id bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
	SELECT EXISTS (SELECT 1 FROM staff s JOIN staff_key k
	    ON k.staff_id = s.id
	    WHERE s.id = p_staff_id AND s.role = 'admin'
		AND k.approved_at IS NOT NULL AND k.removed_at IS NULL);
$$;

-- The login's key step (after the password): p_key_id the member's
-- approved key whose row the service read (NULL: none), p_ok its
-- signature's verdict, p_count the assertion's counter, p_challenge_hash
-- the SHA-256 of the challenge (spent for p_challenge_ttl seconds).
-- Success opens the session p_session_hash (idle p_idle seconds), whose
-- id the service derives from the login form's flow and the member.
-- result, as of staff_login_totp:
--   ok, repeat (this form's challenge again, the session exists),
--   used (a challenge spent, without that session: refused, no failure
--   counted), expired, failed (a bad signature, a key not the member's,
--   or a counter that went back: then the key is removed), locked
CREATE OR REPLACE FUNCTION staff_login_key(p_staff_id bigint,
    p_key_id bigint, p_ok boolean, p_count bigint, p_challenge_hash bytea,
    p_challenge_ttl integer, p_max_failures integer,
    p_lock_seconds integer, p_session_hash bytea, p_idle integer,
    p_addr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	k staff_key%ROWTYPE;
	v_who text;
	v_found boolean;
	r text;
BEGIN
	SELECT 'staff:' || username INTO v_who FROM staff
	WHERE id = p_staff_id FOR UPDATE;
	IF EXISTS (SELECT 1 FROM webauthn_challenge
	    WHERE challenge_hash = p_challenge_hash) THEN
		RETURN staff_login_again(p_staff_id, 'key', p_session_hash,
		    p_addr);
	END IF;
	SELECT * INTO k FROM staff_key
	WHERE id = p_key_id AND staff_id = p_staff_id
	    AND approved_at IS NOT NULL AND removed_at IS NULL
	FOR UPDATE;
	v_found := FOUND;
	IF v_found AND p_ok AND (p_count <> 0 OR k.sign_count <> 0) AND
	    p_count <= k.sign_count THEN
		-- WebAuthn 6.1.1: two copies of the key exist.
		UPDATE staff_key SET removed_at = now(),
		    removed_by = v_who, removed_why = 'counter'
		WHERE id = k.id;
		INSERT INTO audit_log (actor, action, detail)
		VALUES (v_who, 'staff.key_removed', jsonb_build_object(
		    'key', k.id, 'why', 'counter', 'stored', k.sign_count,
		    'presented', p_count));
		p_ok := false;
	END IF;
	r := staff_login_factor(p_staff_id, NULL, 'key', v_found AND p_ok AND
	    EXISTS (SELECT 1 FROM staff WHERE id = p_staff_id
		AND status = 'active'), p_max_failures, p_lock_seconds, p_addr);
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	PERFORM webauthn_challenge_spend(p_challenge_hash, p_challenge_ttl);
	UPDATE staff_key SET sign_count = p_count, last_used_at = now()
	WHERE id = k.id;
	UPDATE staff SET failed_logins = 0, locked_until = NULL
	WHERE id = p_staff_id;
	INSERT INTO web_session (id_hash, subject_kind, subject_id,
	    expires_at)
	VALUES (p_session_hash, 'staff', p_staff_id,
	    now() + make_interval(secs => p_idle));
	RETURN 'ok';
END;
$$;
