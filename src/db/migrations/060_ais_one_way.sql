-- 060_ais_one_way (issue 8): schema for the one-way AIS path.
--
-- * The service settles the TPP verdict and the input before its one
--   query; the endpoint functions (src/db/functions/30_ais.sql) return
--   the data or one named refusal (ais_refusal), never 'verdict' or
--   'input' placeholders. The functions and types of 010 that carried
--   those are dropped here; the functions file defines the new ones.
-- * The access record keeps the PSU's IP address (PSU-IP-Address, which
--   the service accepts only as an IPv4/IPv6 address).
-- * frequencyPerDay of a consent is 1..4 (RTS Art. 36(5)(b); the Berlin
--   Group's "at most 4 unless agreed"): the unattended limit is the
--   consent's frequency, lowered by psd2_unattended_limit if set lower.
-- * x-request-id replay marks survive a database crash: signatures must
--   sign date (or sigT), so a captured request is usable for at most
--   twice psd2_clock_skew (at most 2 x 3600 s); the marks are kept 24
--   hours (psd2_purge_ais, ais_gate), far longer; an UNLOGGED table
--   would forget them all at a crash while those requests are still
--   fresh. The insert shares the access record's transaction (WAL and
--   asynchronous commit), so this costs little on the hot path.
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE access_log ADD COLUMN psu_ip_address inet;

ALTER TABLE consent ADD CONSTRAINT consent_frequency_per_day
    CHECK (frequency_per_day BETWEEN 1 AND 4);

ALTER TABLE request_replay SET LOGGED;

-- IF EXISTS: a database first migrated with an earlier 010 (see
-- repairs/010_ais.sql) never had the p_x5t signatures, which the
-- functions files, applied after the migrations, would only now create.

DROP FUNCTION IF EXISTS ais_account_list(bytea, boolean, boolean, text,
    uuid, text, boolean, integer);
DROP FUNCTION IF EXISTS ais_account_balance(bytea, boolean, boolean, text,
    uuid, text, boolean, integer, boolean, text);
DROP FUNCTION IF EXISTS ais_transactions(bytea, boolean, boolean, text,
    uuid, text, boolean, integer, boolean, text, date, date, integer,
    integer);
DROP FUNCTION IF EXISTS ais_funds_confirmation(bytea, boolean, boolean,
    text, uuid, text, boolean, integer, boolean, text, text, bigint);
DROP FUNCTION IF EXISTS ais_consent_current(bytea, boolean, boolean, text,
    uuid, text, boolean, integer, boolean);
DROP FUNCTION IF EXISTS ais_gate(bytea, boolean, boolean, text, uuid, text,
    text);
DROP FUNCTION IF EXISTS ais_access(uuid, timestamptz, text, bigint, uuid,
    text, boolean, boolean, integer);
DROP FUNCTION IF EXISTS ais_exceeded();
DROP FUNCTION IF EXISTS ais_unknown(text);
DROP FUNCTION IF EXISTS ais_input();
DROP TYPE ais_gate_result;
DROP TYPE ais_answer;

-- What an endpoint function may refuse; src/ais/ais_call.c answers each
-- (status, Berlin Group code, text). token_*: the spec's 401 bodies.
CREATE TYPE ais_refusal AS ENUM (
	'token_invalid',
	'token_expired',
	'certificate_of_another_tpp',
	'request_id_used',
	'consent_scope',
	'period_invalid',
	'resource_unknown',
	'access_exceeded'
);

-- An endpoint's answer: a refusal (detail: its variable text, if any),
-- or the finished JSON body (NULL: 204 No Content).
CREATE TYPE ais_result AS (
	refusal	ais_refusal,
	detail	text,
	body	text
);

-- The checks every call starts with; refusal NULL when all pass.
CREATE TYPE ais_gate_result AS (
	refusal		ais_refusal,
	detail		text,
	consent_id	uuid,
	psu_id		bigint,
	tpp_org_id	text,
	sca_at		timestamptz,
	valid_until	date,
	frequency	integer,
	status		text
);
