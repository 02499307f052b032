-- A PSU's passkeys and security keys (WebAuthn): the keys page, and the
-- key as the login's second element. The signatures are verified in C
-- (src/common/webauthn.c, with libfido2) before these run; they decide
-- under the PSU's lock what the verdict changes.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- bytea as base64url without padding (WebAuthn's encoding of ids).
CREATE OR REPLACE FUNCTION b64url(p bytea)
RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT translate(encode(p, 'base64'), E'+/=\n', '-_');
$$;

-- The credential ids of a PSU's live keys (allowCredentials of the
-- login's key step): a JSON array, empty when the PSU has none.
CREATE OR REPLACE FUNCTION psu_key_ids(p_psu_id bigint)
RETURNS json LANGUAGE sql STABLE AS $$
	SELECT coalesce(json_agg(b64url(credential_id) ORDER BY id), '[]')
	FROM psu_key WHERE psu_id = p_psu_id AND removed_at IS NULL;
$$;

-- The keys page: the PSU of a live session (NULL: none), the user
-- handle and name for a new key's registration, and the live keys.
CREATE OR REPLACE FUNCTION psu_keys(p_session_hash bytea, p_idle integer,
    OUT psu_id bigint, OUT username text, OUT key_handle uuid,
    OUT keys json)
LANGUAGE plpgsql AS $$
BEGIN
	psu_id := session_psu(p_session_hash, p_idle);
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	SELECT p.username, p.key_handle INTO username, key_handle
	FROM psu p WHERE p.id = psu_keys.psu_id;
	SELECT coalesce(json_agg(json_build_object(
	    'id', k.id,
	    'name', k.name,
	    'credential_id', b64url(k.credential_id),
	    'created', to_char(k.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'last_used', to_char(k.last_used_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'))
	    ORDER BY k.id), '[]')
	INTO keys
	FROM psu_key k
	WHERE k.psu_id = psu_keys.psu_id AND k.removed_at IS NULL;
END;
$$;

-- Spends a WebAuthn challenge (its SHA-256) for p_ttl seconds, the life
-- of the sealed step it came from. false: spent before.
CREATE OR REPLACE FUNCTION webauthn_challenge_spend(p_hash bytea,
    p_ttl integer)
RETURNS boolean LANGUAGE sql AS $$
	INSERT INTO webauthn_challenge (challenge_hash, expires_at)
	VALUES (p_hash, now() + make_interval(secs => p_ttl))
	ON CONFLICT (challenge_hash) DO NOTHING
	RETURNING true;
$$;

-- Registers a key the PSU of a live session has just made (its
-- attestation verified in C). result: ok, no_session, used (the page's
-- challenge served a key already: posted twice), duplicate (the
-- credential is registered already), too_many (p_max live keys).
CREATE OR REPLACE FUNCTION psu_key_add(p_session_hash bytea, p_idle integer,
    p_psu_id bigint, p_challenge_hash bytea, p_challenge_ttl integer,
    p_credential_id bytea, p_alg integer, p_public_key bytea,
    p_sign_count bigint, p_aaguid uuid, p_name text, p_max integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
BEGIN
	IF session_psu(p_session_hash, p_idle) IS DISTINCT FROM p_psu_id THEN
		RETURN 'no_session';
	END IF;
	PERFORM 1 FROM psu WHERE id = p_psu_id FOR UPDATE;
	IF webauthn_challenge_spend(p_challenge_hash, p_challenge_ttl)
	    IS NULL THEN
		RETURN 'used';
	END IF;
	IF EXISTS (SELECT 1 FROM psu_key
	    WHERE credential_id = p_credential_id) THEN
		RETURN 'duplicate';
	END IF;
	IF (SELECT count(*) FROM psu_key WHERE psu_id = p_psu_id
	    AND removed_at IS NULL) >= p_max THEN
		RETURN 'too_many';
	END IF;
	INSERT INTO psu_key (psu_id, credential_id, alg, public_key,
	    sign_count, aaguid, name)
	VALUES (p_psu_id, p_credential_id, p_alg, p_public_key, p_sign_count,
	    p_aaguid, p_name)
	RETURNING id INTO v_id;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.key_added',
	    jsonb_build_object('key', v_id, 'name', p_name,
		'aaguid', p_aaguid, 'alg', p_alg)
	FROM psu WHERE id = p_psu_id;
	RETURN 'ok';
END;
$$;

-- The PSU of a live session removes a key of theirs. result: ok (also
-- when removed already by this PSU: posted twice), no_session, unknown.
CREATE OR REPLACE FUNCTION psu_key_remove(p_session_hash bytea,
    p_idle integer, p_psu_id bigint, p_key_id bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n integer;
BEGIN
	IF session_psu(p_session_hash, p_idle) IS DISTINCT FROM p_psu_id THEN
		RETURN 'no_session';
	END IF;
	UPDATE psu_key SET removed_at = now(), removed_why = 'psu'
	WHERE id = p_key_id AND psu_id = p_psu_id AND removed_at IS NULL;
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n = 0 THEN
		IF EXISTS (SELECT 1 FROM psu_key WHERE id = p_key_id
		    AND psu_id = p_psu_id AND removed_why = 'psu') THEN
			RETURN 'ok';
		END IF;
		RETURN 'unknown';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.key_removed',
	    jsonb_build_object('key', p_key_id, 'why', 'psu')
	FROM psu WHERE id = p_psu_id;
	RETURN 'ok';
END;
$$;

-- One use of a PSU's key whose signature C checked (p_ok) over the
-- challenge with SHA-256 p_challenge_hash, under the PSU's lock (the
-- caller's): p_key_id the PSU's live key (NULL: none), p_count the
-- assertion's signature counter. Success spends the challenge (for
-- p_challenge_ttl seconds), keeps the counter and resets the PSU's
-- failures. result:
--   ok
--   used     the challenge was spent before: refused, no failure counted
--   failed   a bad signature, a key not the PSU's (or removed), or a
--            counter that did not go up: then the key was cloned, and
--            it is removed (RTS Art. 4(3)(a): the failure looks the
--            same; the audit row names the counter)
--   locked
CREATE OR REPLACE FUNCTION psu_key_use(p_psu_id bigint, p_key_id bigint,
    p_ok boolean, p_count bigint, p_challenge_hash bytea,
    p_challenge_ttl integer, p_max_failures integer,
    p_lock_seconds integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	k psu_key%ROWTYPE;
	r text;
BEGIN
	IF EXISTS (SELECT 1 FROM webauthn_challenge
	    WHERE challenge_hash = p_challenge_hash) THEN
		PERFORM login_used_audit(p_psu_id, 'key');
		RETURN 'used';
	END IF;
	SELECT * INTO k FROM psu_key
	WHERE id = p_key_id AND psu_id = p_psu_id AND removed_at IS NULL
	FOR UPDATE;
	IF NOT FOUND OR NOT p_ok THEN
		RETURN login_factor(p_psu_id, false, p_max_failures,
		    p_lock_seconds, true, 'key');
	END IF;
	-- WebAuthn 6.1.1: a counter that does not go up (where the key
	-- keeps one) means two copies of the key exist.
	IF (p_count <> 0 OR k.sign_count <> 0) AND p_count <= k.sign_count
	    THEN
		UPDATE psu_key SET removed_at = now(), removed_why = 'counter'
		WHERE id = k.id;
		INSERT INTO audit_log (actor, action, detail)
		SELECT 'psu:' || username, 'psu.key_removed',
		    jsonb_build_object('key', k.id, 'why', 'counter',
			'stored', k.sign_count, 'presented', p_count)
		FROM psu WHERE id = p_psu_id;
		RETURN login_factor(p_psu_id, false, p_max_failures,
		    p_lock_seconds, true, 'key');
	END IF;
	r := login_factor(p_psu_id, true, p_max_failures, p_lock_seconds,
	    true, 'key');
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	PERFORM webauthn_challenge_spend(p_challenge_hash, p_challenge_ttl);
	UPDATE psu_key SET sign_count = p_count, last_used_at = now()
	WHERE id = k.id;
	RETURN 'ok';
END;
$$;

-- The key step of one authorisation request (flow), after the password
-- (psu_key_use has the parameters of the key). Success opens the flow's
-- session as login_totp_flow does; the results are the same:
--   ok       the session was opened now
--   repeat   this flow's challenge, presented again (a double click,
--            the back button, or someone replaying the assertion): no
--            failure counted, no second session; the caller shows the
--            first result only to the browser already holding it
--   used     a challenge spent, but not by this flow's login: refused,
--            no failure counted
--   expired  a repeat whose session has ended
--   failed, locked (psu_key_use)
CREATE OR REPLACE FUNCTION login_key_flow(p_flow_hash bytea,
    p_psu_id bigint, p_key_id bigint, p_ok boolean, p_count bigint,
    p_challenge_hash bytea, p_challenge_ttl integer,
    p_max_failures integer, p_lock_seconds integer, p_session_hash bytea,
    p_session_idle integer, p_flow_ttl integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	PERFORM 1 FROM psu WHERE id = p_psu_id FOR UPDATE;
	IF EXISTS (SELECT 1 FROM webauthn_challenge
	    WHERE challenge_hash = p_challenge_hash) AND EXISTS (SELECT 1
	    FROM auth_flow WHERE flow_hash = p_flow_hash
		AND psu_id = p_psu_id AND totp_step IS NULL
		AND expires_at - now() > '0') THEN
		IF EXISTS (SELECT 1 FROM psu WHERE id = p_psu_id
		    AND locked_until > now()) THEN
			RETURN 'locked';
		END IF;
		IF NOT EXISTS (SELECT 1 FROM web_session
		    WHERE id_hash = p_session_hash AND subject_kind = 'psu'
			AND subject_id = p_psu_id
			AND expires_at - now() > '0') THEN
			RETURN 'expired';
		END IF;
		RETURN 'repeat';
	END IF;
	r := psu_key_use(p_psu_id, p_key_id, p_ok, p_count, p_challenge_hash,
	    p_challenge_ttl, p_max_failures, p_lock_seconds);
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.login',
	    jsonb_build_object('factor', 'key', 'outcome', 'ok',
		'key', p_key_id)
	FROM psu WHERE id = p_psu_id;
	PERFORM login_session_open(p_flow_hash, p_psu_id, NULL,
	    p_session_hash, p_session_idle, p_flow_ttl);
	RETURN 'ok';
END;
$$;

-- ---- Staff: a PSU's lost key, removed with four eyes ----------------

-- A PSU's keys for the staff PSU page: the live ones, each with its
-- pending removal (who proposed it, when, why), newest first.
CREATE OR REPLACE FUNCTION staff_psu_keys_json(p_psu_id bigint)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT coalesce(jsonb_agg(jsonb_build_object(
	    'id', k.id, 'name', k.name,
	    'created', to_char(k.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'last_used', to_char(k.last_used_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'pending', k.removal_proposed_by IS NOT NULL,
	    'proposed_by', k.removal_proposed_by,
	    'reason', k.removal_reason) ORDER BY k.id DESC), '[]')
	FROM psu_key k
	WHERE k.psu_id = p_psu_id AND k.removed_at IS NULL;
$$;

-- One step of a staff removal of a PSU's key (p_actor 'staff:NAME'):
--   propose   with p_reason (1 to 200 characters), for a live key
--             without a pending proposal
--   withdraw  a pending proposal (anyone)
--   confirm   a pending proposal, by another member than its proposer:
--             the key is removed (never signs again)
-- Each step is an audit row. result: ok, no_key (no live key), no_reason,
-- bad_status (nothing pending, or pending already), same_person.
CREATE OR REPLACE FUNCTION staff_psu_key_action(p_actor text,
    p_action text, p_key_id bigint, p_reason text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	k psu_key%ROWTYPE;
	v_psu text;
BEGIN
	SELECT * INTO k FROM psu_key
	WHERE id = p_key_id AND removed_at IS NULL FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_key';
	END IF;
	SELECT username INTO v_psu FROM psu WHERE id = k.psu_id;
	IF p_action = 'propose' THEN
		IF length(btrim(coalesce(p_reason, ''))) NOT BETWEEN 1 AND 200
		    THEN
			RETURN 'no_reason';
		END IF;
		IF k.removal_proposed_by IS NOT NULL THEN
			RETURN 'bad_status';
		END IF;
		UPDATE psu_key SET removal_proposed_by = p_actor,
		    removal_proposed_at = now(),
		    removal_reason = btrim(p_reason)
		WHERE id = k.id;
	ELSIF p_action = 'withdraw' THEN
		IF k.removal_proposed_by IS NULL THEN
			RETURN 'bad_status';
		END IF;
		UPDATE psu_key SET removal_proposed_by = NULL,
		    removal_proposed_at = NULL, removal_reason = NULL
		WHERE id = k.id;
	ELSIF p_action = 'confirm' THEN
		IF k.removal_proposed_by IS NULL THEN
			RETURN 'bad_status';
		END IF;
		IF k.removal_proposed_by = p_actor THEN
			RETURN 'same_person';
		END IF;
		UPDATE psu_key SET removed_at = now(), removed_why = 'staff'
		WHERE id = k.id;
		INSERT INTO audit_log (actor, action, detail)
		VALUES (p_actor, 'psu.key_removed', jsonb_build_object(
		    'psu', v_psu, 'key', k.id, 'why', 'staff',
		    'proposed_by', k.removal_proposed_by,
		    'reason', k.removal_reason));
		RETURN 'ok';
	ELSE
		RETURN 'bad_status';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'psu.key_removal', jsonb_strip_nulls(
	    jsonb_build_object('psu', v_psu, 'key', k.id, 'step', p_action,
		'reason', CASE WHEN p_action = 'propose' THEN btrim(p_reason)
		    END)));
	RETURN 'ok';
END;
$$;
