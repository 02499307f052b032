-- bg_booked_entry (src/db/functions/34_bg_accounts.sql) no longer writes
-- the optional per-entry link, so it no longer takes the account's
-- resourceId: the old signature goes. IF EXISTS: on a new database the
-- functions files have not run yet.
DROP FUNCTION IF EXISTS bg_booked_entry(text, text, date, date, bigint,
    text, text);
