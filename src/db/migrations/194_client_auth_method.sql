-- How a client authenticates at the token, PAR and revocation endpoints:
-- client_secret_basic (HTTP Basic with its secret, the interface
-- contract's way and the default) or tls_client_auth (RFC 8705 2.1: its
-- eIDAS QWAC on the mTLS host, whose organizationIdentifier must be its
-- TPP's; one of the two the FAPI 2.0 Security Profile allows, 5.3.2.1).
-- Each client has exactly one: a tls_client_auth client's secret is
-- refused.
--
-- token_client answers the method and the TPP's organisation (two new
-- OUT parameters), so its old form goes; functions/20_oauth.sql creates
-- the new one.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE oauth_client
    ADD COLUMN auth_method text NOT NULL DEFAULT 'client_secret_basic'
    CHECK (auth_method IN ('client_secret_basic', 'tls_client_auth'));

DROP FUNCTION IF EXISTS token_client(text, text, integer);
