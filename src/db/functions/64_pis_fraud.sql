-- Fraud marks of payments and the semi-annual fraud statistics (EBA
-- Guidelines on fraud reporting under PSD2, EBA/GL/2018/05). The table
-- and its rules: migration 185. Only an executed payment (ACSC) can be
-- marked: a payment that was rejected, cancelled or is still waiting moved
-- no money, and the guidelines count executed transactions only.

-- The payment's mark now: its newest fraud_mark row, NULL when none.
CREATE OR REPLACE FUNCTION fraud_current(p_payment_id uuid)
RETURNS fraud_mark LANGUAGE sql STABLE AS $$
	SELECT * FROM fraud_mark WHERE payment_id = p_payment_id
	ORDER BY id DESC LIMIT 1;
$$;

-- The fraud type of a payment now (NULL: not marked, or withdrawn).
CREATE OR REPLACE FUNCTION fraud_type_now(p_payment_id uuid)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT fraud_type FROM fraud_mark WHERE payment_id = p_payment_id
	ORDER BY id DESC LIMIT 1;
$$;

-- EUR minor units (cents) as a decimal ("1234.05"), without floating
-- point.
CREATE OR REPLACE FUNCTION fraud_eur(p_minor numeric)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN p_minor < 0 THEN '-' ELSE '' END ||
	    div(abs(p_minor), 100)::text || '.' ||
	    lpad(mod(abs(p_minor), 100)::text, 2, '0');
$$;

CREATE OR REPLACE FUNCTION fraud_time(p_at timestamptz)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "UTC"');
$$;

-- Writes one mark and its audit row (fraud.mark, fraud.correct,
-- fraud.withdraw). The caller has checked the rules.
CREATE OR REPLACE FUNCTION fraud_mark_write(p_payment_id uuid,
    p_action text, p_type text, p_by text, p_actor text, p_reason text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO fraud_mark (payment_id, action, fraud_type, reported_by,
	    actor, reason)
	VALUES (p_payment_id, p_action, p_type, p_by, p_actor, p_reason);
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'fraud.' || p_action, jsonb_strip_nulls(
	    jsonb_build_object('payment', p_payment_id, 'type', p_type,
	    'reported_by', p_by, 'reason', p_reason)));
END;
$$;

-- The PSU's payments page: psu_payments and the fraud type now of each
-- of the PSU's marked payments ({"<payment id>": "<type>"}).
CREATE OR REPLACE FUNCTION psu_payments_fraud(p_session_hash bytea,
    p_idle integer, OUT psu_id bigint, OUT payments json, OUT marks json)
LANGUAGE plpgsql AS $$
BEGIN
	SELECT s.psu_id, s.payments INTO psu_id, payments
	FROM psu_payments(p_session_hash, p_idle) s;
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(json_object_agg(p.id, fraud_type_now(p.id)), '{}')
	INTO marks
	FROM payment p
	WHERE p.psu_id = psu_payments_fraud.psu_id
	    AND EXISTS (SELECT 1 FROM fraud_mark m WHERE m.payment_id = p.id)
	    AND fraud_type_now(p.id) IS NOT NULL;
END;
$$;

-- Whether the PSU of the session (p_psu_id, from the form's token) may
-- mark payment p_id: no_session, unknown (none or another PSU's),
-- not_executed, already (marked now), or ok; with the payment for the
-- confirmation page.
CREATE OR REPLACE FUNCTION psu_fraud_check(p_session_hash bytea,
    p_idle integer, p_psu_id bigint, p_id uuid,
    OUT outcome text, OUT info json)
LANGUAGE plpgsql AS $$
DECLARE
	p payment%ROWTYPE;
BEGIN
	IF session_psu(p_session_hash, p_idle) IS DISTINCT FROM p_psu_id THEN
		outcome := 'no_session';
		RETURN;
	END IF;
	SELECT * INTO p FROM payment WHERE id = p_id AND psu_id = p_psu_id;
	IF NOT FOUND THEN
		outcome := 'unknown';
		RETURN;
	END IF;
	info := json_build_object('id', p.id,
	    'created', fraud_time(p.created_at),
	    'amount_minor', p.amount_minor, 'currency', p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban, 'debtor_iban', p.debtor_iban,
	    'remittance', p.remittance, 'status', p.transaction_status,
	    'fraud_type', fraud_type_now(p.id));
	IF p.transaction_status <> 'ACSC' THEN
		outcome := 'not_executed';
	ELSIF fraud_type_now(p.id) IS NOT NULL THEN
		outcome := 'already';
	ELSE
		outcome := 'ok';
	END IF;
END;
$$;

-- The PSU marks their executed payment p_id as fraud of type p_type
-- (p_reason: their own words, or NULL). Result: ok, no_session,
-- unknown, not_executed, already (marked before, with another type or by
-- staff), bad_input. The same mark posted again (double click, back
-- button) is ok and writes nothing.
CREATE OR REPLACE FUNCTION psu_fraud_mark(p_session_hash bytea,
    p_idle integer, p_psu_id bigint, p_id uuid, p_type text,
    p_reason text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c record;
	m fraud_mark%ROWTYPE;
	v_actor text;
BEGIN
	SELECT * INTO c FROM psu_fraud_check(p_session_hash, p_idle,
	    p_psu_id, p_id);
	IF c.outcome IN ('no_session', 'unknown', 'not_executed') THEN
		RETURN c.outcome;
	END IF;
	IF p_type IS NULL OR p_type NOT IN ('issued_by_fraudster',
	    'modified_by_fraudster', 'payer_manipulated') OR
	    char_length(p_reason) > 500 OR p_reason ~ '[[:cntrl:]]' THEN
		RETURN 'bad_input';
	END IF;
	SELECT 'psu:' || username INTO v_actor FROM psu WHERE id = p_psu_id;
	-- One mark at a time per payment: concurrent posts wait here.
	PERFORM 1 FROM payment WHERE id = p_id FOR UPDATE;
	m := fraud_current(p_id);
	IF m.fraud_type IS NOT NULL THEN
		IF m.reported_by = 'psu' AND m.actor = v_actor AND
		    m.fraud_type = p_type THEN
			RETURN 'ok';
		END IF;
		RETURN 'already';
	END IF;
	PERFORM fraud_mark_write(p_id, 'mark', p_type, 'psu', v_actor,
	    nullif(btrim(p_reason), ''));
	RETURN 'ok';
END;
$$;

-- Staff: mark (no mark now), correct (another type than now) or withdraw
-- (a mark now) payment p_id, with a reason. Result: ok, unknown,
-- not_executed, bad_input, not_marked (correct or withdraw without a
-- mark), already (mark while marked), same (correct to the type it has).
CREATE OR REPLACE FUNCTION staff_fraud_act(p_actor text, p_id uuid,
    p_action text, p_type text, p_reason text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v_status text;
	v_now text;
BEGIN
	SELECT transaction_status INTO v_status FROM payment WHERE id = p_id
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'unknown';
	END IF;
	IF v_status <> 'ACSC' THEN
		RETURN 'not_executed';
	END IF;
	p_reason := btrim(p_reason);
	IF coalesce(p_action, '') NOT IN ('mark', 'correct', 'withdraw') OR
	    coalesce(p_reason, '') = '' OR char_length(p_reason) > 500 OR
	    p_reason ~ '[[:cntrl:]]' OR (p_action <> 'withdraw' AND
	    coalesce(p_type, '') NOT IN ('issued_by_fraudster',
	    'modified_by_fraudster', 'payer_manipulated')) THEN
		RETURN 'bad_input';
	END IF;
	v_now := fraud_type_now(p_id);
	IF p_action = 'mark' AND v_now IS NOT NULL THEN
		RETURN 'already';
	END IF;
	IF p_action <> 'mark' AND v_now IS NULL THEN
		RETURN 'not_marked';
	END IF;
	IF p_action = 'correct' AND v_now = p_type THEN
		RETURN 'same';
	END IF;
	PERFORM fraud_mark_write(p_id, p_action, CASE WHEN p_action <>
	    'withdraw' THEN p_type END, 'staff', p_actor, p_reason);
	RETURN 'ok';
END;
$$;

-- The staff list: payments that have a mark (withdrawn ones too),
-- newest act first, p_limit a page (p_page from 0). p_type: a type, or
-- "withdrawn"; p_by: psu or staff (who made the newest act); p_psu: a
-- PSU's username. NULL or '' for no filter. (PL/pgSQL: staff_list_page
-- is defined in 70_staff.sql, after this file.)
CREATE OR REPLACE FUNCTION staff_fraud_json(p_type text, p_by text,
    p_psu text, p_page integer, p_limit integer)
RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN (WITH now_mark AS (
		SELECT DISTINCT ON (payment_id) *
		FROM fraud_mark ORDER BY payment_id, id DESC
	), r AS (
		SELECT m.*, p.amount_minor, p.currency, p.creditor_name,
		    p.creditor_iban, p.status_at AS executed_at, u.username
		FROM now_mark m
		JOIN payment p ON p.id = m.payment_id
		JOIN psu u ON u.id = p.psu_id
		WHERE (coalesce(p_type, '') = '' OR
			coalesce(m.fraud_type, 'withdrawn') = p_type)
		    AND (coalesce(p_by, '') = '' OR m.reported_by = p_by)
		    AND (coalesce(p_psu, '') = '' OR u.username = p_psu)
		ORDER BY m.id DESC
		LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit
	)
	SELECT staff_list_page('rows', coalesce(jsonb_agg(jsonb_build_object(
	    'payment', r.payment_id, 'psu', r.username,
	    'amount', fraud_eur(r.amount_minor) || ' ' || r.currency,
	    'creditor_name', r.creditor_name,
	    'creditor_iban', r.creditor_iban,
	    'executed', fraud_time(r.executed_at),
	    'type', coalesce(r.fraud_type, 'withdrawn'),
	    'action', r.action, 'reported_by', r.reported_by,
	    'actor', r.actor, 'reason', r.reason,
	    'at', fraud_time(r.created_at)) ORDER BY r.id DESC), '[]'),
	    p_page, p_limit)
	FROM r);
END;
$$;

-- One payment for the staff's marking page: the payment, its type now
-- and every act on it, oldest first. NULL when no such payment.
CREATE OR REPLACE FUNCTION staff_fraud_payment_json(p_id uuid)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('payment', jsonb_build_object(
	    'id', p.id, 'psu', u.username, 'status', p.transaction_status,
	    'executed', p.transaction_status = 'ACSC',
	    'status_at', fraud_time(p.status_at),
	    'created', fraud_time(p.created_at),
	    'amount', fraud_eur(p.amount_minor) || ' ' || p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban, 'debtor_iban', p.debtor_iban,
	    'remittance', p.remittance, 'tpp', t.name),
	    'type', fraud_type_now(p.id),
	    'history', (SELECT coalesce(jsonb_agg(jsonb_build_object(
		'action', m.action, 'type', m.fraud_type,
		'reported_by', m.reported_by, 'actor', m.actor,
		'reason', m.reason, 'at', fraud_time(m.created_at))
		ORDER BY m.id), '[]')
		FROM fraud_mark m WHERE m.payment_id = p.id))
	FROM payment p
	JOIN psu u ON u.id = p.psu_id
	JOIN tpp t ON t.id = p.tpp_id
	WHERE p.id = p_id;
$$;

-- ---- The semi-annual statistics --------------------------------------

-- The countries of the EEA (the guidelines' "cross-border within the
-- EEA"), by the ISO 3166 code an IBAN starts with.
CREATE OR REPLACE FUNCTION fraud_eea(p_country text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
	SELECT p_country = ANY ('{AT,BE,BG,CY,CZ,DE,DK,EE,ES,FI,FR,GR,HR,HU,'
	    'IE,IS,IT,LI,LT,LU,LV,MT,NL,NO,PL,PT,RO,SE,SI,SK}'::text[]);
$$;

-- The bank's legal time (the time zone of its country's capital): the
-- half-year the national authority asks for is a calendar half-year in
-- that country, so a payment executed at 00:30 on 1 January in Berlin
-- (23:30 UTC the day before) belongs to the new year.
CREATE OR REPLACE FUNCTION fraud_country_tz(p_country text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE p_country
	    WHEN 'AT' THEN 'Europe/Vienna' WHEN 'BE' THEN 'Europe/Brussels'
	    WHEN 'BG' THEN 'Europe/Sofia' WHEN 'CY' THEN 'Asia/Nicosia'
	    WHEN 'CZ' THEN 'Europe/Prague' WHEN 'DE' THEN 'Europe/Berlin'
	    WHEN 'DK' THEN 'Europe/Copenhagen' WHEN 'EE' THEN 'Europe/Tallinn'
	    WHEN 'ES' THEN 'Europe/Madrid' WHEN 'FI' THEN 'Europe/Helsinki'
	    WHEN 'FR' THEN 'Europe/Paris' WHEN 'GR' THEN 'Europe/Athens'
	    WHEN 'HR' THEN 'Europe/Zagreb' WHEN 'HU' THEN 'Europe/Budapest'
	    WHEN 'IE' THEN 'Europe/Dublin' WHEN 'IS' THEN 'Atlantic/Reykjavik'
	    WHEN 'IT' THEN 'Europe/Rome' WHEN 'LI' THEN 'Europe/Vaduz'
	    WHEN 'LT' THEN 'Europe/Vilnius' WHEN 'LU' THEN 'Europe/Luxembourg'
	    WHEN 'LV' THEN 'Europe/Riga' WHEN 'MT' THEN 'Europe/Malta'
	    WHEN 'NL' THEN 'Europe/Amsterdam' WHEN 'NO' THEN 'Europe/Oslo'
	    WHEN 'PL' THEN 'Europe/Warsaw' WHEN 'PT' THEN 'Europe/Lisbon'
	    WHEN 'RO' THEN 'Europe/Bucharest' WHEN 'SE' THEN 'Europe/Stockholm'
	    WHEN 'SI' THEN 'Europe/Ljubljana' WHEN 'SK' THEN 'Europe/Bratislava'
	    END;
$$;

-- The guidelines' table for credit transfers (Annex 2, data breakdown
-- A) over the payments executed (ACSC, by status_at, the time the booking
-- made it ACSC) in half-year p_half ("2026H2": 1 July 00:00 to 1 January
-- 00:00 in the bank's time) of the bank in country p_country. One row per
-- item and geography (all, domestic, cross_border_eea,
-- cross_border_non_eea: the creditor IBAN's country against the bank's).
-- A column that the guidelines leave empty for an item is NULL. Values in
-- EUR cents (every payment is EUR: pis_initiate refuses a debtor account
-- in another currency). Fraudulent: the payment's mark now (fraud_mark).
-- Raises on a malformed half or an unknown country.
CREATE OR REPLACE FUNCTION fraud_report(p_half text, p_country text)
RETURNS TABLE (ord integer, code text, item text, area text,
    volume bigint, value_minor numeric, fraud_volume bigint,
    fraud_value_minor numeric)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_tz text := fraud_country_tz(p_country);
	v_from timestamptz;
	v_to timestamptz;
BEGIN
	IF p_half IS NULL OR p_half !~ '^[0-9]{4}H[12]$' THEN
		RAISE EXCEPTION 'half-year % is not YYYYH1 or YYYYH2', p_half
		    USING ERRCODE = '22023';
	END IF;
	IF v_tz IS NULL THEN
		RAISE EXCEPTION 'country % is not in the EEA', p_country
		    USING ERRCODE = '22023';
	END IF;
	v_from := make_timestamptz(left(p_half, 4)::integer,
	    CASE right(p_half, 1) WHEN '1' THEN 1 ELSE 7 END, 1, 0, 0, 0,
	    v_tz);
	v_to := (v_from AT TIME ZONE v_tz + interval '6 months')
	    AT TIME ZONE v_tz;
	IF EXISTS (SELECT 1 FROM payment WHERE transaction_status = 'ACSC'
	    AND status_at >= v_from AND status_at < v_to
	    AND currency <> 'EUR') THEN
		RAISE EXCEPTION 'payments in another currency than EUR in %',
		    p_half;
	END IF;
	RETURN QUERY
	WITH b AS (
		SELECT p.id, p.amount_minor,
		    CASE WHEN left(p.creditor_iban, 2) = p_country
			THEN 'domestic'
			WHEN fraud_eea(left(p.creditor_iban, 2))
			THEN 'cross_border_eea'
			ELSE 'cross_border_non_eea' END AS geo,
		    EXISTS (SELECT 1 FROM payment_authorisation a
			WHERE a.payment_id = p.id
			AND a.sca_status = 'finalised') AS sca,
		    fraud_type_now(p.id) AS ftype
		FROM payment p
		WHERE p.transaction_status = 'ACSC'
		    AND p.status_at >= v_from AND p.status_at < v_to
	), d (d_ord, d_code, d_item, d_kind, d_sca, d_type) AS (VALUES
	    (1, '1', 'Credit transfers', 'all', NULL::boolean, NULL::text),
	    (2, '1.1', 'Of which initiated by payment initiation service '
		'providers', 'all', NULL, NULL),
	    (3, '1.2', 'Initiated non-electronically', 'zero', NULL, NULL),
	    (4, '1.3', 'Initiated electronically', 'all', NULL, NULL),
	    (5, '1.3.1', 'Of which initiated via remote payment channel',
		'all', NULL, NULL),
	    (6, '1.3.1.1', 'Of which authenticated via strong customer '
		'authentication', 'all', true, NULL),
	    (7, '1.3.1.1.1', 'Of which fraudulent, by fraud type: issuance '
		'of a payment order by the fraudster', 'type', true,
		'issued_by_fraudster'),
	    (8, '1.3.1.1.2', 'Of which fraudulent, by fraud type: '
		'modification of a payment order by the fraudster', 'type',
		true, 'modified_by_fraudster'),
	    (9, '1.3.1.1.3', 'Of which fraudulent, by fraud type: '
		'manipulation of the payer by the fraudster to issue a '
		'payment order', 'type', true, 'payer_manipulated'),
	    (10, '1.3.1.2', 'Of which authenticated via non-strong customer '
		'authentication', 'all', false, NULL),
	    (11, '1.3.1.2.1', 'Of which fraudulent, by fraud type: issuance '
		'of a payment order by the fraudster', 'type', false,
		'issued_by_fraudster'),
	    (12, '1.3.1.2.2', 'Of which fraudulent, by fraud type: '
		'modification of a payment order by the fraudster', 'type',
		false, 'modified_by_fraudster'),
	    (13, '1.3.1.2.3', 'Of which fraudulent, by fraud type: '
		'manipulation of the payer by the fraudster to issue a '
		'payment order', 'type', false, 'payer_manipulated'),
	    -- psd2gate applies no exemption from SCA: these are zero.
	    (14, '1.3.1.2.4', 'Of which by reason for not applying strong '
		'customer authentication: low value (RTS Art. 16)', 'zero',
		NULL, NULL),
	    (15, '1.3.1.2.5', 'Of which by reason for not applying strong '
		'customer authentication: payment to self (RTS Art. 15)',
		'zero', NULL, NULL),
	    (16, '1.3.1.2.6', 'Of which by reason for not applying strong '
		'customer authentication: trusted beneficiary (RTS Art. 13)',
		'zero', NULL, NULL),
	    (17, '1.3.1.2.7', 'Of which by reason for not applying strong '
		'customer authentication: recurring transaction (RTS Art. '
		'14)', 'zero', NULL, NULL),
	    (18, '1.3.1.2.8', 'Of which by reason for not applying strong '
		'customer authentication: secure corporate payment processes '
		'or protocols (RTS Art. 17)', 'zero', NULL, NULL),
	    (19, '1.3.1.2.9', 'Of which by reason for not applying strong '
		'customer authentication: transaction risk analysis (RTS '
		'Art. 18)', 'zero', NULL, NULL),
	    (20, '1.3.2', 'Of which initiated via non-remote payment '
		'channel', 'zero', NULL, NULL)
	), g (g_ord, g_area) AS (VALUES (1, 'all'), (2, 'domestic'),
	    (3, 'cross_border_eea'), (4, 'cross_border_non_eea'))
	SELECT (d.d_ord * 10 + g.g_ord)::integer, d.d_code, d.d_item,
	    g.g_area,
	    CASE WHEN d.d_kind = 'type' THEN NULL ELSE count(b.id) END,
	    CASE WHEN d.d_kind = 'type' THEN NULL
		ELSE coalesce(sum(b.amount_minor), 0) END,
	    count(b.id) FILTER (WHERE b.ftype IS NOT NULL),
	    coalesce(sum(b.amount_minor) FILTER (WHERE b.ftype IS NOT NULL),
		0)
	FROM d CROSS JOIN g
	LEFT JOIN b ON d.d_kind <> 'zero'
	    AND (g.g_area = 'all' OR b.geo = g.g_area)
	    AND (d.d_sca IS NULL OR b.sca = d.d_sca)
	    AND (d.d_type IS NULL OR b.ftype = d.d_type)
	GROUP BY d.d_ord, d.d_code, d.d_item, d.d_kind, g.g_ord, g.g_area
	ORDER BY d.d_ord, g.g_ord;
END;
$$;

-- fraud_report as CSV (RFC 4180, CRLF, a header line): what psd2ctl
-- report fraud --csv prints and the staff page's download serves.
CREATE OR REPLACE FUNCTION fraud_report_csv(p_half text, p_country text)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT 'row,item,geography,volume,value_eur,fraudulent_volume,'
	    'fraudulent_value_eur' || E'\r\n' || string_agg(concat_ws(',',
	    r.code, '"' || replace(r.item, '"', '""') || '"', r.area,
	    coalesce(r.volume::text, ''),
	    coalesce(fraud_eur(r.value_minor), ''),
	    r.fraud_volume::text, fraud_eur(r.fraud_value_minor)) || E'\r\n',
	    '' ORDER BY r.ord)
	FROM fraud_report(p_half, p_country) r;
$$;
