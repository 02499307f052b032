-- Account information: access records, the gate every AIS call passes, the endpoints, the PSU consents page.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- Creates the monthly partitions of access_log for this month and the
-- next p_months (UTC months). Returns how many it created.
-- SECURITY DEFINER: it creates partitions, which only the owner role may
-- (the service's and psd2ctl's roles have no DDL rights; migration 083).
CREATE OR REPLACE FUNCTION access_log_ensure(p_months integer DEFAULT 2)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	m timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
	part text;
	n integer := 0;
BEGIN
	FOR i IN 0 .. p_months LOOP
		part := 'access_log_' || to_char(m, 'YYYYMM');
		IF to_regclass(part) IS NULL THEN
			BEGIN
				EXECUTE format('CREATE TABLE %I PARTITION OF '
				    'access_log FOR VALUES FROM (%L) TO (%L)', part,
				    m AT TIME ZONE 'UTC',
				    (m + interval '1 month') AT TIME ZONE 'UTC');
				n := n + 1;
			EXCEPTION WHEN others THEN
				-- Rows of that month already sit in the default
				-- partition; they stay there (and are purged
				-- there) rather than failing the caller.
				RAISE WARNING 'access_log partition %: %', part,
				    SQLERRM;
			END;
		END IF;
		m := m + interval '1 month';
	END LOOP;
	RETURN n;
END;
$$;

-- Drops the monthly partitions wholly older than p_retention_days and
-- deletes such rows from the default partition; then makes sure the
-- coming months exist. Returns the number of partitions dropped.
-- SECURITY DEFINER: it drops partitions (owner only, migration 083).
CREATE OR REPLACE FUNCTION access_log_purge(p_retention_days integer)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	r record;
	cutoff timestamptz := now() - make_interval(days => p_retention_days);
	n integer := 0;
BEGIN
	IF p_retention_days < 1 THEN
		RAISE EXCEPTION 'retention must be at least one day';
	END IF;
	FOR r IN SELECT c.relname FROM pg_inherits i
	    JOIN pg_class c ON c.oid = i.inhrelid
	    WHERE i.inhparent = 'access_log'::regclass
		AND c.relname ~ '^access_log_[0-9]{6}$'
	LOOP
		IF (to_timestamp(substr(r.relname, 12), 'YYYYMM')::timestamp
		    + interval '1 month') AT TIME ZONE 'UTC' <= cutoff THEN
			EXECUTE format('DROP TABLE %I', r.relname);
			n := n + 1;
		END IF;
	END LOOP;
	DELETE FROM access_log_default WHERE at < cutoff;
	PERFORM access_log_ensure();
	RETURN n;
END;
$$;

-- Housekeeping of the account information tables, called by psd2_purge().
-- Replay marks are kept 24 hours: far longer than the at most 2 x
-- psd2_clock_skew (<= 2 x 3600 s) in which a signed date (or JWS sigT)
-- lets a captured request pass at all.
CREATE OR REPLACE FUNCTION psd2_purge_ais() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	n integer;
BEGIN
	DELETE FROM request_replay WHERE seen_at < now() - interval '24 hours';
	GET DIAGNOSTICS n = ROW_COUNT;
	PERFORM access_log_ensure();
	RETURN n;
END;
$$;

-- Integer minor units as the exact decimal of the currency (ISO 4217
-- exponent; EUR 2): 123450 -> 1234.50. numeric, never a double. One
-- expression, so that the planner inlines it (a SQL function that is
-- not inlined is planned again on every call, for every row).
CREATE OR REPLACE FUNCTION ais_amount(p_minor bigint, p_currency text)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE
	    WHEN p_currency IN ('JPY', 'KRW', 'ISK', 'CLP', 'VND', 'XOF', 'XAF',
		'PYG', 'UGX') THEN p_minor::numeric
	    WHEN p_currency IN ('BHD', 'KWD', 'OMR', 'JOD', 'TND', 'LYD', 'IQD')
		THEN round(p_minor::numeric / 1000, 3)
	    ELSE round(p_minor::numeric / 100, 2) END;
$$;

-- A transaction's entries, built when the row is written: entry for the
-- contract's transactions page (migration 190: building 50 of them on
-- every read was half of the page's database time), bg_entry for the
-- standard interface's (migration 191; the transactions schema of the
-- official file, without the optional _links: the link would make a page
-- half as large again, 18.4 kB instead of 12 kB for 50). SECURITY
-- DEFINER: the sandbox's seeding (psd2_operator) writes transactions
-- too, and only the service may execute ais_amount and bg_amount
-- (functions/34_bg_accounts.sql, the one definition of the standard
-- interface's amount; migration 191 wrote it out, as it runs before
-- these files).
CREATE OR REPLACE FUNCTION account_transaction_entry() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
	NEW.entry := json_build_object(
	    'transactionId', NEW.transaction_id,
	    'bookingDate', to_char(NEW.booking_date, 'YYYY-MM-DD'),
	    'valueDate', to_char(NEW.value_date, 'YYYY-MM-DD'),
	    'explanation', NEW.explanation,
	    'balanceAmount', json_build_object(
		'amount', ais_amount(NEW.amount_minor, NEW.currency),
		'sourceCurrency', NEW.currency));
	NEW.bg_entry := json_build_object(
	    'transactionId', NEW.transaction_id,
	    'bookingDate', to_char(NEW.booking_date, 'YYYY-MM-DD'),
	    'valueDate', to_char(NEW.value_date, 'YYYY-MM-DD'),
	    'transactionAmount', bg_amount(NEW.amount_minor, NEW.currency),
	    'remittanceInformationUnstructured', left(NEW.explanation, 140));
	RETURN NEW;
END;
$$;

-- The AIS endpoints run one way (src/ais/ais.h): the service has
-- already settled the TPP verdict (signature, certificate, role) and the
-- input; these functions take only what passed and return the data or
-- one named refusal (type ais_refusal, migrations/060_ais_one_way.sql).
-- Every call is still one round trip and one transaction: bearer check,
-- certificate's TPP against the token's, replay mark, consent,
-- unattended limit, access record and data.
--
-- Common parameters of the endpoint functions:
--	p_token_hash	SHA-256 of the bearer token
--	p_x5t		the binding presented (token_binding_cnf, 20_oauth.sql):
--			the TLS client certificate's x5t#S256 (RFC 8705), a
--			verified DPoP proof (RFC 9449, its jti spent here), or
--			NULL
--	p_org_id	organizationIdentifier of the verified signing
--			certificate; NULL for an unsigned request (signing off)
--	p_request_id	x-request-id of a verified signed request, or NULL
--	p_psu_ip	PSU-IP-Address (the PSU is present), or NULL
--	p_limit		psd2_unattended_limit (1..4): lowers the consent's
--			frequencyPerDay, never raises it

-- The refusal path: the service refused the request before asking the
-- database, but the bearer token is answered first (spec part 7).
CREATE OR REPLACE FUNCTION ais_bearer_only(p_token_hash bytea, p_x5t text)
RETURNS ais_result LANGUAGE sql STABLE AS $$
	SELECT CASE b.state WHEN 'ok' THEN NULL
	    WHEN 'expired' THEN 'token_expired'
	    ELSE 'token_invalid' END::ais_refusal, NULL::text, NULL::text
	FROM bearer_check(p_token_hash, p_x5t) b;
$$;

-- The replay mark of a verified signed request (both surfaces): one
-- x-request-id per TPP in 24 hours. Marks live 24 hours
-- (psd2_purge_ais deletes older ones): far more than the
-- 2 x psd2_clock_skew (at most 2 x 3600 s) in which a signed date lets a
-- captured request pass at all. False: the id was used.
CREATE OR REPLACE FUNCTION request_replay_mark(p_tpp_org_id text,
    p_request_id uuid)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO request_replay AS r (tpp_org_id, request_id, seen_at)
	VALUES (p_tpp_org_id, p_request_id, now())
	ON CONFLICT (tpp_org_id, request_id) DO UPDATE
	    SET seen_at = now()
	    WHERE r.seen_at < now() - interval '24 hours';
	RETURN FOUND;
END;
$$;

-- Bearer token, certificate organisation against the token's TPP,
-- x-request-id replay mark, scope; then the consent's row. The token,
-- its consent, client and TPP are read in one statement (the bearer
-- check's rules, bearer_check in 20_oauth.sql): the hot path of every
-- AIS and PIS call, where each further statement or nested function
-- costs tens of microseconds of PostgreSQL's CPU (tests/bench/README.md).
CREATE OR REPLACE FUNCTION ais_gate(p_token_hash bytea, p_x5t text,
    p_org_id text, p_request_id uuid, p_scope text)
RETURNS ais_gate_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	t record;
BEGIN
	SELECT tk.kind, tk.consent_id, tk.revoked_at, tk.expires_at,
	    tk.cnf, tk.scopes, c.psu_id, c.status, c.valid_until,
	    c.sca_at, c.frequency_per_day, tp.org_id
	INTO t
	FROM token tk
	LEFT JOIN consent c ON c.id = tk.consent_id
	LEFT JOIN oauth_client oc ON oc.client_id = tk.client_id
	LEFT JOIN tpp tp ON tp.id = oc.tpp_id
	WHERE tk.token_hash = p_token_hash;
	IF NOT FOUND OR t.kind <> 'access' OR t.consent_id IS NULL
	    OR t.revoked_at IS NOT NULL OR t.status IS DISTINCT FROM 'valid'
	    OR t.valid_until < current_date THEN
		g.refusal := 'token_invalid';
		RETURN g;
	END IF;
	IF t.expires_at <= now() THEN
		g.refusal := 'token_expired';
		RETURN g;
	END IF;
	IF (t.cnf IS NOT NULL OR p_x5t IS NOT NULL)
	    AND (NOT token_binding_ok(t.cnf, p_x5t)
		OR NOT dpop_proof_spend(p_x5t)) THEN
		g.refusal := 'token_invalid';
		RETURN g;
	END IF;
	IF p_org_id IS NOT NULL AND p_org_id IS DISTINCT FROM t.org_id THEN
		g.refusal := 'certificate_of_another_tpp';
		RETURN g;
	END IF;
	IF p_request_id IS NOT NULL
	    AND NOT request_replay_mark(t.org_id, p_request_id) THEN
		g.refusal := 'request_id_used';
		RETURN g;
	END IF;
	IF p_scope IS NOT NULL AND NOT (p_scope = ANY (t.scopes)) THEN
		g.refusal := 'consent_scope';
		g.detail := 'The consent of this access token does not cover '
		    || p_scope || '.';
		RETURN g;
	END IF;
	g.consent_id := t.consent_id;
	g.psu_id := t.psu_id;
	g.tpp_org_id := t.org_id;
	g.sca_at := t.sca_at;
	g.valid_until := t.valid_until;
	g.frequency := t.frequency_per_day;
	g.status := t.status;
	RETURN g;
END;
$$;

-- The unattended-access limit and the access record, at the end of every
-- call that answers data. PSU present: a PSU-IP-Address (p_psu_ip) or
-- within 60 minutes of the consent's SCA. Otherwise at most p_limit
-- counted accesses per consent, endpoint and account in 24 hours (NULL:
-- the endpoint is not under the limit); a further page (p_continuation)
-- of the same query within 10 minutes of its counted access is the same
-- access. Returns false when the limit is reached (nothing recorded).
--
-- synchronous_commit = off for the rest of this transaction: the access
-- record is in the WAL at once and flushed within a fraction of a second
-- (see the header of migrations/010_ais.sql).
CREATE OR REPLACE FUNCTION ais_access(p_consent_id uuid,
    p_sca_at timestamptz, p_endpoint text, p_account_id bigint,
    p_request_id uuid, p_query text, p_continuation boolean, p_psu_ip inet,
    p_limit integer)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	v_present boolean := p_psu_ip IS NOT NULL
	    OR p_sca_at > now() - interval '60 minutes';
	v_counted boolean := NOT v_present;
	n integer;
	v text;
BEGIN
	-- An assignment, not PERFORM: a plain expression here, where
	-- PERFORM would start an executor for it on every call.
	v := set_config('synchronous_commit', 'off', true);
	IF NOT v_present AND p_limit IS NOT NULL THEN
		-- Two parallel calls must not both take the last access.
		PERFORM pg_advisory_xact_lock(hashtextextended(p_consent_id::text
		    || '/' || p_endpoint || '/' || coalesce(p_account_id, 0), 36));
		IF p_continuation AND EXISTS (SELECT 1 FROM access_log
		    WHERE consent_id = p_consent_id AND endpoint = p_endpoint
			AND coalesce(account_id, 0) = coalesce(p_account_id, 0)
			AND NOT psu_present AND counted AND query = p_query
			AND at > now() - interval '10 minutes') THEN
			v_counted := false;
		ELSE
			SELECT count(*) INTO n FROM access_log
			WHERE consent_id = p_consent_id AND endpoint = p_endpoint
			    AND coalesce(account_id, 0) = coalesce(p_account_id, 0)
			    AND NOT psu_present AND counted
			    AND at > now() - interval '24 hours';
			IF n >= p_limit THEN
				RETURN false;
			END IF;
		END IF;
	END IF;
	INSERT INTO access_log (consent_id, endpoint, account_id, request_id,
	    query, psu_present, counted, psu_ip_address)
	VALUES (p_consent_id, p_endpoint, p_account_id, p_request_id, p_query,
	    v_present, v_counted, p_psu_ip);
	-- To the minute: a busy consent must not serialise its calls on
	-- this row.
	UPDATE consent SET last_used_at = now()
	WHERE id = p_consent_id
	    AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
	RETURN true;
END;
$$;

-- GET account-list (spec 4.4).
CREATE OR REPLACE FUNCTION ais_account_list(p_token_hash bytea, p_x5t text,
    p_org_id text, p_request_id uuid, p_psu_ip inet, p_limit integer)
RETURNS ais_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	body text;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id,
	    'ACCOUNT_INFORMATION');
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal, g.detail, NULL)::ais_result;
	END IF;
	IF NOT ais_access(g.consent_id, g.sca_at, 'account-list', NULL,
	    p_request_id, NULL, false, p_psu_ip, least(g.frequency, p_limit))
	THEN
		RETURN ROW('access_exceeded', NULL, NULL)::ais_result;
	END IF;
	SELECT json_build_object('accounts', coalesce(json_agg(
	    json_build_object('resourceId', a.resource_id, 'iban', a.iban,
		'accountHolderName', a.holder_name, 'currency', a.currency)
	    ORDER BY a.id), '[]'::json))::text
	INTO body
	FROM consent_account ca JOIN account a ON a.id = ca.account_id
	WHERE ca.consent_id = g.consent_id;
	RETURN ROW(NULL, NULL, body)::ais_result;
END;
$$;

-- GET account-balance (spec 4.5), referenceId from the JSON body.
CREATE OR REPLACE FUNCTION ais_account_balance(p_token_hash bytea,
    p_x5t text, p_org_id text, p_request_id uuid, p_psu_ip inet,
    p_limit integer, p_resource_id text)
RETURNS ais_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	acc record;
	body text;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id,
	    'ACCOUNT_INFORMATION');
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal, g.detail, NULL)::ais_result;
	END IF;
	SELECT a.id, a.iban, a.currency, ca.balances INTO acc
	FROM consent_account ca JOIN account a ON a.id = ca.account_id
	WHERE ca.consent_id = g.consent_id AND a.resource_id = p_resource_id;
	IF NOT FOUND THEN
		RETURN ROW('resource_unknown', NULL, NULL)::ais_result;
	END IF;
	-- A consent of the standard interface may give an account without
	-- its balances (consent_account.balances, migration 150).
	IF NOT acc.balances THEN
		RETURN ROW('consent_scope', 'The consent does not give the '
		    'balances of this account.', NULL)::ais_result;
	END IF;
	IF NOT ais_access(g.consent_id, g.sca_at, 'account-balance', acc.id,
	    p_request_id, NULL, false, p_psu_ip, least(g.frequency, p_limit))
	THEN
		RETURN ROW('access_exceeded', NULL, NULL)::ais_result;
	END IF;
	SELECT json_build_object(
	    'account', json_build_object('iban', acc.iban,
		'currency', acc.currency),
	    'balances', coalesce((SELECT json_agg(json_build_object(
		'balanceType', 'AvailableBalance',
		'balanceAmount', json_build_object('currency', acc.currency,
		    'amount', ais_amount(b.amount_minor, acc.currency)),
		'lastChangeDateTime', to_char(b.last_change_at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD'),
		'referenceDate', to_char(b.reference_date, 'YYYY-MM-DD')))
		FROM balance b WHERE b.account_id = acc.id), '[]'::json))::text
	INTO body;
	RETURN ROW(NULL, NULL, body)::ais_result;
END;
$$;

-- GET {account-id}/transactions (spec 4.6). p_from/p_to NULL: the last 90
-- days up to today (dateFrom = today - 90 days, dateTo = today). Newest
-- first, id-stable inside a day, p_page_size per page; _links repeat the
-- effective query with relative hrefs.
CREATE OR REPLACE FUNCTION ais_transactions(p_token_hash bytea, p_x5t text,
    p_org_id text, p_request_id uuid, p_psu_ip inet, p_limit integer,
    p_resource_id text, p_from date, p_to date, p_page integer,
    p_page_size integer)
RETURNS ais_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	acc record;
	v_to date := coalesce(p_to, current_date);
	v_from date := coalesce(p_from, current_date - 90);
	items json;
	more boolean;
	href text;
	links json;
	body text;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id,
	    'ACCOUNT_INFORMATION');
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal, g.detail, NULL)::ais_result;
	END IF;
	IF v_from > v_to THEN
		RETURN ROW('period_invalid',
		    'dateFrom ' || to_char(v_from, 'YYYY-MM-DD') ||
		    ' is after dateTo ' || to_char(v_to, 'YYYY-MM-DD') || '.',
		    NULL)::ais_result;
	END IF;
	SELECT a.id, a.iban, a.currency, a.resource_id, ca.transactions
	INTO acc
	FROM consent_account ca JOIN account a ON a.id = ca.account_id
	WHERE ca.consent_id = g.consent_id AND a.resource_id = p_resource_id;
	IF NOT FOUND THEN
		RETURN ROW('resource_unknown', NULL, NULL)::ais_result;
	END IF;
	-- consent_account.transactions (migration 150), as for balances.
	IF NOT acc.transactions THEN
		RETURN ROW('consent_scope', 'The consent does not give the '
		    'transactions of this account.', NULL)::ais_result;
	END IF;
	IF NOT ais_access(g.consent_id, g.sca_at, 'transactions', acc.id,
	    p_request_id, v_from || '/' || v_to, p_page > 0, p_psu_ip,
	    least(g.frequency, p_limit)) THEN
		RETURN ROW('access_exceeded', NULL, NULL)::ais_result;
	END IF;

	-- Each entry as its row stores it (account_transaction_entry).
	SELECT coalesce(json_agg(t.entry
		ORDER BY t.booking_date DESC, t.id DESC)
		FILTER (WHERE t.n <= p_page_size), '[]'::json),
	    count(*) > p_page_size
	INTO items, more
	FROM (SELECT x.*, row_number() OVER (ORDER BY x.booking_date DESC,
		x.id DESC) AS n
	    FROM (SELECT * FROM account_transaction
		WHERE account_id = acc.id
		    AND booking_date BETWEEN v_from AND v_to
		ORDER BY booking_date DESC, id DESC
		LIMIT p_page_size + 1
		OFFSET p_page::bigint * p_page_size) x) t;

	href := '/auth/v1/psd2/account/' || acc.resource_id ||
	    '/transactions?dateFrom=' || to_char(v_from, 'YYYY-MM-DD') ||
	    '&dateTo=' || to_char(v_to, 'YYYY-MM-DD') || '&pageIndex=';
	IF more AND p_page > 0 THEN
		links := json_build_object(
		    'next', json_build_object('href', href || (p_page + 1)),
		    'previous', json_build_object('href', href || (p_page - 1)));
	ELSIF more THEN
		links := json_build_object(
		    'next', json_build_object('href', href || (p_page + 1)));
	ELSIF p_page > 0 THEN
		links := json_build_object(
		    'previous', json_build_object('href', href || (p_page - 1)));
	END IF;

	IF links IS NULL THEN
		body := json_build_object('account', json_build_object(
		    'iban', acc.iban, 'currency', acc.currency),
		    'transactions', items)::text;
	ELSE
		body := json_build_object('account', json_build_object(
		    'iban', acc.iban, 'currency', acc.currency),
		    'transactions', items, '_links', links)::text;
	END IF;
	RETURN ROW(NULL, NULL, body)::ais_result;
END;
$$;

-- The confirmation of funds of both surfaces (the contract's
-- ais_funds_confirmation, the standard's bg_funds_confirmation): enough
-- available balance on the consent's account p_iban for p_amount_minor in
-- the account's currency? Another currency: false. NULL: the consent does
-- not cover that account. Recorded, but not under the unattended limit:
-- confirmation of funds is not account information.
CREATE OR REPLACE FUNCTION ais_funds_check(p_consent_id uuid,
    p_sca_at timestamptz, p_request_id uuid, p_psu_ip inet, p_iban text,
    p_currency text, p_amount_minor bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	acc record;
	ok boolean;
BEGIN
	SELECT a.id, a.currency INTO acc
	FROM consent_account ca JOIN account a ON a.id = ca.account_id
	WHERE ca.consent_id = p_consent_id AND a.iban = p_iban;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	PERFORM ais_access(p_consent_id, p_sca_at, 'funds-confirmations',
	    acc.id, p_request_id, NULL, false, p_psu_ip, NULL);
	SELECT coalesce(acc.currency = p_currency
	    AND b.amount_minor >= p_amount_minor, false)
	INTO ok
	FROM (SELECT 1) one LEFT JOIN balance b ON b.account_id = acc.id;
	RETURN ok;
END;
$$;

-- POST funds-confirmations (Berlin Group), scope FUND_AVAILABILITY.
CREATE OR REPLACE FUNCTION ais_funds_confirmation(p_token_hash bytea,
    p_x5t text, p_org_id text, p_request_id uuid, p_psu_ip inet,
    p_limit integer, p_iban text, p_currency text, p_amount_minor bigint)
RETURNS ais_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	ok boolean;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id,
	    'FUND_AVAILABILITY');
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal, g.detail, NULL)::ais_result;
	END IF;
	ok := ais_funds_check(g.consent_id, g.sca_at, p_request_id, p_psu_ip,
	    p_iban, p_currency, p_amount_minor);
	IF ok IS NULL THEN
		RETURN ROW('resource_unknown', NULL, NULL)::ais_result;
	END IF;
	RETURN ROW(NULL, NULL,
	    json_build_object('fundsAvailable', ok)::text)::ais_result;
END;
$$;

-- GET consents/current: the consent of the access token.
-- DELETE consents/current (p_delete): the TPP ends it (terminatedByTpp,
-- durable commit); its tokens stop working at once.
CREATE OR REPLACE FUNCTION ais_consent_current(p_token_hash bytea,
    p_x5t text, p_org_id text, p_request_id uuid, p_psu_ip inet,
    p_limit integer, p_delete boolean)
RETURNS ais_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	body text;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id, NULL);
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal, g.detail, NULL)::ais_result;
	END IF;
	IF p_delete THEN
		UPDATE consent SET status = 'terminatedByTpp', status_at = now()
		WHERE id = g.consent_id AND status = 'valid';
		UPDATE token SET revoked_at = now()
		WHERE consent_id = g.consent_id AND revoked_at IS NULL;
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('tpp:' || g.tpp_org_id, 'consent.terminated',
		    jsonb_build_object('consent', g.consent_id));
		RETURN ROW(NULL, NULL, NULL)::ais_result;
	END IF;
	PERFORM ais_access(g.consent_id, g.sca_at, 'consent', NULL,
	    p_request_id, NULL, false, p_psu_ip, NULL);
	SELECT json_build_object('consentId', g.consent_id,
	    'consentStatus', g.status,
	    'validUntil', to_char(g.valid_until, 'YYYY-MM-DD'),
	    'frequencyPerDay', g.frequency,
	    'access', json_build_object('accounts', coalesce((
		SELECT json_agg(json_build_object('iban', a.iban,
		    'currency', a.currency) ORDER BY a.id)
		FROM consent_account ca JOIN account a ON a.id = ca.account_id
		WHERE ca.consent_id = g.consent_id), '[]'::json)))::text
	INTO body;
	RETURN ROW(NULL, NULL, body)::ais_result;
END;
$$;

-- The PSU's consents page: the live session's PSU (renewing its idle
-- timeout) and the PSU's consents, newest first, as JSON. No row data
-- (psu_id NULL) without a live session.
CREATE OR REPLACE FUNCTION psu_consents(p_session_hash bytea, p_idle integer,
    OUT psu_id bigint, OUT consents json)
LANGUAGE plpgsql AS $$
BEGIN
	psu_id := session_psu(p_session_hash, p_idle);
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(json_agg(json_build_object(
	    'id', c.id,
	    'tpp', t.name,
	    'org_id', t.org_id,
	    'scopes', c.scopes,
	    'accounts', coalesce((SELECT json_agg(json_build_object(
		'iban', a.iban, 'name', a.name, 'currency', a.currency)
		ORDER BY a.id)
		FROM consent_account ca JOIN account a ON a.id = ca.account_id
		WHERE ca.consent_id = c.id), '[]'::json),
	    'valid_until', to_char(c.valid_until, 'YYYY-MM-DD'),
	    'last_used', to_char(c.last_used_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'status', CASE WHEN c.status = 'valid'
		AND c.valid_until < current_date THEN 'expired'
		ELSE c.status END,
	    'active', c.status = 'valid' AND c.valid_until >= current_date)
	    ORDER BY c.created_at DESC, c.id), '[]'::json)
	INTO consents
	FROM consent c
	JOIN oauth_client oc ON oc.client_id = c.client_id
	JOIN tpp t ON t.id = oc.tpp_id
	WHERE c.psu_id = psu_consents.psu_id
	    AND c.status IN ('valid', 'revokedByPsu', 'expired',
		'terminatedByTpp');
END;
$$;

-- The PSU revokes a consent of theirs (durable). result: ok (also for a
-- consent this PSU has revoked already), no_session, unknown (not the
-- PSU's, or ended otherwise).
CREATE OR REPLACE FUNCTION psu_consent_revoke(p_session_hash bytea, p_idle integer,
    p_psu_id bigint, p_consent_id uuid)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n integer;
BEGIN
	IF session_psu(p_session_hash, p_idle) IS DISTINCT FROM p_psu_id THEN
		RETURN 'no_session';
	END IF;
	UPDATE consent SET status = 'revokedByPsu', status_at = now()
	WHERE id = p_consent_id AND psu_id = p_psu_id AND status = 'valid';
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n = 0 THEN
		-- Posted again (double click, back button): the first post's
		-- outcome, nothing changed.
		IF EXISTS (SELECT 1 FROM consent WHERE id = p_consent_id
		    AND psu_id = p_psu_id AND status = 'revokedByPsu') THEN
			RETURN 'ok';
		END IF;
		RETURN 'unknown';
	END IF;
	UPDATE token SET revoked_at = now()
	WHERE consent_id = p_consent_id AND revoked_at IS NULL;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || p.username, 'consent.revoked',
	    jsonb_build_object('consent', p_consent_id)
	FROM psu p WHERE p.id = p_psu_id;
	RETURN 'ok';
END;
$$;
