-- DPoP (RFC 9449): an access token may be bound to a key of the client's
-- instead of its TLS certificate. token.cnf_x5t_s256 becomes token.cnf,
-- the token's confirmation: the certificate's x5t#S256 (RFC 8705 3.1),
-- or 'jkt:' and the SHA-256 thumbprint of the DPoP key (RFC 9449 6.1);
-- NULL for a token bound to nothing. The bearer checks that answered
-- the old name (OUT cnf_x5t_s256) go; functions/20_oauth.sql creates
-- them again.
--
-- auth_code.dpop_jkt: the thumbprint of the DPoP key a code is bound to
-- (RFC 9449 10: dpop_jkt at authorize or PAR, or a DPoP proof at PAR);
-- its token request needs a proof of that key. The consent decisions
-- store it (a new parameter), so their old forms go.
--
-- A pushed request (RFC 9126) may be loaded again until the PSU decides
-- (FAPI 2.0's conformance tests reload it): oauth_par_read replaces
-- oauth_par_take, which deleted it at the first load, and the decisions
-- (another new parameter, the request_uri's hash) use it up.
--
-- dpop_proof: each DPoP proof's jti (with the key's thumbprint, hashed),
-- spent once and kept while its iat still falls in the accepted window,
-- then purged.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE token RENAME COLUMN cnf_x5t_s256 TO cnf;

ALTER TABLE auth_code ADD COLUMN dpop_jkt text
    CHECK (dpop_jkt ~ '^[A-Za-z0-9_-]{43}$');

DROP FUNCTION IF EXISTS consent_decide(bytea, boolean, bytea, integer,
    bigint, text, text[], text[], integer, text, text, bytea, integer, uuid,
    uuid);
DROP FUNCTION IF EXISTS bg_consent_decide(bytea, boolean, bytea, integer,
    bigint, text, uuid, uuid, text, text[], text, text, bytea, integer,
    uuid);
DROP FUNCTION IF EXISTS oauth_par_take(text, bytea);

DROP FUNCTION IF EXISTS bearer_check(bytea);
DROP FUNCTION IF EXISTS bearer_check(bytea, text);

CREATE TABLE dpop_proof (
	jti_hash	bytea PRIMARY KEY CHECK (length(jti_hash) = 32),
	expires_at	timestamptz NOT NULL
);
CREATE INDEX dpop_proof_expires ON dpop_proof (expires_at);
