-- An access token never outlives its consent (FAPI 2.0 Security Profile,
-- and RFC 9700 2.2: a token's lifetime no longer than the grant): its
-- expiry is the sooner of the client's access ttl and the end of the
-- consent's last day (valid_until + 1, the refresh token's expiry), and
-- the grant answers that lifetime in expires_in. token_issue therefore
-- returns the lifetime it gave, so its old form (returning void) goes;
-- functions/20_oauth.sql creates the new one.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

DROP FUNCTION IF EXISTS token_issue(uuid, text, uuid, text[], bytea, bytea,
    integer);
