-- TPP identity (issue 4): access tokens bound to the TPP's TLS client
-- certificate (RFC 8705 section 3, "x5t#S256" confirmation).
--
-- The token endpoint passes the base64url SHA-256 of the client
-- certificate of the connection (NULL over plain HTTP or without one);
-- the access token it issues carries it in token.cnf_x5t_s256. Refresh
-- tokens stay unbound (RFC 8705 allows it for confidential clients), so
-- a TPP that renews its QWAC keeps its refresh token; the access token of
-- a refresh grant is bound to the certificate of the refresh request.

-- The grants of 002, then the binding of the new access token.
CREATE FUNCTION oauth_code_grant_bound(p_code_hash bytea, p_client_id text,
    p_redirect_uri text, p_verifier_s256 text, p_access_hash bytea,
    p_refresh_hash bytea, p_access_ttl integer, p_x5t text,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
BEGIN
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

CREATE FUNCTION oauth_refresh_grant_bound(p_refresh_hash bytea,
    p_client_id text, p_access_hash bytea, p_new_refresh_hash bytea,
    p_access_ttl integer, p_x5t text,
    OUT result text, OUT scope text, OUT expires_in integer,
    OUT description text)
LANGUAGE plpgsql AS $$
BEGIN
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

-- Bearer check with the certificate of the presenting connection
-- (p_x5t, NULL without one): a bound token presented over a connection
-- with another certificate, or none, is 'invalid' (invalid_token).
CREATE FUNCTION bearer_check(p_token_hash bytea, p_x5t text,
    OUT state text, OUT consent_id uuid, OUT client_id text,
    OUT scopes text[], OUT psu_id bigint, OUT tpp_org_id text,
    OUT cnf_x5t_s256 text)
LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN b.state = 'ok' AND b.cnf_x5t_s256 IS NOT NULL
		AND b.cnf_x5t_s256 IS DISTINCT FROM p_x5t THEN 'invalid'
	    ELSE b.state END,
	    b.consent_id, b.client_id, b.scopes, b.psu_id, b.tpp_org_id,
	    b.cnf_x5t_s256
	FROM bearer_check(p_token_hash) b;
$$;
