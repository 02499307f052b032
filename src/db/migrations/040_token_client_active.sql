-- The token endpoint may authenticate a client from a worker's cache of
-- recently verified secret digests (src/oauth/token.c, only while no
-- token rate limit is configured), saving a round trip on the hot path.
-- The grants therefore check here, in the same transaction, that the
-- client and its TPP are still active: a suspension takes effect at once.

CREATE FUNCTION oauth_client_active(p_client_id text) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT EXISTS (SELECT 1 FROM oauth_client c JOIN tpp t ON t.id = c.tpp_id
	    WHERE c.client_id = p_client_id AND c.status = 'active'
		AND t.status = 'active');
$$;

CREATE OR REPLACE FUNCTION oauth_code_grant_bound(p_code_hash bytea,
    p_client_id text, p_redirect_uri text, p_verifier_s256 text,
    p_access_hash bytea, p_refresh_hash bytea, p_access_ttl integer,
    p_x5t text, OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT oauth_client_active(p_client_id) THEN
		result := 'invalid_client';
		description := 'Client authentication failed.';
		RETURN;
	END IF;
	SELECT g.result, g.scope, g.expires_in, g.description
	INTO result, scope, expires_in, description
	FROM oauth_code_grant(p_code_hash, p_client_id, p_redirect_uri,
	    p_verifier_s256, p_access_hash, p_refresh_hash, p_access_ttl) g;
	IF result = 'ok' AND p_x5t IS NOT NULL THEN
		UPDATE token SET cnf_x5t_s256 = p_x5t
		WHERE token_hash = p_access_hash;
	END IF;
END;
$$;

CREATE OR REPLACE FUNCTION oauth_refresh_grant_bound(p_refresh_hash bytea,
    p_client_id text, p_access_hash bytea, p_new_refresh_hash bytea,
    p_access_ttl integer, p_x5t text,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT oauth_client_active(p_client_id) THEN
		result := 'invalid_client';
		description := 'Client authentication failed.';
		RETURN;
	END IF;
	SELECT g.result, g.scope, g.expires_in, g.description
	INTO result, scope, expires_in, description
	FROM oauth_refresh_grant(p_refresh_hash, p_client_id, p_access_hash,
	    p_new_refresh_hash, p_access_ttl) g;
	IF result = 'ok' AND p_x5t IS NOT NULL THEN
		UPDATE token SET cnf_x5t_s256 = p_x5t
		WHERE token_hash = p_access_hash;
	END IF;
END;
$$;
