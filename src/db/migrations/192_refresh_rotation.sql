-- Refresh token rotation becomes a setting of each client. It stays the
-- default. A client whose refresh tokens are bound to it by its own
-- authentication at the token endpoint (every client here is
-- confidential) may go without: RFC 9700 4.14.2 asks rotation only of
-- public clients, and the FAPI 2.0 Security Profile (5.3.2.1) forbids it.
-- Without rotation a grant writes one row (the access token) instead of
-- spending a refresh token and writing two.
--
-- The refresh grant now answers whether it rotated (a new OUT
-- parameter), so its old form goes; functions/20_oauth.sql creates the
-- new one.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE oauth_client
    ADD COLUMN refresh_rotation boolean NOT NULL DEFAULT true;

DROP FUNCTION IF EXISTS oauth_refresh_grant_bound(bytea, text, bytea, bytea,
    integer, text);
