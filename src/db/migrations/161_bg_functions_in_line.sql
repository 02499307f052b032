-- Two functions of the standard interface go (src/db/functions/
-- 31_bg_gate.sql, 34_bg_accounts.sql): bg_consent_usable is now written
-- in line in bg_ais_read, and bg_account_json, which takes the account's
-- columns instead of its id, replaces bg_account_details, so that the
-- account list is one query. One call or query fewer on every account
-- read. IF EXISTS: on a new database the functions files have not run.
DROP FUNCTION IF EXISTS bg_consent_usable(text, text[]);
DROP FUNCTION IF EXISTS bg_account_details(bigint, boolean, boolean, boolean);
