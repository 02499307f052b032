-- Client authentication by private_key_jwt (RFC 7523 2.2, OpenID Connect
-- Core 9): the client signs a short JWT with a key of its own, and the
-- bank holds only the public keys, its JWK Set (jwks, registered with
-- psd2ctl tpp jwks). One of the two methods the FAPI 2.0 Security Profile
-- allows (5.3.2.1); a client registered with it has no secret that
-- counts, as with tls_client_auth.
--
-- client_assertion: each assertion's jti, spent once per client (RFC 7523
-- 3 item 7), kept until the assertion expires, then purged.
--
-- token_client also answers the key set (a new OUT parameter), so its
-- old form goes; functions/20_oauth.sql creates the new one.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE oauth_client ADD COLUMN jwks jsonb;

ALTER TABLE oauth_client DROP CONSTRAINT oauth_client_auth_method_check;
ALTER TABLE oauth_client ADD CONSTRAINT oauth_client_auth_method_check
    CHECK (auth_method IN ('client_secret_basic', 'tls_client_auth',
	'private_key_jwt'));
-- A private_key_jwt client always has keys to verify with.
ALTER TABLE oauth_client ADD CONSTRAINT oauth_client_jwks_for_jwt
    CHECK (auth_method <> 'private_key_jwt' OR jwks IS NOT NULL);

CREATE TABLE client_assertion (
	client_id	text NOT NULL REFERENCES oauth_client (client_id)
			ON DELETE CASCADE,
	jti_hash	bytea NOT NULL CHECK (length(jti_hash) = 32),
	expires_at	timestamptz NOT NULL,
	PRIMARY KEY (client_id, jti_hash)
);
CREATE INDEX client_assertion_expires ON client_assertion (expires_at);

DROP FUNCTION IF EXISTS token_client(text, text, integer);
