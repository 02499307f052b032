-- Repair of 010_ais.sql as first committed (37ecd10) and as changed in
-- f2ccbd9. Both differ from the current file only in functions: the
-- endpoint functions and ais_gate later gained a p_x5t parameter (the
-- certificate binding of the access token), so the old signatures stay
-- behind as overloads that nothing calls. Drop them; psd2ctl migrate then
-- applies src/db/functions/ whole, which defines the current ones. Safe to
-- run on any version of 010.
DROP FUNCTION IF EXISTS ais_gate(bytea, boolean, boolean, text, uuid, text);
DROP FUNCTION IF EXISTS ais_account_list(bytea, boolean, boolean, text, uuid,
    boolean, integer);
DROP FUNCTION IF EXISTS ais_account_balance(bytea, boolean, boolean, text,
    uuid, boolean, integer, boolean, text);
DROP FUNCTION IF EXISTS ais_transactions(bytea, boolean, boolean, text, uuid,
    boolean, integer, boolean, text, date, date, integer, integer);
DROP FUNCTION IF EXISTS ais_funds_confirmation(bytea, boolean, boolean, text,
    uuid, boolean, integer, boolean, text, text, bigint);
DROP FUNCTION IF EXISTS ais_consent_current(bytea, boolean, boolean, text,
    uuid, boolean, integer, boolean);
