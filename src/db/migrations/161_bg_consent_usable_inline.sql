-- bg_consent_usable (src/db/functions/31_bg_gate.sql) is now written in
-- line in bg_ais_read, one call fewer on every account read: the function
-- goes. IF EXISTS: on a new database the functions files have not run.
DROP FUNCTION IF EXISTS bg_consent_usable(text, text[]);
