-- OAuth: clients, tokens, grants, the bearer check, PSU login and consent.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- The OAuth and login state changes, each one statement from the worker's
-- point of view (one round trip, one transaction). Digests of secrets are
-- computed by the service; the database never sees a secret.

-- Client lookup for the token, PAR and revoke endpoints, counting the
-- caller's address against the token rate limit (p_limit <= 0: no
-- limit). The secret's stored form: secret_salt and secret_key_id NULL
-- for the legacy unsalted SHA-256 (src/common/client_secret.h). The
-- client's authentication method (migration 194) and its TPP's
-- organizationIdentifier, which a tls_client_auth client's certificate
-- must carry.
CREATE OR REPLACE FUNCTION token_client(p_client_id text, p_addr text, p_limit integer,
    OUT rate_ok boolean, OUT secret_hash bytea, OUT access_ttl integer,
    OUT active boolean, OUT secret_salt bytea, OUT secret_key_id text,
    OUT auth_method text, OUT org_id text, OUT jwks text)
LANGUAGE plpgsql AS $$
BEGIN
	rate_ok := true;
	IF p_limit > 0 THEN
		rate_ok := rate_hit('token:' || p_addr, p_limit);
	END IF;
	SELECT c.secret_hash, c.access_ttl,
	    c.status = 'active' AND t.status = 'active', c.secret_salt,
	    c.secret_key_id, c.auth_method, t.org_id, c.jwks::text
	INTO secret_hash, access_ttl, active, secret_salt, secret_key_id,
	    auth_method, org_id, jwks
	FROM oauth_client c JOIN tpp t ON t.id = c.tpp_id
	WHERE c.client_id = p_client_id;
END;
$$;

-- Issues an access and a refresh token for a consent, in family p_family;
-- the access token only when p_refresh_hash is NULL (a refresh grant
-- without rotation). Returns the access token's lifetime in seconds:
-- p_access_ttl, or less where the consent ends sooner (migration 196).
-- PL/pgSQL, like every function a grant calls: a SQL-language function
-- that PostgreSQL cannot inline is parsed and planned again on every call
-- (this one, oauth_client_active and oauth_scope_answer took half of the
-- database's CPU in a refresh grant, tests/bench/README.md); PL/pgSQL
-- keeps its statements' plans for the session.
CREATE OR REPLACE FUNCTION token_issue(p_family uuid, p_client_id text,
    p_consent_id uuid, p_scopes text[], p_access_hash bytea,
    p_refresh_hash bytea, p_access_ttl integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	v_end timestamptz;
	v_ttl integer;
BEGIN
	-- The consent's last day ends at valid_until + 1 (migration 196).
	SELECT (c.valid_until + 1)::timestamptz INTO v_end
	FROM consent c WHERE c.id = p_consent_id;
	v_ttl := least(p_access_ttl,
	    greatest(1, floor(extract(epoch FROM v_end - now()))::integer));
	INSERT INTO token (token_hash, kind, family, client_id, consent_id,
	    scopes, expires_at)
	SELECT p_access_hash, 'access', p_family, p_client_id, p_consent_id,
	    p_scopes, now() + make_interval(secs => v_ttl)
	UNION ALL
	SELECT p_refresh_hash, 'refresh', p_family, p_client_id, p_consent_id,
	    p_scopes, v_end
	WHERE p_refresh_hash IS NOT NULL;
	RETURN v_ttl;
END;
$$;

-- Revokes a family, including what a grant of it in flight issues. Such
-- a grant holds its refresh token's row lock until it commits the next
-- tokens, which a statement begun before that commit would not see. So
-- every refresh token of the family is locked first, again and again
-- until no new one appears; then no grant of the family is in flight or
-- can start before this transaction ends, and the UPDATE (a statement of
-- its own, with a new snapshot) sees all the family holds.
CREATE OR REPLACE FUNCTION token_revoke_family(p_family uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	locked integer := -1;
	n integer;
BEGIN
	LOOP
		SELECT count(*) INTO n FROM (SELECT 1 FROM token
		    WHERE family = p_family AND kind = 'refresh' FOR UPDATE) r;
		EXIT WHEN n = locked;
		locked := n;
	END LOOP;
	UPDATE token SET revoked_at = now()
	WHERE family = p_family AND revoked_at IS NULL;
END;
$$;

-- The scope of a token answer: the granted scopes; for a consent of the
-- standard interface (integrated OAuth approach) "AIS:{consentId}", as the
-- TPP asked (src/bg/README.md). The tokens keep the scopes they grant.
CREATE OR REPLACE FUNCTION oauth_scope_answer(c consent, p_scopes text[])
RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF c.surface = 'bg' THEN
		RETURN 'AIS:' || c.id;
	END IF;
	RETURN array_to_string(p_scopes, ' ');
END;
$$;

-- Authorisation code grant. result: ok, invalid_grant.
CREATE OR REPLACE FUNCTION oauth_code_grant(p_code_hash bytea, p_client_id text,
    p_redirect_uri text, p_verifier_s256 text, p_access_hash bytea,
    p_refresh_hash bytea, p_access_ttl integer,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
DECLARE
	c auth_code%ROWTYPE;
	cs consent%ROWTYPE;
BEGIN
	result := 'invalid_grant';
	SELECT * INTO c FROM auth_code WHERE code_hash = p_code_hash
	FOR UPDATE;
	IF NOT FOUND THEN
		description := 'The authorization code is invalid.';
		RETURN;
	END IF;
	IF c.used_at IS NOT NULL THEN
		-- RFC 6749 4.1.2: a replayed code revokes what it issued.
		PERFORM token_revoke_family(c.family);
		description := 'The authorization code was already used.';
		RETURN;
	END IF;
	IF c.client_id <> p_client_id THEN
		description := 'The authorization code was issued to another client.';
		RETURN;
	END IF;
	UPDATE auth_code SET used_at = now() WHERE code_hash = p_code_hash;
	IF c.expires_at <= now() THEN
		description := 'The authorization code has expired.';
		RETURN;
	END IF;
	IF p_redirect_uri IS DISTINCT FROM c.redirect_uri THEN
		description := 'redirect_uri does not match the authorization request.';
		RETURN;
	END IF;
	IF c.code_challenge IS NOT NULL AND
	    p_verifier_s256 IS DISTINCT FROM c.code_challenge THEN
		description := 'code_verifier does not match the code_challenge.';
		RETURN;
	END IF;
	IF c.code_challenge IS NULL AND p_verifier_s256 IS NOT NULL THEN
		description := 'code_verifier sent without a code_challenge.';
		RETURN;
	END IF;
	SELECT * INTO cs FROM consent WHERE id = c.consent_id;
	IF cs.status <> 'valid' OR cs.valid_until < current_date THEN
		description := 'The consent is no longer valid.';
		RETURN;
	END IF;
	expires_in := token_issue(c.family, p_client_id, c.consent_id,
	    c.scopes, p_access_hash, p_refresh_hash, p_access_ttl);
	result := 'ok';
	scope := oauth_scope_answer(cs, c.scopes);
END;
$$;

-- Refresh grant with rotation: a spent refresh token presented again
-- revokes its whole family (RFC 9700 4.14.2).
CREATE OR REPLACE FUNCTION oauth_refresh_grant(p_refresh_hash bytea, p_client_id text,
    p_access_hash bytea, p_new_refresh_hash bytea, p_access_ttl integer,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
DECLARE
	t token%ROWTYPE;
	cs consent%ROWTYPE;
BEGIN
	result := 'invalid_grant';
	SELECT * INTO t FROM token
	WHERE token_hash = p_refresh_hash AND kind = 'refresh' FOR UPDATE;
	IF NOT FOUND OR t.client_id <> p_client_id THEN
		description := 'The refresh token is invalid.';
		RETURN;
	END IF;
	IF t.used_at IS NOT NULL THEN
		PERFORM token_revoke_family(t.family);
		description := 'The refresh token was already used.';
		RETURN;
	END IF;
	IF t.revoked_at IS NOT NULL THEN
		description := 'The refresh token was revoked.';
		RETURN;
	END IF;
	IF t.expires_at <= now() THEN
		description := 'The refresh token has expired.';
		RETURN;
	END IF;
	SELECT * INTO cs FROM consent WHERE id = t.consent_id;
	IF cs.status <> 'valid' OR cs.valid_until < current_date THEN
		description := 'The consent is no longer valid.';
		RETURN;
	END IF;
	UPDATE token SET used_at = now() WHERE token_hash = p_refresh_hash;
	expires_in := token_issue(t.family, p_client_id, t.consent_id,
	    t.scopes, p_access_hash, p_new_refresh_hash, p_access_ttl);
	result := 'ok';
	scope := oauth_scope_answer(cs, t.scopes);
END;
$$;

-- RFC 7009: revokes a token of this client; a refresh token takes its
-- family with it. Unknown tokens are not an error.
CREATE OR REPLACE FUNCTION oauth_revoke(p_token_hash bytea, p_client_id text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	t token%ROWTYPE;
BEGIN
	SELECT * INTO t FROM token WHERE token_hash = p_token_hash
	    AND client_id = p_client_id;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	IF t.kind = 'refresh' THEN
		PERFORM token_revoke_family(t.family);
	ELSE
		UPDATE token SET revoked_at = now()
		WHERE token_hash = p_token_hash AND revoked_at IS NULL;
	END IF;
END;
$$;

-- The token endpoint may authenticate a client from a worker's cache of
-- recently verified secret digests and JWK Sets (src/oauth/client_auth.c,
-- only while no token rate limit is configured), saving a round trip on
-- the hot path.
-- The grants therefore check here, in the same transaction, that the
-- client and its TPP are still active: a suspension takes effect at once.
CREATE OR REPLACE FUNCTION oauth_client_active(p_client_id text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
	-- PL/pgSQL: a SQL function with a sub-select is never inlined, so it
	-- would be planned on every call.
	RETURN EXISTS (SELECT 1 FROM oauth_client c JOIN tpp t
	    ON t.id = c.tpp_id WHERE c.client_id = p_client_id
	    AND c.status = 'active' AND t.status = 'active');
END;
$$;

-- A client assertion (private_key_jwt) taken by a grant of the token
-- endpoint, in the grant's transaction (migration 200): p_jti_hash and
-- p_expires_at as for oauth_assertion_spend, p_keys_hash the SHA-256 of
-- the client's JWK Set as the service verified the assertion against it
-- (the text of oauth_client.jwks; the service may have it from its
-- cache). result and description are NULL when there is no assertion
-- (p_jti_hash NULL) or it is now spent; else the grant answers them:
--	keys_changed	the client's JWK Set (or its method) is no longer
--			the one the service verified against; never sent to
--			the client: the service forgets its cached keys and
--			authenticates the client again
--	invalid_client	the jti was used before
CREATE OR REPLACE FUNCTION oauth_assertion_take(p_client_id text,
    p_jti_hash bytea, p_expires_at timestamptz, p_keys_hash bytea,
    OUT result text, OUT description text)
LANGUAGE plpgsql AS $$
BEGIN
	IF p_jti_hash IS NULL THEN
		RETURN;
	END IF;
	PERFORM 1 FROM oauth_client
	WHERE client_id = p_client_id AND auth_method = 'private_key_jwt'
	    AND sha256(convert_to(jwks::text, 'UTF8')) = p_keys_hash;
	IF NOT FOUND THEN
		result := 'keys_changed';
		description := 'The client''s keys changed.';
		RETURN;
	END IF;
	IF NOT oauth_assertion_spend(p_client_id, p_jti_hash,
	    p_expires_at) THEN
		result := 'invalid_client';
		description := 'The client assertion is refused: its jti was '
		    'used before.';
	END IF;
END;
$$;

-- The token endpoint's code grant. In all three grants of the token
-- endpoint, the p_assertion_ parameters are a client assertion's
-- (oauth_assertion_take), NULL for other clients, whose grants skip the
-- call (a nested query: microseconds on every Basic grant).
CREATE OR REPLACE FUNCTION oauth_code_grant_bound(p_code_hash bytea,
    p_client_id text, p_redirect_uri text, p_verifier_s256 text,
    p_access_hash bytea, p_refresh_hash bytea, p_access_ttl integer,
    p_x5t text, p_assertion_jti bytea DEFAULT NULL,
    p_assertion_until timestamptz DEFAULT NULL,
    p_assertion_keys bytea DEFAULT NULL,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
DECLARE
	v_jkt text;
BEGIN
	IF NOT oauth_client_active(p_client_id) THEN
		result := 'invalid_client';
		description := 'Client authentication failed.';
		RETURN;
	END IF;
	IF p_assertion_jti IS NOT NULL THEN
		SELECT a.result, a.description INTO result, description
		FROM oauth_assertion_take(p_client_id, p_assertion_jti,
		    p_assertion_until, p_assertion_keys) a;
		IF result IS NOT NULL THEN
			RETURN;
		END IF;
	END IF;
	-- A code bound to a DPoP key (dpop_jkt, RFC 9449 10) needs a proof
	-- of that key; refused, the code stays unspent.
	SELECT dpop_jkt INTO v_jkt FROM auth_code
	WHERE code_hash = p_code_hash;
	IF v_jkt IS NOT NULL AND token_binding_cnf(p_x5t)
	    IS DISTINCT FROM 'jkt:' || v_jkt THEN
		result := 'invalid_grant';
		description := 'The authorization code is bound to a DPoP key: '
		    'send a DPoP proof of that key.';
		RETURN;
	END IF;
	IF NOT dpop_proof_spend(p_x5t) THEN
		result := 'invalid_dpop_proof';
		description := 'The DPoP proof was used before.';
		RETURN;
	END IF;
	SELECT g.result, g.scope, g.expires_in, g.description
	INTO result, scope, expires_in, description
	FROM oauth_code_grant(p_code_hash, p_client_id, p_redirect_uri,
	    p_verifier_s256, p_access_hash, p_refresh_hash, p_access_ttl) g;
	IF result = 'ok' AND p_x5t IS NOT NULL THEN
		UPDATE token SET cnf = token_binding_cnf(p_x5t)
		WHERE token_hash = p_access_hash;
	END IF;
END;
$$;

-- The token endpoint's refresh grant (src/oauth/token.c). rotated: the
-- answer carries the new refresh token (p_new_refresh_hash's); false for
-- a client without rotation (oauth_client.refresh_rotation, migration
-- 192), whose refresh token stays as it is and is answered again.
--
-- The usual case: the client, then one statement that takes the token
-- (and spends it, with rotation) only if it is this client's, unspent,
-- unrevoked and unexpired and its consent valid, then the new tokens.
-- Anything else goes through oauth_refresh_grant, which names the reason
-- and revokes the family of a spent token presented again. Either
-- statement holds the token's row lock until the commit, as
-- oauth_refresh_grant's FOR UPDATE does: a family's revocation
-- (token_revoke_family) waits for a grant in flight, and a second grant
-- of a rotated token waits, then finds it spent. The expiry is compared
-- in a form no index answers (src/db/README.md): "expires_at > now()"
-- there made a kept plan range-scan token_expires, 30 ms a grant.
CREATE OR REPLACE FUNCTION oauth_refresh_grant_bound(p_refresh_hash bytea,
    p_client_id text, p_access_hash bytea, p_new_refresh_hash bytea,
    p_access_ttl integer, p_x5t text, p_assertion_jti bytea DEFAULT NULL,
    p_assertion_until timestamptz DEFAULT NULL,
    p_assertion_keys bytea DEFAULT NULL,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text, OUT rotated boolean)
LANGUAGE plpgsql AS $$
DECLARE
	v_rotation boolean;
	g record;
BEGIN
	SELECT oc.refresh_rotation INTO v_rotation
	FROM oauth_client oc JOIN tpp tp ON tp.id = oc.tpp_id
	WHERE oc.client_id = p_client_id AND oc.status = 'active'
	    AND tp.status = 'active';
	IF NOT FOUND THEN
		result := 'invalid_client';
		description := 'Client authentication failed.';
		RETURN;
	END IF;
	IF p_assertion_jti IS NOT NULL THEN
		SELECT a.result, a.description INTO result, description
		FROM oauth_assertion_take(p_client_id, p_assertion_jti,
		    p_assertion_until, p_assertion_keys) a;
		IF result IS NOT NULL THEN
			rotated := false;
			RETURN;
		END IF;
	END IF;
	IF NOT dpop_proof_spend(p_x5t) THEN
		result := 'invalid_dpop_proof';
		description := 'The DPoP proof was used before.';
		rotated := false;
		RETURN;
	END IF;
	IF v_rotation THEN
		UPDATE token t SET used_at = now()
		FROM consent c
		WHERE t.token_hash = p_refresh_hash AND t.kind = 'refresh'
		    AND t.client_id = p_client_id AND t.used_at IS NULL
		    AND t.revoked_at IS NULL AND t.expires_at - now() > '0'
		    AND c.id = t.consent_id AND c.status = 'valid'
		    AND c.valid_until >= current_date
		RETURNING t.family, t.scopes, c AS consent INTO g;
	ELSE
		SELECT t.family, t.scopes, c AS consent INTO g
		FROM token t JOIN consent c ON c.id = t.consent_id
		WHERE t.token_hash = p_refresh_hash AND t.kind = 'refresh'
		    AND t.client_id = p_client_id AND t.used_at IS NULL
		    AND t.revoked_at IS NULL AND t.expires_at - now() > '0'
		    AND c.status = 'valid' AND c.valid_until >= current_date
		FOR KEY SHARE OF t;
	END IF;
	IF FOUND THEN
		expires_in := token_issue(g.family, p_client_id,
		    (g.consent).id, g.scopes, p_access_hash,
		    CASE WHEN v_rotation THEN p_new_refresh_hash END,
		    p_access_ttl);
		result := 'ok';
		scope := oauth_scope_answer(g.consent, g.scopes);
		rotated := v_rotation;
	ELSE
		-- Rotates when it grants (a token that became valid meanwhile).
		SELECT r.result, r.scope, r.expires_in, r.description, true
		INTO result, scope, expires_in, description, rotated
		FROM oauth_refresh_grant(p_refresh_hash, p_client_id,
		    p_access_hash, p_new_refresh_hash, p_access_ttl) r;
	END IF;
	IF result = 'ok' AND p_x5t IS NOT NULL THEN
		UPDATE token SET cnf = token_binding_cnf(p_x5t)
		WHERE token_hash = p_access_hash;
	END IF;
END;
$$;

-- The binding a request presents (src/oauth/dpop.h), the p_x5t of the
-- grants and gates: NULL (none), the TLS client certificate's x5t#S256
-- (RFC 8705), or 'dpop JKT JTI UNTIL' for a verified DPoP proof (RFC
-- 9449): the key's thumbprint, the SHA-256 of the thumbprint and the
-- proof's jti in hex, and the Unix time until which the jti is kept.
-- This is the confirmation a token issued with it holds (token.cnf).
CREATE OR REPLACE FUNCTION token_binding_cnf(p_binding text)
RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF starts_with(p_binding, 'dpop ') THEN
		RETURN 'jkt:' || split_part(p_binding, ' ', 2);
	END IF;
	RETURN p_binding;
END;
$$;

-- Whether a token of confirmation p_cnf may be used with the binding
-- presented: a DPoP-bound token only with a proof of its key, a
-- certificate-bound one only over a connection with its certificate; a
-- token bound to nothing with a certificate or nothing, never with a
-- DPoP proof (RFC 9449 7.1: the DPoP scheme is for DPoP-bound tokens).
CREATE OR REPLACE FUNCTION token_binding_ok(p_cnf text, p_binding text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF starts_with(p_binding, 'dpop ') THEN
		RETURN p_cnf IS NOT DISTINCT FROM token_binding_cnf(p_binding);
	END IF;
	RETURN p_cnf IS NULL OR p_cnf IS NOT DISTINCT FROM p_binding;
END;
$$;

-- A DPoP proof's jti spent (migration 197): true for a binding without
-- a proof and for a proof seen the first time, false for a replay.
CREATE OR REPLACE FUNCTION dpop_proof_spend(p_binding text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF NOT coalesce(starts_with(p_binding, 'dpop '), false) THEN
		RETURN true;
	END IF;
	INSERT INTO dpop_proof (jti_hash, expires_at)
	VALUES (decode(split_part(p_binding, ' ', 3), 'hex'),
	    to_timestamp(split_part(p_binding, ' ', 4)::bigint))
	ON CONFLICT DO NOTHING;
	RETURN FOUND;
END;
$$;

-- The bearer check: the token's state and what it grants. PL/pgSQL, not
-- SQL: a SQL-language function called this way is planned on every call
-- (about 0.6 ms of the hot path's time here); PL/pgSQL keeps the plan.
-- The contract's paths take only a PSU's token (one consent); the TPP's
-- own token of the client credentials grant (no consent) is 'invalid'
-- there.
CREATE OR REPLACE FUNCTION bearer_check(p_token_hash bytea,
    OUT state text, OUT consent_id uuid, OUT client_id text,
    OUT scopes text[], OUT psu_id bigint, OUT tpp_org_id text,
    OUT cnf text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
	SELECT CASE
	    WHEN t.token_hash IS NULL OR t.kind <> 'access'
		OR t.consent_id IS NULL
		OR t.revoked_at IS NOT NULL OR c.status <> 'valid'
		OR c.valid_until < current_date THEN 'invalid'
	    WHEN t.expires_at <= now() THEN 'expired'
	    ELSE 'ok' END,
	    t.consent_id, t.client_id, t.scopes, c.psu_id, tp.org_id,
	    t.cnf
	INTO state, consent_id, client_id, scopes, psu_id, tpp_org_id,
	    cnf
	FROM (SELECT 1) one
	LEFT JOIN token t ON t.token_hash = p_token_hash
	LEFT JOIN consent c ON c.id = t.consent_id
	LEFT JOIN oauth_client oc ON oc.client_id = t.client_id
	LEFT JOIN tpp tp ON tp.id = oc.tpp_id;
END;
$$;

-- Bearer check with the binding presented (p_x5t: token_binding_cnf): a
-- bound token presented without its certificate or DPoP key is
-- 'invalid' (invalid_token). The refusal path only: its proof is not
-- spent (nothing is done with the request).
-- PL/pgSQL for the reason above: as a SQL function it was parsed and
-- planned on every call (70 of the 160 microseconds it took).
CREATE OR REPLACE FUNCTION bearer_check(p_token_hash bytea, p_x5t text,
    OUT state text, OUT consent_id uuid, OUT client_id text,
    OUT scopes text[], OUT psu_id bigint, OUT tpp_org_id text,
    OUT cnf text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
	SELECT b.state, b.consent_id, b.client_id, b.scopes, b.psu_id,
	    b.tpp_org_id, b.cnf
	INTO state, consent_id, client_id, scopes, psu_id, tpp_org_id,
	    cnf
	FROM bearer_check(p_token_hash) b;
	IF state = 'ok' AND NOT token_binding_ok(cnf, p_x5t) THEN
		state := 'invalid';
	END IF;
END;
$$;

-- Password step of the login: counts the address against the login rate
-- limit and finds the user. No row data when the user is unknown.
CREATE OR REPLACE FUNCTION login_lookup(p_username text, p_addr text, p_limit integer,
    OUT rate_ok boolean, OUT psu_id bigint, OUT password_hash text)
LANGUAGE plpgsql AS $$
BEGIN
	rate_ok := rate_hit('login:' || p_addr, p_limit);
	SELECT id, psu.password_hash INTO psu_id, password_hash
	FROM psu WHERE username = p_username;
END;
$$;

-- Outcome of one authentication factor for a PSU (p_factor: its name in
-- the audit rows; by default totp with p_reset, else password). p_ok
-- false counts a failure; the fifth consecutive one locks the PSU for p_lock seconds.
-- result: ok, failed, locked (a lock is reported only with p_ok true,
-- so that only someone who knows the factor learns of it).
CREATE OR REPLACE FUNCTION login_factor(p_psu_id bigint, p_ok boolean,
    p_max_failures integer, p_lock_seconds integer, p_reset boolean,
    p_factor text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	p psu%ROWTYPE;
	v_factor text := coalesce(p_factor, CASE WHEN p_reset THEN 'totp'
	    ELSE 'password' END);
BEGIN
	SELECT * INTO p FROM psu WHERE id = p_psu_id FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'failed';
	END IF;
	IF p.locked_until IS NOT NULL AND p.locked_until > now() THEN
		-- An SCA outcome (audit log).
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('psu:' || p.username, 'psu.login_failed',
		    jsonb_build_object('factor', v_factor, 'outcome', 'locked'));
		RETURN CASE WHEN p_ok THEN 'locked' ELSE 'failed' END;
	END IF;
	IF NOT p_ok THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('psu:' || p.username, 'psu.login_failed',
		    jsonb_build_object('factor', v_factor, 'outcome', 'failed'));
		IF p.failed_logins + 1 >= p_max_failures THEN
			UPDATE psu SET failed_logins = 0,
			    locked_until = now() + make_interval(secs => p_lock_seconds)
			WHERE id = p_psu_id;
			INSERT INTO audit_log (actor, action, detail)
			VALUES ('psu:' || p.username, 'psu.locked',
			    jsonb_build_object('seconds', p_lock_seconds));
		ELSE
			UPDATE psu SET failed_logins = failed_logins + 1
			WHERE id = p_psu_id;
		END IF;
		RETURN 'failed';
	END IF;
	IF p_reset THEN
		UPDATE psu SET failed_logins = 0, locked_until = NULL
		WHERE id = p_psu_id;
	END IF;
	RETURN 'ok';
END;
$$;

-- TOTP step of one authorisation request (flow). p_step is the time step
-- the code matches (NULL: none), fresh or not. A step is accepted once per
-- PSU; success resets the failures and opens the flow's session, whose id
-- is derived from the flow and the PSU (p_session_hash). result:
--   ok       the session was opened now (the caller sends its cookie)
--   repeat   the step this flow accepted before, presented again (the
--            same form posted again: a double click, even one racing the
--            first post, or the back button; or someone else replaying
--            it): no failure counted, no second session, nothing renewed;
--            the caller shows the first result only to the browser that
--            already holds the session
--   used     the PSU's last accepted step from another form: refused,
--            no failure counted (it proves nothing and guesses nothing)
--   expired  a repeat whose session has ended (a repeat does not lift
--            the idle timeout)
--   failed, locked
CREATE OR REPLACE FUNCTION login_totp_flow(p_flow_hash bytea,
    p_psu_id bigint, p_step bigint, p_max_failures integer,
    p_lock_seconds integer, p_session_hash bytea, p_session_idle integer,
    p_flow_ttl integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
	fresh boolean;
BEGIN
	-- Serialise on the PSU so that one code cannot be used twice at once.
	PERFORM 1 FROM psu WHERE id = p_psu_id FOR UPDATE;
	IF EXISTS (SELECT 1 FROM auth_flow
	    WHERE flow_hash = p_flow_hash AND psu_id = p_psu_id
		AND totp_step = p_step AND expires_at - now() > '0') THEN
		IF EXISTS (SELECT 1 FROM psu WHERE id = p_psu_id
		    AND locked_until > now()) THEN
			RETURN 'locked';
		END IF;
		IF NOT EXISTS (SELECT 1 FROM web_session
		    WHERE id_hash = p_session_hash AND subject_kind = 'psu'
			AND subject_id = p_psu_id AND expires_at - now() > '0') THEN
			RETURN 'expired';
		END IF;
		RETURN 'repeat';
	END IF;
	IF p_step IS NOT NULL AND EXISTS (SELECT 1 FROM psu
	    WHERE id = p_psu_id AND totp_last_step = p_step) THEN
		PERFORM login_used_audit(p_psu_id, 'totp');
		RETURN 'used';
	END IF;
	fresh := p_step IS NOT NULL AND EXISTS (SELECT 1 FROM psu
	    WHERE id = p_psu_id AND totp_last_step < p_step);
	r := login_factor(p_psu_id, fresh, p_max_failures, p_lock_seconds,
	    true);
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	UPDATE psu SET totp_last_step = p_step WHERE id = p_psu_id;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.login',
	    jsonb_build_object('factor', 'totp', 'outcome', 'ok')
	FROM psu WHERE id = p_psu_id;
	PERFORM login_session_open(p_flow_hash, p_psu_id, p_step,
	    p_session_hash, p_session_idle, p_flow_ttl);
	RETURN 'ok';
END;
$$;

-- The audit row of a second factor refused as used before (p_factor:
-- totp, key): no failure counted.
CREATE OR REPLACE FUNCTION login_used_audit(p_psu_id bigint, p_factor text)
RETURNS void LANGUAGE sql AS $$
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.login_failed',
	    jsonb_build_object('factor', p_factor, 'outcome', 'used')
	FROM psu WHERE id = p_psu_id;
$$;

-- Opens the session of one authorisation request (flow) after its
-- second factor: the session (p_session_hash, derived from the flow and
-- the PSU) and the flow's record, with the TOTP step it accepted (NULL:
-- the login used a key).
CREATE OR REPLACE FUNCTION login_session_open(p_flow_hash bytea,
    p_psu_id bigint, p_step bigint, p_session_hash bytea,
    p_session_idle integer, p_flow_ttl integer)
RETURNS void LANGUAGE sql AS $$
	INSERT INTO web_session AS s (id_hash, subject_kind, subject_id,
	    expires_at)
	VALUES (p_session_hash, 'psu', p_psu_id,
	    now() + make_interval(secs => p_session_idle))
	ON CONFLICT (id_hash) DO UPDATE SET last_seen_at = now(),
	    expires_at = excluded.expires_at
	WHERE s.subject_kind = 'psu' AND s.subject_id = p_psu_id;
	INSERT INTO auth_flow AS f (flow_hash, psu_id, totp_step, expires_at)
	VALUES (p_flow_hash, p_psu_id, p_step,
	    now() + make_interval(secs => p_flow_ttl))
	ON CONFLICT (flow_hash) DO UPDATE SET psu_id = excluded.psu_id,
	    totp_step = excluded.totp_step;
$$;

-- A live PSU session (idle timeout renewed on use), or NULL.
CREATE OR REPLACE FUNCTION session_psu(p_session_hash bytea, p_idle integer)
RETURNS bigint LANGUAGE sql AS $$
	UPDATE web_session SET last_seen_at = now(),
	    expires_at = now() + make_interval(secs => p_idle)
	WHERE id_hash = p_session_hash AND subject_kind = 'psu'
	    AND expires_at - now() > '0'
	RETURNING subject_id;
$$;

-- The decision of one authorisation request (flow) so far, its row
-- locked until the transaction ends: NULL while undecided; no_session
-- (no live flow of this PSU), repeat_denied, repeat_code (approved, the
-- code unspent and unexpired and the session live: send it again) or
-- answered (approved, nothing to send again). See consent_decide.
CREATE OR REPLACE FUNCTION consent_flow_answered(p_flow_hash bytea,
    p_psu_id bigint, p_session_hash bytea, p_idle integer,
    p_code_hash bytea)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	f auth_flow%ROWTYPE;
BEGIN
	SELECT * INTO f FROM auth_flow
	WHERE flow_hash = p_flow_hash AND psu_id = p_psu_id
	    AND expires_at - now() > '0'
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_session';
	END IF;
	IF f.decision = 'denied' THEN
		RETURN 'repeat_denied';
	END IF;
	IF f.decision = 'approved' THEN
		IF f.code_hash = p_code_hash AND
		    session_psu(p_session_hash, p_idle) = p_psu_id AND
		    EXISTS (SELECT 1 FROM auth_code WHERE code_hash = p_code_hash
			AND used_at IS NULL AND expires_at > now()) THEN
			RETURN 'repeat_code';
		END IF;
		RETURN 'answered';
	END IF;
	RETURN NULL;
END;
$$;

-- The PSU's decision on one authorisation request (flow): the first
-- decision is final, a repeated post gets its outcome. An approval checks
-- the session belongs to p_psu_id and every chosen account is the PSU's,
-- then stores the consent and the code (p_code_hash: the digest of the
-- code derived from the flow, the same for every post of the flow).
-- result:
--   ok             approved now
--   denied         denied now (recorded; nothing else is stored)
--   repeat_code    approved before, the code unspent and unexpired and
--                  the session live: send the same code again
--   repeat_denied  denied before
--   answered       approved before, nothing to send again (the code was
--                  exchanged or expired, or the session ended)
--   no_session, client_inactive, bad_account: nothing stored.
CREATE OR REPLACE FUNCTION consent_decide(p_flow_hash bytea,
    p_approve boolean, p_session_hash bytea, p_idle integer,
    p_psu_id bigint, p_client_id text, p_scopes text[],
    p_accounts text[], p_valid_days integer, p_redirect_uri text,
    p_code_challenge text, p_code_hash bytea, p_code_ttl integer,
    p_consent_id uuid, p_family uuid, p_dpop_jkt text, p_par text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n integer;
	r text;
BEGIN
	r := consent_flow_answered(p_flow_hash, p_psu_id, p_session_hash,
	    p_idle, p_code_hash);
	IF r IS NOT NULL THEN
		RETURN r;
	END IF;
	-- The decision uses up the pushed request (oauth_par_read).
	DELETE FROM pushed_request WHERE uri_hash = decode(p_par, 'hex');
	IF NOT p_approve THEN
		UPDATE auth_flow SET decision = 'denied'
		WHERE flow_hash = p_flow_hash;
		INSERT INTO audit_log (actor, action, detail)
		SELECT 'psu:' || username, 'psu.consent_denied',
		    jsonb_build_object('client_id', p_client_id)
		FROM psu WHERE id = p_psu_id;
		RETURN 'denied';
	END IF;
	IF session_psu(p_session_hash, p_idle) IS DISTINCT FROM p_psu_id THEN
		RETURN 'no_session';
	END IF;
	PERFORM 1 FROM oauth_client c JOIN tpp t ON t.id = c.tpp_id
	WHERE c.client_id = p_client_id AND c.status = 'active'
	    AND t.status = 'active';
	IF NOT FOUND THEN
		RETURN 'client_inactive';
	END IF;
	SELECT count(*) INTO n FROM account
	WHERE psu_id = p_psu_id AND resource_id = ANY (p_accounts);
	IF n <> cardinality(p_accounts) THEN
		RETURN 'bad_account';
	END IF;
	INSERT INTO consent (id, psu_id, client_id, scopes, valid_until, sca_at)
	VALUES (p_consent_id, p_psu_id, p_client_id, p_scopes,
	    current_date + p_valid_days, now());
	INSERT INTO consent_account (consent_id, account_id)
	SELECT p_consent_id, id FROM account
	WHERE psu_id = p_psu_id AND resource_id = ANY (p_accounts);
	INSERT INTO auth_code (code_hash, family, client_id, redirect_uri,
	    consent_id, code_challenge, scopes, expires_at, dpop_jkt)
	VALUES (p_code_hash, p_family, p_client_id, p_redirect_uri,
	    p_consent_id, p_code_challenge, p_scopes,
	    now() + make_interval(secs => p_code_ttl), p_dpop_jkt);
	UPDATE auth_flow SET decision = 'approved', consent_id = p_consent_id,
	    code_hash = p_code_hash
	WHERE flow_hash = p_flow_hash;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.consent_approved',
	    jsonb_build_object('client_id', p_client_id, 'consent_id',
		p_consent_id, 'scopes', to_jsonb(p_scopes))
	FROM psu WHERE id = p_psu_id;
	RETURN 'ok';
END;
$$;

-- Client credentials grant (RFC 6749 4.4): the TPP's own access token
-- of the standard interface (src/bg/README.md "The authorisation
-- frame"): no consent, scope xs2a, never a refresh token; bound to the
-- DPoP key or else the TLS client certificate when there is one (p_x5t,
-- the binding: token_binding_cnf).
-- result: ok, invalid_client.
CREATE OR REPLACE FUNCTION oauth_client_credentials_grant(
    p_client_id text, p_access_hash bytea, p_access_ttl integer,
    p_x5t text, p_assertion_jti bytea DEFAULT NULL,
    p_assertion_until timestamptz DEFAULT NULL,
    p_assertion_keys bytea DEFAULT NULL,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT oauth_client_active(p_client_id) THEN
		result := 'invalid_client';
		description := 'Client authentication failed.';
		RETURN;
	END IF;
	IF p_assertion_jti IS NOT NULL THEN
		SELECT a.result, a.description INTO result, description
		FROM oauth_assertion_take(p_client_id, p_assertion_jti,
		    p_assertion_until, p_assertion_keys) a;
		IF result IS NOT NULL THEN
			RETURN;
		END IF;
	END IF;
	IF NOT dpop_proof_spend(p_x5t) THEN
		result := 'invalid_dpop_proof';
		description := 'The DPoP proof was used before.';
		RETURN;
	END IF;
	INSERT INTO token (token_hash, kind, family, client_id, consent_id,
	    scopes, expires_at, cnf)
	VALUES (p_access_hash, 'access', gen_random_uuid(), p_client_id, NULL,
	    '{xs2a}', now() + make_interval(secs => p_access_ttl),
	    token_binding_cnf(p_x5t));
	result := 'ok';
	scope := 'xs2a';
	expires_in := p_access_ttl;
END;
$$;

-- A pushed authorisation request (RFC 9126), checked by the service,
-- kept p_ttl seconds under the SHA-256 of its request_uri.
CREATE OR REPLACE FUNCTION oauth_par_push(p_client_id text,
    p_uri_hash bytea, p_request jsonb, p_ttl integer)
RETURNS void LANGUAGE sql AS $$
	INSERT INTO pushed_request (uri_hash, client_id, request, expires_at)
	VALUES (p_uri_hash, p_client_id, p_request,
	    now() + make_interval(secs => p_ttl));
$$;

-- A client assertion's jti spent (RFC 7523 3 item 7; migration 195),
-- kept until the assertion expires: true the first time, false for a
-- replay. The service calls it only for an assertion it has verified: at
-- the PAR and revocation endpoints on its own, at the token endpoint
-- inside the grant's transaction (oauth_assertion_take).
CREATE OR REPLACE FUNCTION oauth_assertion_spend(p_client_id text,
    p_jti_hash bytea, p_expires_at timestamptz)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO client_assertion (client_id, jti_hash, expires_at)
	VALUES (p_client_id, p_jti_hash, p_expires_at)
	ON CONFLICT DO NOTHING;
	RETURN FOUND;
END;
$$;

-- The pushed request of p_client_id under p_uri_hash (migration 197):
-- NULL when there is none, it is another client's, it was used up (the
-- PSU's decision deletes it: consent_decide, bg_consent_decide) or it
-- expired. Until the decision it may be read again (a reload of the
-- page; FAPI 2.0's conformance tests ask that).
CREATE OR REPLACE FUNCTION oauth_par_read(p_client_id text,
    p_uri_hash bytea)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT request FROM pushed_request
	WHERE uri_hash = p_uri_hash AND client_id = p_client_id
	    AND expires_at - now() > '0';
$$;
