-- The standard interface's account information and funds confirmation
-- (src/bg/README.md "Account information", "Funds confirmation"): one
-- function per call, returning bg_result (migration 150). The account
-- information calls start with bg_ais_read: bg_gate (31_bg_gate.sql),
-- the consent's status and scope, the account, then the unattended
-- limit and the access record of the contract (ais_access of 30_ais.sql)
-- with the same endpoint names where the read is the same
-- ('account-list', 'account-balance', 'transactions'), so that both
-- surfaces count against one daily limit.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).
--
-- Parameters $1..$7 as in 31_bg_gate.sql, then
--	p_limit		psd2_unattended_limit (1..4): lowers the consent's
--			frequencyPerDay, never raises it

-- An amount of the official schema (amountValue): a string with the
-- currency's minor units, a debit negative.
-- STABLE, as its body (json_build_object, to_char): a SQL function
-- declared stricter than its body is not inlined and is planned again
-- for every row (measured: 18 us a transaction instead of 4).
CREATE OR REPLACE FUNCTION bg_amount(p_minor bigint, p_currency text)
RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
	SELECT json_build_object('currency', p_currency,
	    'amount', ais_amount(p_minor, p_currency)::text);
$$;

-- A time of the official schema (date-time), in UTC.
CREATE OR REPLACE FUNCTION bg_datetime(p_at timestamptz)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
	SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
$$;

-- The three balances of an account (balanceList): closingBooked (the
-- end of yesterday: today's bookings taken off), interimAvailable (now)
-- and expected (now, less the payments that passed SCA and wait for
-- their booking: status ACTC of migration 070; RCVD has no SCA yet,
-- ACSC is booked already and in the balance). An account without a
-- balance row has no balances ([]).
--
-- PL/pgSQL, not SQL: a SQL function with a FROM is never inlined and is
-- planned again on every call; PL/pgSQL keeps the plan.
CREATE OR REPLACE FUNCTION bg_balances(p_account_id bigint,
    p_currency text)
RETURNS json LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN coalesce((SELECT json_build_array(
	    json_build_object('balanceType', 'closingBooked',
		'balanceAmount', bg_amount(b.amount_minor - coalesce((
		    SELECT sum(t.amount_minor) FROM account_transaction t
		    WHERE t.account_id = p_account_id
			AND t.booking_date >= current_date), 0)::bigint,
		    p_currency),
		'referenceDate', to_char(current_date - 1, 'YYYY-MM-DD')),
	    json_build_object('balanceType', 'interimAvailable',
		'balanceAmount', bg_amount(b.amount_minor, p_currency),
		'lastChangeDateTime', bg_datetime(b.last_change_at)),
	    json_build_object('balanceType', 'expected',
		'balanceAmount', bg_amount(b.amount_minor - p.minor,
		    p_currency),
		'lastChangeDateTime', bg_datetime(greatest(b.last_change_at,
		    p.last_at))))
	    FROM balance b,
		LATERAL (SELECT coalesce(sum(amount_minor), 0)::bigint AS minor,
		    max(status_at) AS last_at
		    FROM payment
		    WHERE debtor_account_id = p_account_id
			AND transaction_status = 'ACTC') p
	    WHERE b.account_id = p_account_id), '[]'::json);
END;
$$;

-- The account's links to what the consent gives for it (at least one
-- right: bg_account_json leaves _links out without).
CREATE OR REPLACE FUNCTION bg_account_links(p_resource_id text,
    p_balances boolean, p_transactions boolean)
RETURNS json LANGUAGE sql STABLE AS $$
	SELECT CASE
	    WHEN p_balances AND p_transactions THEN json_build_object(
		'balances', json_build_object('href', '/xs2a/v1/accounts/'
		    || p_resource_id || '/balances'),
		'transactions', json_build_object('href', '/xs2a/v1/accounts/'
		    || p_resource_id || '/transactions'))
	    WHEN p_balances THEN json_build_object(
		'balances', json_build_object('href', '/xs2a/v1/accounts/'
		    || p_resource_id || '/balances'))
	    ELSE json_build_object(
		'transactions', json_build_object('href', '/xs2a/v1/accounts/'
		    || p_resource_id || '/transactions')) END;
$$;

-- accountDetails of one account (its columns, the rights the consent
-- gives for it, its balances or NULL): the links to what the consent
-- gives, the balances when given. One expression, so that PostgreSQL
-- inlines it into the list's one query.
CREATE OR REPLACE FUNCTION bg_account_json(p_resource_id text, p_iban text,
    p_currency text, p_name text, p_holder text, p_balances boolean,
    p_transactions boolean, p_balance_list json)
RETURNS json LANGUAGE sql STABLE AS $$
	-- Three shapes (a balance list comes only with the balances right),
	-- not json_strip_nulls, which would deparse and build again.
	SELECT CASE
	    WHEN NOT (p_balances OR p_transactions) THEN json_build_object(
		'resourceId', p_resource_id, 'iban', p_iban,
		'currency', p_currency, 'name', left(p_name, 70),
		'cashAccountType', 'CACC', 'status', 'enabled',
		'ownerName', left(p_holder, 140))
	    WHEN p_balance_list IS NULL THEN json_build_object(
		'resourceId', p_resource_id, 'iban', p_iban,
		'currency', p_currency, 'name', left(p_name, 70),
		'cashAccountType', 'CACC', 'status', 'enabled',
		'ownerName', left(p_holder, 140),
		'_links', bg_account_links(p_resource_id, p_balances,
		    p_transactions))
	    ELSE json_build_object(
		'resourceId', p_resource_id, 'iban', p_iban,
		'currency', p_currency, 'name', left(p_name, 70),
		'cashAccountType', 'CACC', 'status', 'enabled',
		'ownerName', left(p_holder, 140),
		'balances', p_balance_list,
		'_links', bg_account_links(p_resource_id, p_balances,
		    p_transactions)) END;
$$;

-- The account {account-id} names, as the consent covers it with the
-- right p_right ('balances', 'transactions'; NULL: the account alone),
-- and its booked transaction p_transaction_id (NULL: none asked for).
-- refusal: resource_not_covered (an account of the consent's PSU the
-- consent does not cover: 403), resource_unknown (any other account, or
-- transaction: 404, detail the path), consent_invalid (the right).
CREATE OR REPLACE FUNCTION bg_account_of(p_consent_id uuid, p_psu_id bigint,
    p_resource_id text, p_right text, p_transaction_id text,
    OUT refusal bg_refusal, OUT detail text, OUT id bigint, OUT iban text,
    OUT currency text, OUT resource_id text, OUT balances boolean,
    OUT transactions boolean)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
	a record;
BEGIN
	SELECT ac.id, ac.iban, ac.currency, ac.resource_id, ac.psu_id,
	    ca.account_id IS NOT NULL AS covered, ca.balances, ca.transactions
	INTO a
	FROM account ac
	LEFT JOIN consent_account ca ON ca.account_id = ac.id
	    AND ca.consent_id = p_consent_id
	WHERE ac.resource_id = p_resource_id;
	IF NOT FOUND OR (NOT a.covered AND a.psu_id IS DISTINCT FROM p_psu_id)
	THEN
		refusal := 'resource_unknown';
		detail := 'account-id';
		RETURN;
	END IF;
	IF NOT a.covered THEN
		refusal := 'resource_not_covered';
		RETURN;
	END IF;
	IF (p_right = 'balances' AND NOT a.balances)
	    OR (p_right = 'transactions' AND NOT a.transactions) THEN
		refusal := 'consent_invalid';
		detail := 'The consent does not give the ' || p_right
		    || ' of this account.';
		RETURN;
	END IF;
	IF p_transaction_id IS NOT NULL AND NOT EXISTS (SELECT 1
	    FROM account_transaction t
	    WHERE t.transaction_id = p_transaction_id
		AND t.account_id = a.id) THEN
		refusal := 'resource_unknown';
		detail := 'transactionId';
		RETURN;
	END IF;
	id := a.id;
	iban := a.iban;
	currency := a.currency;
	resource_id := a.resource_id;
	balances := a.balances;
	transactions := a.transactions;
END;
$$;

-- The checks every account information call starts with, in the order
-- of src/bg/README.md "Errors": bg_gate (token, certificate's TPP,
-- replay mark, a Consent-ID of the token's client), the consent (valid,
-- giving account information), for every endpoint but 'account-list'
-- the account and transaction (bg_account_of), then the unattended
-- limit and the access record (ais_access, the contract's, endpoint
-- p_endpoint). refusal NULL: the call answers its data.
CREATE OR REPLACE FUNCTION bg_ais_read(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_psu_ip inet, p_request_id uuid,
    p_consent_id uuid, p_limit integer, p_endpoint text, p_resource_id text,
    p_right text, p_transaction_id text, p_query text,
    p_continuation boolean,
    OUT refusal bg_refusal, OUT detail text, OUT consent_id uuid,
    OUT account_id bigint, OUT iban text, OUT currency text,
    OUT resource_id text, OUT balances boolean, OUT transactions boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
	g record;
	a record;
BEGIN
	g := bg_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_consent_id, 'ACCOUNT_INFORMATION');
	IF g.refusal IS NOT NULL THEN
		refusal := g.refusal;
		detail := g.detail;
		RETURN;
	END IF;
	IF g.status = 'expired' THEN
		refusal := 'consent_expired';
		RETURN;
	END IF;
	IF g.status <> 'valid' THEN
		refusal := 'consent_invalid';
		detail := 'The consent is ' || g.status || ', not valid.';
		RETURN;
	END IF;
	IF NOT ('ACCOUNT_INFORMATION' = ANY (g.scopes)) THEN
		refusal := 'consent_invalid';
		detail := 'The consent does not give account information.';
		RETURN;
	END IF;
	consent_id := g.consent_id;
	IF p_endpoint <> 'account-list' THEN
		a := bg_account_of(g.consent_id, g.psu_id,
		    p_resource_id, p_right, p_transaction_id);
		IF a.refusal IS NOT NULL THEN
			refusal := a.refusal;
			detail := a.detail;
			RETURN;
		END IF;
		account_id := a.id;
		iban := a.iban;
		currency := a.currency;
		resource_id := a.resource_id;
		balances := a.balances;
		transactions := a.transactions;
	END IF;
	IF NOT ais_access(g.consent_id, g.sca_at, p_endpoint, account_id,
	    p_request_id, p_query, p_continuation, p_psu_ip,
	    least(g.frequency, p_limit)) THEN
		refusal := 'access_exceeded';
	END IF;
END;
$$;

-- GET /xs2a/v1/accounts[?withBalance=true]
CREATE OR REPLACE FUNCTION bg_account_list(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_psu_ip inet, p_request_id uuid,
    p_consent_id uuid, p_limit integer, p_with_balance boolean)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	r record;
	v_consent uuid;
	body text;
BEGIN
	r := bg_ais_read(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_psu_ip, p_request_id, p_consent_id, p_limit,
	    'account-list', NULL, NULL, NULL, NULL, false);
	IF r.refusal IS NOT NULL THEN
		RETURN bg_refused(r.refusal, r.detail);
	END IF;
	-- Two statements, not one with p_with_balance in it: a parameter
	-- that simplifies the expression keeps PostgreSQL planning the
	-- statement anew for each call (a custom plan, about 0.4 ms here).
	v_consent := r.consent_id;
	IF p_with_balance THEN
		SELECT json_build_object('accounts', coalesce(json_agg(
		    bg_account_json(a.resource_id, a.iban, a.currency, a.name,
			a.holder_name, ca.balances, ca.transactions,
			CASE WHEN ca.balances
			    THEN bg_balances(a.id, a.currency) END)
		    ORDER BY ca.account_id), '[]'::json))::text
		INTO body
		FROM consent_account ca JOIN account a ON a.id = ca.account_id
		WHERE ca.consent_id = v_consent;
	ELSE
		SELECT json_build_object('accounts', coalesce(json_agg(
		    bg_account_json(a.resource_id, a.iban, a.currency, a.name,
			a.holder_name, ca.balances, ca.transactions, NULL)
		    ORDER BY ca.account_id), '[]'::json))::text
		INTO body
		FROM consent_account ca JOIN account a ON a.id = ca.account_id
		WHERE ca.consent_id = v_consent;
	END IF;
	RETURN ROW(NULL, NULL, 200, body, NULL)::bg_result;
END;
$$;

-- GET /xs2a/v1/accounts/{account-id}[?withBalance=true]
CREATE OR REPLACE FUNCTION bg_account(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_psu_ip inet, p_request_id uuid,
    p_consent_id uuid, p_limit integer, p_resource_id text,
    p_with_balance boolean)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	r := bg_ais_read(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_psu_ip, p_request_id, p_consent_id, p_limit,
	    'account-details', p_resource_id, NULL, NULL, NULL, false);
	IF r.refusal IS NOT NULL THEN
		RETURN bg_refused(r.refusal, r.detail);
	END IF;
	RETURN ROW(NULL, NULL, 200, (SELECT json_build_object('account',
	    bg_account_json(a.resource_id, a.iban, a.currency, a.name,
		a.holder_name, r.balances, r.transactions,
		CASE WHEN r.balances AND p_with_balance
		    THEN bg_balances(a.id, a.currency) END))
	    FROM account a WHERE a.id = r.account_id)::text,
	    NULL)::bg_result;
END;
$$;

-- GET /xs2a/v1/accounts/{account-id}/balances
CREATE OR REPLACE FUNCTION bg_account_balances(p_token_hash bytea,
    p_x5t text, p_org_id text, p_signed_id uuid, p_psu_ip inet,
    p_request_id uuid, p_consent_id uuid, p_limit integer,
    p_resource_id text)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	r := bg_ais_read(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_psu_ip, p_request_id, p_consent_id, p_limit,
	    'account-balance', p_resource_id, 'balances', NULL, NULL, false);
	IF r.refusal IS NOT NULL THEN
		RETURN bg_refused(r.refusal, r.detail);
	END IF;
	RETURN ROW(NULL, NULL, 200, json_build_object(
	    'account', json_build_object('iban', r.iban,
		'currency', r.currency),
	    'balances', bg_balances(r.account_id, r.currency))::text,
	    NULL)::bg_result;
END;
$$;

-- GET /xs2a/v1/accounts/{account-id}/transactions. p_booking: booked,
-- pending or both; p_to NULL: today. Booked transactions newest first,
-- p_page_size a page (pageIndex p_page); pending ones (payments that
-- passed SCA, not booked yet: ACTC) all on every page.
CREATE OR REPLACE FUNCTION bg_transactions(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_psu_ip inet, p_request_id uuid,
    p_consent_id uuid, p_limit integer, p_resource_id text,
    p_booking text, p_from date, p_to date, p_with_balance boolean,
    p_page integer, p_page_size integer)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	r record;
	v_to date := coalesce(p_to, current_date);
	booked json;
	pending json;
	more boolean := false;
	href text;
	links json;
	report json;
BEGIN
	-- The service has checked the period (src/bg/transactions.c).
	r := bg_ais_read(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_psu_ip, p_request_id, p_consent_id, p_limit,
	    'transactions', p_resource_id, 'transactions', NULL,
	    p_booking || ':' || p_from || '/' || v_to, p_page > 0);
	IF r.refusal IS NOT NULL THEN
		RETURN bg_refused(r.refusal, r.detail);
	END IF;

	href := '/xs2a/v1/accounts/' || r.resource_id
	    || '/transactions?bookingStatus=' || p_booking
	    || '&dateFrom=' || to_char(p_from, 'YYYY-MM-DD')
	    || '&dateTo=' || to_char(v_to, 'YYYY-MM-DD')
	    || CASE WHEN p_with_balance THEN '&withBalance=true' ELSE '' END
	    || '&pageIndex=';
	IF p_booking IN ('booked', 'both') THEN
		-- Each entry as its row stores it (account_transaction_entry,
		-- functions/30_ais.sql).
		SELECT coalesce(json_agg(x.bg_entry
		    ORDER BY x.booking_date DESC, x.id DESC)
		    FILTER (WHERE x.n <= p_page_size), '[]'::json),
		    count(*) > p_page_size
		INTO booked, more
		FROM (SELECT t.*, row_number() OVER (ORDER BY t.booking_date
			DESC, t.id DESC) AS n
		    FROM (SELECT * FROM account_transaction
			WHERE account_id = r.account_id
			    AND booking_date BETWEEN p_from AND v_to
			ORDER BY booking_date DESC, id DESC
			LIMIT p_page_size + 1
			OFFSET p_page::bigint * p_page_size) t) x;
	END IF;
	IF p_booking IN ('pending', 'both') THEN
		SELECT coalesce(json_agg(json_build_object(
		    'transactionAmount', bg_amount(-p.amount_minor, p.currency),
		    'creditorName', p.creditor_name,
		    'creditorAccount', json_build_object('iban',
			p.creditor_iban),
		    'remittanceInformationUnstructured', p.remittance)
		    ORDER BY p.status_at DESC, p.id), '[]'::json)
		INTO pending
		FROM payment p
		WHERE p.debtor_account_id = r.account_id
		    AND p.transaction_status = 'ACTC';
	END IF;

	-- first, next and previous page the booked transactions only.
	links := json_strip_nulls(json_build_object(
	    'account', json_build_object('href',
		'/xs2a/v1/accounts/' || r.resource_id),
	    'first', CASE WHEN booked IS NOT NULL THEN
		json_build_object('href', href || 0) END,
	    'next', CASE WHEN more THEN
		json_build_object('href', href || (p_page + 1)) END,
	    'previous', CASE WHEN booked IS NOT NULL AND p_page > 0 THEN
		json_build_object('href', href || (p_page - 1)) END));
	-- Built without json_strip_nulls over the whole page: it would walk
	-- every entry again.
	report := CASE
	    WHEN booked IS NOT NULL AND pending IS NOT NULL THEN
		json_build_object('booked', booked, 'pending', pending,
		    '_links', links)
	    WHEN booked IS NOT NULL THEN
		json_build_object('booked', booked, '_links', links)
	    ELSE json_build_object('pending', pending, '_links', links) END;
	IF p_with_balance AND r.balances THEN
		RETURN ROW(NULL, NULL, 200, json_build_object(
		    'account', json_build_object('iban', r.iban,
			'currency', r.currency),
		    'transactions', report,
		    'balances', bg_balances(r.account_id, r.currency))::text,
		    NULL)::bg_result;
	END IF;
	RETURN ROW(NULL, NULL, 200, json_build_object(
	    'account', json_build_object('iban', r.iban,
		'currency', r.currency),
	    'transactions', report)::text, NULL)::bg_result;
END;
$$;

-- GET /xs2a/v1/accounts/{account-id}/transactions/{transactionId}: a
-- booked transaction of the account.
CREATE OR REPLACE FUNCTION bg_transaction_details(p_token_hash bytea,
    p_x5t text, p_org_id text, p_signed_id uuid, p_psu_ip inet,
    p_request_id uuid, p_consent_id uuid, p_limit integer,
    p_resource_id text, p_transaction_id text)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	r := bg_ais_read(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_psu_ip, p_request_id, p_consent_id, p_limit,
	    'transaction-details', p_resource_id, 'transactions',
	    p_transaction_id, NULL, false);
	IF r.refusal IS NOT NULL THEN
		RETURN bg_refused(r.refusal, r.detail);
	END IF;
	RETURN ROW(NULL, NULL, 200, (SELECT json_build_object(
	    'transactionsDetails', t.bg_entry)
	    FROM account_transaction t
	    WHERE t.transaction_id = p_transaction_id
		AND t.account_id = r.account_id)::text, NULL)::bg_result;
END;
$$;

-- POST /xs2a/v1/funds-confirmations: the token's consent must give
-- FUND_AVAILABILITY (a PSU's token of the contract's flow); Consent-ID,
-- if sent, must name it (bg_gate). The check is the contract's
-- (ais_funds_check).
CREATE OR REPLACE FUNCTION bg_funds_confirmation(p_token_hash bytea,
    p_x5t text, p_org_id text, p_signed_id uuid, p_psu_ip inet,
    p_request_id uuid, p_consent_id uuid, p_iban text, p_currency text,
    p_amount_minor bigint)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	g record;
	c record;
	ok boolean;
BEGIN
	g := bg_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_consent_id, 'FUND_AVAILABILITY');
	IF g.refusal IS NOT NULL THEN
		RETURN bg_refused(g.refusal, g.detail);
	END IF;
	IF g.token_consent IS NULL THEN
		RETURN bg_refused('consent_invalid', 'The access token does '
		    'not carry FUND_AVAILABILITY.');
	END IF;
	SELECT bg_consent_status(k.status, k.valid_until, k.created_at)
	    AS status, k.sca_at
	INTO c
	FROM consent k WHERE k.id = g.token_consent;
	IF c.status = 'expired' THEN
		RETURN bg_refused('consent_expired', NULL);
	ELSIF c.status IS DISTINCT FROM 'valid' THEN
		RETURN bg_refused('consent_invalid', 'The consent is '
		    || c.status || ', not valid.');
	END IF;
	ok := ais_funds_check(g.token_consent, c.sca_at, p_request_id,
	    p_psu_ip, p_iban, p_currency, p_amount_minor);
	IF ok IS NULL THEN
		RETURN bg_refused('resource_unknown', 'account.iban');
	END IF;
	RETURN ROW(NULL, NULL, 200,
	    json_build_object('fundsAvailable', ok)::text, NULL)::bg_result;
END;
$$;
