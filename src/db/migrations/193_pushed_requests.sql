-- Pushed authorisation requests (RFC 9126). A client posts its
-- authorisation request to /auth/oauth/par, authenticated, and gets a
-- request_uri; the PSU's browser then carries only client_id and that
-- request_uri, so nothing of the request can be read or changed on the
-- way. A request is kept under the SHA-256 of its request_uri for 60
-- seconds and taken once (oauth_par_take deletes it).
--
-- par_required: the bank may require pushed requests of a client (the
-- FAPI 2.0 Security Profile, 5.3.2.2); its authorisation requests
-- without a request_uri are then refused, and its pushed requests need
-- PKCE.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE oauth_client
    ADD COLUMN par_required boolean NOT NULL DEFAULT false;

CREATE TABLE pushed_request (
	uri_hash	bytea PRIMARY KEY CHECK (length(uri_hash) = 32),
	client_id	text NOT NULL REFERENCES oauth_client (client_id)
			ON DELETE CASCADE,
	request		jsonb NOT NULL,
	expires_at	timestamptz NOT NULL
);
CREATE INDEX pushed_request_expires ON pushed_request (expires_at);
CREATE INDEX pushed_request_client ON pushed_request (client_id);
