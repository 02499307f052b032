-- The token endpoint spends a client assertion's jti (private_key_jwt)
-- inside the grant's own transaction instead of a transaction of its
-- own before it: one round trip and one durable commit fewer per grant.
-- The three grants of the token endpoint take three more parameters: the
-- assertion's jti hash, until when it is kept, and the hash of the JWK
-- Set it was verified against (all NULL for a client without an
-- assertion, and by default; oauth_assertion_take). Their old forms go;
-- functions/20_oauth.sql creates the new ones.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

DROP FUNCTION IF EXISTS oauth_code_grant_bound(bytea, text, text, text,
    bytea, bytea, integer, text);
DROP FUNCTION IF EXISTS oauth_refresh_grant_bound(bytea, text, bytea, bytea,
    integer, text);
DROP FUNCTION IF EXISTS oauth_client_credentials_grant(text, bytea, integer,
    text);
