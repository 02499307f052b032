-- Transaction monitoring (RTS Art. 2): the risk assessment of a payment
-- before SCA, the staff review of held payments (four eyes), and the
-- configuration's writers (rules, levels, block list; psd2ctl risk).
-- The tables are schema: migrations/180_risk_monitoring.sql. The current
-- definition of each function, applied whole after the migrations
-- (src/db/README.md).

-- One rule that fired, as kept in payment.risk_rules.
CREATE OR REPLACE FUNCTION pis_risk_hit(p_rule text, p_score integer,
    p_value text, p_threshold text)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT jsonb_build_object('rule', p_rule, 'score', p_score,
	    'value', p_value, 'threshold', p_threshold);
$$;

-- The assessment of a payment that PSU p_psu_id is initiating (called
-- by pis_initiate in its transaction, before the payment row exists):
-- every enabled rule of risk_rule, each of its history queries on the
-- index payment_psu (psu_id, created_at) within the rule's window; the
-- PSU's history counts what passed SCA (ACTC, ACSC), except velocity,
-- which counts every attempt. score: the sum of the fired rules' scores;
-- level and action: the risk_level with the highest min_score not above
-- it; rules: the fired rules (rule, score, value, threshold), in rule
-- order. Money stays integer minor units (the percentile is one of the
-- amounts, percentile_disc).
CREATE OR REPLACE FUNCTION pis_risk_assess(p_psu_id bigint, p_product text,
    p_creditor text, p_amount bigint, p_psu_ip inet, OUT score integer,
    OUT level text, OUT action text, OUT rules jsonb)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	r record;
	n bigint;
	v bigint;
	t time;
	t_from time;
	t_to time;
	len integer;
BEGIN
	score := 0;
	rules := '[]';
	FOR r IN SELECT k.rule, k.score, k.params AS p FROM risk_rule k
	    WHERE k.enabled ORDER BY k.rule LOOP
		IF r.rule = 'amount_history' THEN
			SELECT count(*), percentile_disc(CASE
			    WHEN r.p->>'statistic' = 'p90' THEN 0.9 ELSE 0.5 END)
			    WITHIN GROUP (ORDER BY amount_minor) INTO n, v
			FROM payment WHERE psu_id = p_psu_id
			    AND created_at >= now() - make_interval(days =>
				(r.p->>'days')::integer)
			    AND transaction_status IN ('ACTC', 'ACSC');
			IF n >= (r.p->>'min_payments')::integer AND p_amount * 100
			    > v * (r.p->>'percent')::bigint THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    p_amount::text, (v * (r.p->>'percent')::bigint
				    / 100)::text);
				score := score + r.score;
			END IF;
		ELSIF r.rule = 'new_payee' THEN
			PERFORM 1 FROM payment WHERE psu_id = p_psu_id
			    AND created_at >= now() - make_interval(days =>
				(r.p->>'days')::integer)
			    AND creditor_iban = p_creditor
			    AND transaction_status IN ('ACTC', 'ACSC');
			IF NOT FOUND THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    p_creditor, (r.p->>'days') || ' days');
				score := score + r.score;
			END IF;
		ELSIF r.rule IN ('velocity_count', 'velocity_sum') THEN
			SELECT count(*) + 1, coalesce(sum(amount_minor) FILTER (
			    WHERE transaction_status NOT IN ('RJCT', 'CANC')), 0)
			    + p_amount INTO n, v
			FROM payment WHERE psu_id = p_psu_id
			    AND created_at >= now() - make_interval(mins =>
				(r.p->>'minutes')::integer);
			IF r.rule = 'velocity_count'
			    AND n > (r.p->>'count')::integer THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    n::text, (r.p->>'count') || ' in '
				    || (r.p->>'minutes') || ' min');
				score := score + r.score;
			ELSIF r.rule = 'velocity_sum'
			    AND v > (r.p->>'sum_minor')::bigint THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    v::text, (r.p->>'sum_minor') || ' in '
				    || (r.p->>'minutes') || ' min');
				score := score + r.score;
			END IF;
		ELSIF r.rule = 'unusual_ip' AND p_psu_ip IS NOT NULL THEN
			len := CASE family(p_psu_ip) WHEN 4 THEN
			    (r.p->>'prefix_v4')::integer
			    ELSE (r.p->>'prefix_v6')::integer END;
			SELECT count(*), count(*) FILTER (WHERE psu_ip_address
			    <<= network(set_masklen(p_psu_ip, len))) INTO n, v
			FROM payment WHERE psu_id = p_psu_id
			    AND created_at >= now() - make_interval(days =>
				(r.p->>'days')::integer)
			    AND psu_ip_address IS NOT NULL
			    AND transaction_status IN ('ACTC', 'ACSC');
			IF n >= (r.p->>'min_payments')::integer AND v = 0 THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    host(p_psu_ip), 'none of ' || n || ' in /'
				    || len);
				score := score + r.score;
			END IF;
		ELSIF r.rule = 'blocklist' THEN
			PERFORM 1 FROM risk_blocklist WHERE iban = p_creditor;
			IF FOUND THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    p_creditor, 'block list');
				score := score + r.score;
			END IF;
		ELSIF r.rule = 'instant_night'
		    AND p_product = 'instant-sepa-credit-transfers' THEN
			t := (now() AT TIME ZONE (r.p->>'time_zone'))::time;
			t_from := (r.p->>'from')::time;
			t_to := (r.p->>'to')::time;
			IF (t_from <= t_to AND t >= t_from AND t < t_to)
			    OR (t_from > t_to AND (t >= t_from OR t < t_to)) THEN
				rules := rules || pis_risk_hit(r.rule, r.score,
				    to_char(t, 'HH24:MI') || ' '
				    || (r.p->>'time_zone'), (r.p->>'from') || '-'
				    || (r.p->>'to'));
				score := score + r.score;
			END IF;
		END IF;
	END LOOP;
	SELECT l.level, l.action INTO level, action FROM risk_level l
	WHERE l.min_score <= score ORDER BY l.min_score DESC, l.level LIMIT 1;
END;
$$;

-- What pis_initiate does with the assessment of payment p_id (its row
-- written already): the audit row of the decision (proceeded, held or
-- rejected: each decision is one, RTS Art. 2), and for a hold the review, which keeps what the release gives the SCA (p_sca_seconds
-- from the release, the initiation's nonce). SECURITY DEFINER: only
-- these functions write payment_review (migration 180).
CREATE OR REPLACE FUNCTION pis_risk_decided(p_id uuid, p_sca_seconds integer,
    p_nonce bytea)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	p record;
BEGIN
	SELECT py.held, py.transaction_status, py.risk_score, py.risk_level,
	    py.risk_rules, u.username INTO p
	FROM payment py JOIN psu u ON u.id = py.psu_id WHERE py.id = p_id;
	IF p.held THEN
		INSERT INTO payment_review (payment_id, sca_seconds, nonce)
		VALUES (p_id, p_sca_seconds, p_nonce);
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES ('system:risk', 'payment.risk', jsonb_build_object(
	    'payment', p_id, 'psu', p.username, 'score', p.risk_score,
	    'level', p.risk_level, 'outcome', CASE WHEN p.held THEN 'held'
		WHEN p.transaction_status = 'RJCT' THEN 'rejected'
		ELSE 'proceeded' END,
	    'rules', (SELECT coalesce(jsonb_agg(e->>'rule'), '[]')
		FROM jsonb_array_elements(p.risk_rules) e)));
END;
$$;

-- What the TPP is told about a payment held for review (general: never
-- the rules).
CREATE OR REPLACE FUNCTION pis_risk_psu_message()
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT 'The bank is checking this payment. It can be authorised '
	    'once the check is complete.'::text;
$$;

-- ---- The staff review queue (/staff/reviews) ----------------------

-- A review row as the list and the detail page show it.
CREATE OR REPLACE FUNCTION staff_review_row(p payment, r payment_review)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('id', p.id,
	    'created', to_char(p.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI:SS "UTC"'),
	    'psu', (SELECT username FROM psu WHERE id = p.psu_id),
	    'tpp', (SELECT name FROM tpp WHERE id = p.tpp_id),
	    'product', p.product,
	    'amount', ais_amount(p.amount_minor, p.currency)::text,
	    'currency', p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban,
	    'debtor_iban', p.debtor_iban,
	    'psu_ip', host(p.psu_ip_address),
	    'score', p.risk_score, 'level', p.risk_level,
	    'rules', coalesce(p.risk_rules, '[]'),
	    'rule_names', (SELECT string_agg(e->>'rule', ', ')
		FROM jsonb_array_elements(p.risk_rules) e),
	    'status', CASE WHEN r.status IN ('open', 'proposed')
		AND NOT p.held THEN 'closed' ELSE r.status END,
	    'transaction_status', p.transaction_status,
	    'proposal', r.proposal, 'proposed_by', r.proposed_by,
	    'decided_by', r.decided_by,
	    'waiting', p.held AND r.status IN ('open', 'proposed'),
	    'can_propose', p.held AND r.status = 'open',
	    'can_confirm', p.held AND r.status = 'proposed');
$$;

-- The queue, p_limit a page (p_page from 0), oldest first: p_status
-- '' or NULL: waiting (open or proposed, still held); else one review
-- status; p_q part of the PSU's username or the creditor IBAN.
-- PL/pgSQL: staff_list_page is defined by a later file (70_staff.sql).
CREATE OR REPLACE FUNCTION staff_reviews_json(p_status text, p_q text,
    p_page integer, p_limit integer)
RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN (SELECT staff_list_page('reviews', coalesce(jsonb_agg(
	    staff_review_row(s.p, s.r) ORDER BY (s.r).created_at,
	    (s.r).payment_id), '[]'), p_page, p_limit)
	FROM (SELECT p, r FROM payment_review r
	    JOIN payment p ON p.id = r.payment_id
	    JOIN psu u ON u.id = p.psu_id
	    WHERE (CASE WHEN coalesce(p_status, '') = '' THEN
		r.status IN ('open', 'proposed') AND p.held
		ELSE r.status = p_status END)
		AND (coalesce(p_q, '') = '' OR
		    strpos(lower(u.username), lower(p_q)) > 0 OR
		    strpos(lower(p.creditor_iban), lower(p_q)) > 0)
	    ORDER BY r.created_at, r.payment_id
	    LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit) s);
END;
$$;

-- One held payment for its detail page: the review, the rules that
-- fired with their values and thresholds, the PSU's history (the last
-- 90 days: what passed SCA, its median and largest amount, payees, the
-- payments to this payee, the addresses seen) and their last payments.
-- NULL when the payment has no review.
CREATE OR REPLACE FUNCTION staff_review_json(p_id uuid)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT staff_review_row(p, r) || jsonb_build_object(
	    'remittance', p.remittance,
	    'history', (SELECT jsonb_build_object(
		'payments', count(*),
		'total', ais_amount(coalesce(sum(h.amount_minor), 0)::bigint,
		    p.currency)::text,
		'median', ais_amount(percentile_disc(0.5) WITHIN GROUP
		    (ORDER BY h.amount_minor), p.currency)::text,
		'largest', ais_amount(max(h.amount_minor), p.currency)::text,
		'payees', count(DISTINCT h.creditor_iban),
		'to_payee', count(*) FILTER (WHERE h.creditor_iban
		    = p.creditor_iban),
		'addresses', (SELECT string_agg(a, ', ') FROM (SELECT DISTINCT
		    host(x.psu_ip_address) a FROM payment x
		    WHERE x.psu_id = p.psu_id AND x.id <> p.id
			AND x.created_at >= now() - interval '90 days'
			AND x.psu_ip_address IS NOT NULL
		    ORDER BY 1 LIMIT 10) ips))
		FROM payment h WHERE h.psu_id = p.psu_id AND h.id <> p.id
		    AND h.created_at >= now() - interval '90 days'
		    AND h.transaction_status IN ('ACTC', 'ACSC')),
	    'recent', (SELECT coalesce(jsonb_agg(jsonb_build_object(
		'created', to_char(x.created_at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD HH24:MI "UTC"'),
		'amount', ais_amount(x.amount_minor, x.currency)::text,
		'currency', x.currency, 'creditor_iban', x.creditor_iban,
		'creditor_name', x.creditor_name,
		'status', x.transaction_status,
		'psu_ip', host(x.psu_ip_address)) ORDER BY x.created_at DESC),
		'[]')
		FROM (SELECT * FROM payment WHERE psu_id = p.psu_id
		    AND id <> p.id ORDER BY created_at DESC LIMIT 10) x))
	FROM payment_review r JOIN payment p ON p.id = r.payment_id
	WHERE r.payment_id = p_id;
$$;

-- The release of held payment p (its row locked): SCA starts now, as for
-- a payment that was never held. Decoupled: the device challenge, with
-- the deadline from now (the PSU's authenticator now; none: RJCT device
-- blocked); redirect: the pages allow it, the deadline from now. Returns
-- ok or no_device.
CREATE OR REPLACE FUNCTION pis_risk_release(p_id uuid, p_sca_seconds integer,
    p_nonce bytea)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	a payment_authorisation%ROWTYPE;
	v_serial text;
	v_deadline timestamptz := now() + make_interval(secs => p_sca_seconds);
	v_challenge uuid;
BEGIN
	UPDATE payment SET held = false, status_at = now() WHERE id = p_id;
	SELECT * INTO a FROM payment_authorisation WHERE payment_id = p_id;
	IF a.approach = 'redirect' THEN
		UPDATE payment_authorisation SET deadline = v_deadline,
		    status_at = now()
		WHERE id = a.id;
		RETURN 'ok';
	END IF;
	v_serial := pis_psu_device((SELECT psu_id FROM payment
	    WHERE id = p_id));
	IF v_serial IS NULL THEN
		PERFORM pis_reject(p_id, 'device blocked',
		    'no active authenticator when the review released it');
		RETURN 'no_device';
	END IF;
	v_challenge := pis_challenge_create(v_serial, p_id, p_nonce,
	    v_deadline);
	UPDATE payment_authorisation SET method = 'device',
	    challenge_id = v_challenge, sca_status = 'started',
	    deadline = v_deadline, status_at = now()
	WHERE id = a.id;
	RETURN 'ok';
END;
$$;

-- A staff member's step on held payment p_id (four eyes):
--	propose_release, propose_reject	an open review gets a proposal
--	confirm		another member confirms the proposal: released
--			(SCA starts, pis_risk_release) or RJCT rejected on
--			review; the proposer is refused (same_person)
--	withdraw	the proposal goes, the review is open again
-- Each step is an audit row (payment.review). result: ok, no_review,
-- bad_status (not held any more, or not in the state the step needs),
-- same_person, no_device (released, but the PSU has no authenticator
-- any more: RJCT device blocked).
-- SECURITY DEFINER: only these functions write payment_review.
CREATE OR REPLACE FUNCTION staff_review_action(p_actor text, p_action text,
    p_id uuid)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	p payment%ROWTYPE;
	r payment_review%ROWTYPE;
	res text := 'ok';
	v_step text := p_action;
BEGIN
	SELECT * INTO p FROM payment WHERE id = p_id FOR UPDATE;
	SELECT * INTO r FROM payment_review WHERE payment_id = p_id
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_review';
	END IF;
	IF NOT p.held THEN
		RETURN 'bad_status';
	END IF;
	IF p_action IN ('propose_release', 'propose_reject') THEN
		IF r.status <> 'open' THEN
			RETURN 'bad_status';
		END IF;
		UPDATE payment_review SET status = 'proposed',
		    proposal = substr(p_action, 9), proposed_by = p_actor,
		    proposed_at = now()
		WHERE payment_id = p_id;
	ELSIF p_action = 'withdraw' THEN
		IF r.status <> 'proposed' THEN
			RETURN 'bad_status';
		END IF;
		UPDATE payment_review SET status = 'open', proposal = NULL,
		    proposed_by = NULL, proposed_at = NULL
		WHERE payment_id = p_id;
	ELSIF p_action = 'confirm' THEN
		IF r.status <> 'proposed' THEN
			RETURN 'bad_status';
		END IF;
		IF r.proposed_by = p_actor THEN
			RETURN 'same_person';
		END IF;
		UPDATE payment_review SET status = CASE r.proposal
		    WHEN 'release' THEN 'released' ELSE 'rejected' END,
		    decided_by = p_actor, decided_at = now()
		WHERE payment_id = p_id;
		v_step := 'confirm_' || r.proposal;
		IF r.proposal = 'release' THEN
			res := pis_risk_release(p_id, r.sca_seconds, r.nonce);
		ELSE
			UPDATE payment SET held = false WHERE id = p_id;
			PERFORM pis_reject(p_id, 'rejected on review',
			    'rejected by ' || r.proposed_by || ' and '
			    || p_actor);
		END IF;
	ELSE
		RETURN 'bad_status';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'payment.review', jsonb_strip_nulls(
	    jsonb_build_object('payment', p_id,
		'psu', (SELECT username FROM psu WHERE id = p.psu_id),
		'step', v_step, 'proposed_by', CASE WHEN p_action = 'confirm'
		    THEN r.proposed_by END,
		'result', res)));
	RETURN res;
END;
$$;

-- ---- The configuration (psd2ctl risk) ------------------------------

-- Rule p_rule: enabled, score and parameters (NULL: unchanged). p_params
-- is merged into the rule's parameters; each key must be one the rule
-- has, with a value of the same JSON type (a time of instant_night as
-- HH:MM, a time zone PostgreSQL knows). result: ok, no_rule, bad_input.
CREATE OR REPLACE FUNCTION risk_rule_set(p_actor text, p_rule text,
    p_enabled boolean, p_score integer, p_params jsonb)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	k risk_rule%ROWTYPE;
	v_params jsonb;
BEGIN
	SELECT * INTO k FROM risk_rule WHERE rule = p_rule FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_rule';
	END IF;
	IF p_score IS NOT NULL AND p_score NOT BETWEEN 0 AND 1000 THEN
		RETURN 'bad_input';
	END IF;
	IF p_params IS NOT NULL AND (jsonb_typeof(p_params) <> 'object'
	    OR EXISTS (SELECT 1 FROM jsonb_each(p_params) e
		WHERE NOT k.params ? e.key
		    OR jsonb_typeof(e.value) <> jsonb_typeof(k.params->e.key)
		    OR (jsonb_typeof(e.value) = 'number'
			AND (e.value::numeric < 0
			    OR e.value::numeric <> trunc(e.value::numeric)))
		    OR (e.key = 'statistic'
			AND e.value #>> '{}' NOT IN ('median', 'p90'))
		    OR (e.key IN ('from', 'to')
			AND e.value #>> '{}' !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$')
		    OR (e.key = 'time_zone' AND NOT EXISTS (SELECT 1
			FROM pg_timezone_names WHERE name = e.value #>> '{}')))) THEN
		RETURN 'bad_input';
	END IF;
	v_params := k.params || coalesce(p_params, '{}');
	UPDATE risk_rule SET enabled = coalesce(p_enabled, enabled),
	    score = coalesce(p_score, score), params = v_params,
	    updated_by = p_actor, updated_at = now()
	WHERE rule = p_rule;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'risk.rule_set', jsonb_build_object('rule', p_rule,
	    'enabled', coalesce(p_enabled, k.enabled),
	    'score', coalesce(p_score, k.score), 'params', v_params,
	    'before', jsonb_build_object('enabled', k.enabled,
		'score', k.score, 'params', k.params)));
	RETURN 'ok';
END;
$$;

-- Level p_level starts at p_min_score and does p_action (low: always 0,
-- proceed). result: ok, no_level, bad_input.
CREATE OR REPLACE FUNCTION risk_level_set(p_actor text, p_level text,
    p_min_score integer, p_action text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
DECLARE
	l risk_level%ROWTYPE;
BEGIN
	SELECT * INTO l FROM risk_level WHERE level = p_level FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_level';
	END IF;
	IF (p_min_score IS NOT NULL AND p_min_score NOT BETWEEN 0 AND 100000)
	    OR (p_action IS NOT NULL
		AND p_action NOT IN ('proceed', 'hold', 'reject'))
	    OR (p_level = 'low' AND (coalesce(p_min_score, 0) <> 0
		OR coalesce(p_action, 'proceed') <> 'proceed')) THEN
		RETURN 'bad_input';
	END IF;
	UPDATE risk_level SET min_score = coalesce(p_min_score, min_score),
	    action = coalesce(p_action, action), updated_by = p_actor,
	    updated_at = now()
	WHERE level = p_level;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'risk.level_set', jsonb_build_object('level', p_level,
	    'min_score', coalesce(p_min_score, l.min_score),
	    'action', coalesce(p_action, l.action),
	    'before', jsonb_build_object('min_score', l.min_score,
		'action', l.action)));
	RETURN 'ok';
END;
$$;

-- The block list: p_add true adds p_iban with p_reason, false removes
-- it. result: ok, exists, no_entry, bad_input.
CREATE OR REPLACE FUNCTION risk_block_set(p_actor text, p_iban text,
    p_add boolean, p_reason text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = public
AS $$
BEGIN
	IF p_add THEN
		IF coalesce(p_iban, '') !~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$'
		    OR coalesce(char_length(p_reason), 0) NOT BETWEEN 1 AND 200
		    OR p_reason ~ '[[:cntrl:]]' THEN
			RETURN 'bad_input';
		END IF;
		INSERT INTO risk_blocklist (iban, reason, added_by)
		VALUES (p_iban, p_reason, p_actor)
		ON CONFLICT (iban) DO NOTHING;
		IF NOT FOUND THEN
			RETURN 'exists';
		END IF;
	ELSE
		DELETE FROM risk_blocklist WHERE iban = p_iban;
		IF NOT FOUND THEN
			RETURN 'no_entry';
		END IF;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, CASE WHEN p_add THEN 'risk.block_add'
	    ELSE 'risk.block_remove' END, jsonb_strip_nulls(
	    jsonb_build_object('iban', p_iban, 'reason', p_reason)));
	RETURN 'ok';
END;
$$;

-- What the PSU's pages say about a payment the monitoring held or
-- rejected (psu_payments, the authorise page): the rules that fired, by
-- name (the pages word them), NULL for any other payment.
CREATE OR REPLACE FUNCTION pis_risk_psu_rules(p_held boolean,
    p_reason text, p_rules jsonb)
RETURNS json LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN (p_held OR p_reason IN ('suspected fraud',
	    'rejected on review')) AND jsonb_array_length(p_rules) > 0
	    THEN (SELECT json_agg(e->>'rule') FROM jsonb_array_elements(p_rules)
		e) END;
$$;
