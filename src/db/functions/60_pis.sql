-- Payment initiation: trigger functions of the payment tables
-- and of device_challenge's outcome time (the triggers are schema, in
-- migrations/070_pis.sql), the endpoint functions, the decider's and the
-- booking's functions.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- The time of an outcome is the database's, not the writer's (070), on
-- every insert and every update, whichever columns it names: an open
-- challenge has none; a challenge that ends, or whose outcome, counter or
-- signature changes, gets the clock's; any other change of an ended one
-- keeps the time it had. So no writer (the daemon, the service, a forged
-- write) can make a late outcome look early.
CREATE OR REPLACE FUNCTION device_challenge_finish_time() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.status NOT IN ('done', 'failed', 'cancelled') THEN
		NEW.finished_at := NULL;
	ELSIF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status
	    OR OLD.outcome IS DISTINCT FROM NEW.outcome
	    OR OLD.counter IS DISTINCT FROM NEW.counter
	    OR OLD.signature IS DISTINCT FROM NEW.signature THEN
		NEW.finished_at := clock_timestamp();
	ELSE
		NEW.finished_at := OLD.finished_at;
	END IF;
	RETURN NEW;
END $$;

-- payment_actc (payload: payment id) wakes the booking (070).
CREATE OR REPLACE FUNCTION payment_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.transaction_status = 'ACTC' AND (TG_OP = 'INSERT'
	    OR OLD.transaction_status IS DISTINCT FROM 'ACTC') THEN
		PERFORM pg_notify('payment_actc', NEW.id::text);
	END IF;
	RETURN NULL;
END $$;

-- The payment endpoints run one way, as the AIS endpoints do (see
-- src/pis/pis.h): the service has settled the TPP verdict, the role,
-- PSU-IP-Address and the input (IBANs, amount, currency, names) before
-- it calls one of these; they return the answer or one named refusal
-- (type pis_refusal, migrations/070_pis.sql), in one transaction.
--
-- Common parameters (those of the AIS functions, 30_ais.sql):
--	p_token_hash, p_x5t, p_org_id, p_request_id, p_psu_ip
-- and p_root, the surface the call came on, which the answer's links
-- name: '/auth/v1/psd2/payments/' (the contract's paths) or
-- '/xs2a/v1/payments/' (the Berlin Group standard's, src/bg/README.md).
-- A payment is the same row whichever surface made or reads it.

-- The refusal path: only the bearer check (spec part 7: first).
CREATE OR REPLACE FUNCTION pis_bearer_only(p_token_hash bytea, p_x5t text)
RETURNS pis_result LANGUAGE sql STABLE AS $$
	SELECT CASE b.state WHEN 'ok' THEN NULL
	    WHEN 'expired' THEN 'token_expired'
	    ELSE 'token_invalid' END::pis_refusal, NULL::text, NULL::integer,
	    NULL::text
	FROM bearer_check(p_token_hash, p_x5t) b;
$$;

-- The links of a payment (relative, as the AIS links are).
CREATE OR REPLACE FUNCTION pis_self(p_root text, p_product text, p_id uuid)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT p_root || p_product || '/' || p_id;
$$;

-- The page where the PSU authorises a payment by redirect (the pages
-- themselves are src/pis/authorise_page.c and authorise_confirm.c).
CREATE OR REPLACE FUNCTION pis_sca_redirect(p_id uuid)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT '/auth/payments/' || p_id || '/authorise';
$$;

-- What the TPP is told: general texts only (RTS Art. 4(3)(a): never
-- which element of the authentication failed).
CREATE OR REPLACE FUNCTION pis_psu_message(p_approach text,
    p_sca_status text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
	    WHEN p_sca_status = 'failed' THEN
		'The payment was not authorised.'
	    WHEN p_sca_status = 'finalised' THEN
		'The payment is authorised.'
	    WHEN p_approach = 'decoupled' THEN
		'Please confirm the payment on your authenticator: check the '
		'amount and payee, enter your PIN, then press confirm.'
	    ELSE 'Please authorise the payment at your bank.' END;
$$;

-- The authorisation as the TPP sees it (201 of the initiation, the
-- answer of POST .../authorisations).
CREATE OR REPLACE FUNCTION pis_authorisation_json(p_root text,
    p_product text, p_payment_id uuid, p_auth_id uuid, p_approach text,
    p_sca_status text)
RETURNS json LANGUAGE sql IMMUTABLE AS $$
	SELECT json_build_object(
	    'scaStatus', p_sca_status,
	    'authorisationId', p_auth_id,
	    'psuMessage', pis_psu_message(p_approach, p_sca_status),
	    '_links', CASE WHEN p_approach = 'redirect' THEN json_build_object(
		'scaRedirect', json_build_object('href',
		    pis_sca_redirect(p_payment_id)),
		'scaStatus', json_build_object('href',
		    pis_self(p_root, p_product, p_payment_id) || '/authorisations/'
		    || p_auth_id))
	    ELSE json_build_object(
		'scaStatus', json_build_object('href',
		    pis_self(p_root, p_product, p_payment_id) || '/authorisations/'
		    || p_auth_id)) END);
$$;

-- The device challenge of payment p_id (decoupled at initiation, or
-- redirect when the PSU chooses the authenticator on the bank's page):
-- exactly the payment row's amount, currency, creditor name and IBAN, the
-- service's fresh nonce and an absolute deadline. The daemon shows it
-- once the device's earlier challenges are done (one at a time, in
-- order); waiting counts against the deadline. The initiation's
-- x-request-id goes along, so the daemon's log lines name it. Returns the
-- challenge id.
CREATE OR REPLACE FUNCTION pis_challenge_create(p_serial text, p_id uuid,
    p_nonce bytea, p_deadline timestamptz)
RETURNS uuid LANGUAGE sql AS $$
	INSERT INTO device_challenge (device_serial, psu_id, nonce,
	    amount_minor, currency, payee_name, payee_iban, deadline,
	    request_id)
	SELECT p_serial, p.psu_id, p_nonce, p.amount_minor, p.currency,
	    p.creditor_name, p.creditor_iban, p_deadline, p.request_id
	FROM payment p WHERE p.id = p_id
	RETURNING id;
$$;

-- The PSU's authenticator for a new challenge: active, assigned to them,
-- counter not exhausted (2^32 - 1, devsig_counter_exhausted); the most
-- recently enrolled one. NULL without one.
CREATE OR REPLACE FUNCTION pis_psu_device(p_psu_id bigint)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT d.serial FROM device d
	WHERE d.psu_id = p_psu_id AND d.status = 'active'
	    AND d.last_counter < 4294967295
	ORDER BY d.enrolled_at DESC NULLS LAST, d.serial LIMIT 1;
$$;

-- POST payments/{product}. p_payment: {"debtor", "creditor", "name",
-- "remittance" (or null), "amount" (minor units, as a string), "currency",
-- "date" (requestedExecutionDate, or null)}, every value already checked
-- by the service (IBAN mod 97, NFC name, amount, EUR, a calendar date).
-- A date is the bank's: from today to 90 days ahead (an instant payment:
-- today only); a future one is authorised now and booked on that date
-- (pis_book). p_nonce: 32 random bytes from the service. Decoupled
-- when p_decoupled and the PSU has an active authenticator whose counter
-- is not exhausted (2^32 - 1, devsig_counter_exhausted); then the
-- challenge is created here, in the payment's transaction, with the
-- deadline p_sca_seconds from now. Otherwise redirect, which needs
-- p_redirect_uri among the client's registered URIs, and must be finished
-- within p_redirect_seconds (psd2_pis_redirect_seconds; pis_sweep ends it
-- RJCT timed out after that).
-- Before any of that reaches the PSU, the transaction monitoring
-- (pis_risk_assess, 63_pis_risk.sql) assesses the payment, and the
-- assessment is kept on the payment row. An action hold keeps it RCVD
-- and held for the staff review (no challenge, no deadline: the release
-- starts SCA, pis_risk_release); reject ends it RJCT suspected fraud at
-- once. The TPP sees neither the rules nor the reason: the contract's
-- 201 has only RCVD and scaStatus received or started, so both answer
-- RCVD, scaStatus received and a general psuMessage; the status of a
-- held payment stays RCVD, of a rejected one RJCT.
CREATE OR REPLACE FUNCTION pis_initiate(p_token_hash bytea, p_x5t text,
    p_org_id text, p_request_id uuid, p_psu_ip inet, p_root text,
    p_product text,
    p_payment jsonb, p_nonce bytea, p_decoupled boolean,
    p_redirect_uri text, p_nok_redirect_uri text, p_sca_seconds integer,
    p_redirect_seconds integer)
RETURNS pis_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	acc record;
	cl record;
	dev record;
	rk record;
	v_id uuid := gen_random_uuid();
	v_auth uuid := gen_random_uuid();
	v_challenge uuid;
	v_approach text := 'redirect';
	v_sca text := 'received';
	v_deadline timestamptz;
	v_amount bigint := (p_payment->>'amount')::bigint;
	v_date date := (p_payment->>'date')::date;
	body json;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id,
	    'PAYMENT_INITIATION');
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal::text::pis_refusal, g.detail, NULL,
		    NULL)::pis_result;
	END IF;
	IF v_date < current_date OR v_date > current_date + 90 THEN
		RETURN ROW('execution_date_invalid', 'requestedExecutionDate '
		    || 'must be a date from today ('
		    || to_char(current_date, 'YYYY-MM-DD') || ') to '
		    || to_char(current_date + 90, 'YYYY-MM-DD') || '.', NULL,
		    NULL)::pis_result;
	END IF;
	IF v_date > current_date
	    AND p_product = 'instant-sepa-credit-transfers' THEN
		RETURN ROW('execution_date_invalid', 'An instant payment is '
		    || 'executed at once: requestedExecutionDate can only be '
		    || 'today.', NULL, NULL)::pis_result;
	END IF;
	SELECT a.id, a.currency INTO acc
	FROM consent_account ca JOIN account a ON a.id = ca.account_id
	WHERE ca.consent_id = g.consent_id
	    AND a.iban = p_payment->>'debtor';
	IF NOT FOUND THEN
		RETURN ROW('account_unknown', NULL, NULL, NULL)::pis_result;
	END IF;
	IF acc.currency <> 'EUR' THEN
		RETURN ROW('debtor_currency', NULL, NULL, NULL)::pis_result;
	END IF;
	SELECT oc.client_id, oc.tpp_id, oc.redirect_uris INTO cl
	FROM consent c JOIN oauth_client oc ON oc.client_id = c.client_id
	WHERE c.id = g.consent_id;
	IF p_nok_redirect_uri IS NOT NULL
	    AND NOT (p_nok_redirect_uri = ANY (cl.redirect_uris)) THEN
		RETURN ROW('nok_redirect_uri', NULL, NULL, NULL)::pis_result;
	END IF;
	IF p_redirect_uri IS NOT NULL
	    AND NOT (p_redirect_uri = ANY (cl.redirect_uris)) THEN
		RETURN ROW('redirect_uri', 'TPP-Redirect-URI is not a redirect '
		    'URI registered for this client.', NULL, NULL)::pis_result;
	END IF;
	IF p_decoupled THEN
		SELECT pis_psu_device(g.psu_id) AS serial INTO dev;
		IF dev.serial IS NOT NULL THEN
			v_approach := 'decoupled';
			v_sca := 'started';
		END IF;
	END IF;
	IF v_approach = 'redirect' AND p_redirect_uri IS NULL THEN
		RETURN ROW('redirect_uri', CASE WHEN p_decoupled THEN
		    'The PSU has no active authenticator: redirect SCA needs '
		    'TPP-Redirect-URI.' ELSE 'Redirect SCA needs TPP-Redirect-URI.'
		    END, NULL, NULL)::pis_result;
	END IF;
	v_deadline := now() + make_interval(secs => CASE
	    WHEN v_approach = 'redirect' THEN p_redirect_seconds
	    ELSE p_sca_seconds END);
	SELECT * INTO rk FROM pis_risk_assess(g.psu_id, p_product,
	    p_payment->>'creditor', v_amount, p_psu_ip);
	IF rk.action <> 'proceed' THEN
		v_sca := CASE rk.action WHEN 'hold' THEN 'received'
		    ELSE 'failed' END;
		v_deadline := NULL;
	END IF;

	INSERT INTO payment (id, product, psu_id, consent_id, client_id, tpp_id,
	    debtor_account_id, debtor_iban, creditor_iban, creditor_name,
	    remittance, amount_minor, currency, tpp_redirect_uri,
	    tpp_nok_redirect_uri, psu_ip_address, request_id,
	    transaction_status, reject_reason, reject_detail, risk_score,
	    risk_level, risk_rules, held, execution_date)
	VALUES (v_id, p_product, g.psu_id, g.consent_id, cl.client_id,
	    cl.tpp_id, acc.id, p_payment->>'debtor', p_payment->>'creditor',
	    p_payment->>'name', p_payment->>'remittance', v_amount,
	    p_payment->>'currency', p_redirect_uri, p_nok_redirect_uri,
	    p_psu_ip, p_request_id,
	    CASE rk.action WHEN 'reject' THEN 'RJCT' ELSE 'RCVD' END,
	    CASE rk.action WHEN 'reject' THEN 'suspected fraud' END,
	    CASE rk.action WHEN 'reject' THEN 'transaction monitoring: '
		|| rk.level || ' risk, score ' || rk.score END,
	    rk.score, rk.level, rk.rules, rk.action = 'hold', v_date);
	IF v_approach = 'decoupled' AND rk.action = 'proceed' THEN
		-- The daemons' wake-up follows the commit (pis_wake).
		PERFORM set_config('psd2.defer_notify', 'on', true);
		v_challenge := pis_challenge_create(dev.serial, v_id, p_nonce,
		    v_deadline);
	END IF;
	INSERT INTO payment_authorisation (id, payment_id, approach, method,
	    sca_status, challenge_id, deadline)
	VALUES (v_auth, v_id, v_approach, CASE WHEN v_approach = 'decoupled'
	    AND rk.action = 'proceed' THEN 'device' END, v_sca, v_challenge,
	    v_deadline);
	PERFORM pis_risk_decided(v_id, CASE WHEN v_approach = 'redirect'
	    THEN p_redirect_seconds ELSE p_sca_seconds END, p_nonce);

	body := json_build_object(
	    'transactionStatus', 'RCVD',
	    'paymentId', v_id,
	    'authorisationId', v_auth,
	    'scaStatus', CASE WHEN rk.action = 'proceed' THEN v_sca
		ELSE 'received' END,
	    'psuMessage', CASE rk.action WHEN 'hold' THEN pis_risk_psu_message()
		ELSE pis_psu_message(v_approach, v_sca) END,
	    '_links', (SELECT json_object_agg(k, json_build_object('href', h))
		FROM (VALUES (1, 'self', pis_self(p_root, p_product, v_id)),
		    (2, 'status', pis_self(p_root, p_product, v_id) || '/status'),
		    (3, 'scaStatus', pis_self(p_root, p_product, v_id)
			|| '/authorisations/' || v_auth),
		    (4, 'scaRedirect', CASE WHEN v_approach = 'redirect'
			AND rk.action <> 'reject' THEN
			pis_sca_redirect(v_id) END)) l(n, k, h)
		WHERE h IS NOT NULL));
	RETURN ROW(NULL, pis_self(p_root, p_product, v_id), 201, body::text)::pis_result;
END;
$$;

-- Right after pis_initiate() committed: wakes the daemons for the
-- payment's challenge (device_challenge_new), in a transaction without a
-- flush, so that initiations' durable commits are not serialised by the
-- notify lock (see device_challenge_notify, 50_devices.sql). Nothing for
-- a redirect payment. Lost (a crash in between): the daemons' sweep
-- claims the challenge a little later. Returns the authorisation's
-- approach ('redirect' or 'decoupled'), the standard's
-- ASPSP-SCA-Approach.
CREATE OR REPLACE FUNCTION pis_wake(p_payment_id uuid) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v_approach text;
	v_serial text;
BEGIN
	PERFORM set_config('synchronous_commit', 'off', true);
	SELECT a.approach, c.device_serial INTO v_approach, v_serial
	FROM payment_authorisation a
	LEFT JOIN device_challenge c ON c.id = a.challenge_id
	    AND c.status = 'pending'
	WHERE a.payment_id = p_payment_id;
	IF v_serial IS NOT NULL THEN
		PERFORM pg_notify('device_challenge_new', v_serial);
	END IF;
	RETURN v_approach;
END;
$$;

-- Every other payment endpoint: the TPP's and PSU's payment p_id of
-- product p_product, then p_action:
--	payment		GET {product}/{id}
--	status		GET {product}/{id}/status
--	authorisations	GET {product}/{id}/authorisations
--	authorisation	GET {product}/{id}/authorisations/{p_auth_id}
--	authorise	POST {product}/{id}/authorisations: the existing one
--	start		the same on the standard's surface: refused (409),
--			the one authorisation was started at initiation
--	cancel		DELETE {product}/{id}: CANC before SCA is final (and
--			the device challenge cancelled), else refused
CREATE OR REPLACE FUNCTION pis_payment(p_token_hash bytea, p_x5t text,
    p_org_id text, p_request_id uuid, p_psu_ip inet, p_root text,
    p_product text, p_id uuid, p_action text, p_auth_id uuid)
RETURNS pis_result LANGUAGE plpgsql AS $$
DECLARE
	g ais_gate_result;
	p payment%ROWTYPE;
	a payment_authorisation%ROWTYPE;
	body json;
BEGIN
	g := ais_gate(p_token_hash, p_x5t, p_org_id, p_request_id,
	    'PAYMENT_INITIATION');
	IF g.refusal IS NOT NULL THEN
		RETURN ROW(g.refusal::text::pis_refusal, g.detail, NULL,
		    NULL)::pis_result;
	END IF;
	IF p_action = 'cancel' THEN
		SELECT py.* INTO p FROM payment py
		JOIN tpp t ON t.id = py.tpp_id
		WHERE py.id = p_id AND py.product = p_product
		    AND py.psu_id = g.psu_id AND t.org_id = g.tpp_org_id
		FOR UPDATE OF py;
	ELSE
		SELECT py.* INTO p FROM payment py
		JOIN tpp t ON t.id = py.tpp_id
		WHERE py.id = p_id AND py.product = p_product
		    AND py.psu_id = g.psu_id AND t.org_id = g.tpp_org_id;
	END IF;
	IF NOT FOUND THEN
		RETURN ROW('resource_unknown', 'paymentId', NULL,
		    NULL)::pis_result;
	END IF;
	SELECT * INTO a FROM payment_authorisation WHERE payment_id = p.id;
	-- The reads write only the x-request-id mark: committed as the AIS
	-- reads commit it (asynchronously, see migrations/010_ais.sql), so
	-- a TPP polling the status costs no flush. A cancellation is durable.
	IF p_action <> 'cancel' THEN
		PERFORM set_config('synchronous_commit', 'off', true);
	END IF;

	IF p_action = 'payment' THEN
		body := json_build_object(
		    'instructedAmount', json_build_object('currency', p.currency,
			'amount', ais_amount(p.amount_minor, p.currency)::text),
		    'debtorAccount', json_build_object('iban', p.debtor_iban),
		    'creditorAccount', json_build_object('iban', p.creditor_iban),
		    'creditorName', p.creditor_name,
		    'remittanceInformationUnstructured', p.remittance,
		    'requestedExecutionDate', p.execution_date,
		    'transactionStatus', p.transaction_status);
		-- The two optional members (nothing else is ever null).
		body := json_strip_nulls(body);
	ELSIF p_action = 'status' THEN
		body := CASE WHEN p.transaction_status = 'RJCT' THEN
		    json_build_object('transactionStatus', 'RJCT',
			'psuMessage', pis_psu_message(a.approach, 'failed'))
		    ELSE json_build_object('transactionStatus',
			p.transaction_status) END;
	ELSIF p_action = 'authorisations' THEN
		body := json_build_object('authorisationIds',
		    json_build_array(a.id));
	ELSIF p_action = 'authorisation' THEN
		IF p_auth_id IS DISTINCT FROM a.id THEN
			RETURN ROW('resource_unknown', 'authorisationId', NULL,
			    NULL)::pis_result;
		END IF;
		body := CASE WHEN a.sca_status = 'failed' THEN
		    json_build_object('scaStatus', a.sca_status,
			'psuMessage', pis_psu_message(a.approach, a.sca_status))
		    ELSE json_build_object('scaStatus', a.sca_status) END;
	ELSIF p_action = 'authorise' THEN
		-- One authorisation per payment: the existing one, never a
		-- second (200: nothing was created).
		body := pis_authorisation_json(p_root, p.product, p.id, a.id,
		    a.approach, a.sca_status);
		IF p.held THEN
			body := (body::jsonb || jsonb_build_object('psuMessage',
			    pis_risk_psu_message()))::json;
		END IF;
	ELSIF p_action = 'start' THEN
		RETURN ROW('status_invalid', 'The payment has one authorisation, '
		    'started at its initiation: '
		    || pis_self(p_root, p.product, p.id) || '/authorisations/'
		    || a.id || '.', NULL, NULL)::pis_result;
	ELSIF p_action = 'cancel' THEN
		-- Authorised for a later date: the TPP that initiated it may
		-- cancel it until the day before (the booking takes the same
		-- row lock, and books nothing before the date).
		IF p.transaction_status = 'ACTC'
		    AND p.execution_date > current_date THEN
			UPDATE payment SET transaction_status = 'CANC',
			    status_at = now()
			WHERE id = p.id;
			RETURN ROW(NULL, NULL, 204, NULL)::pis_result;
		END IF;
		IF p.transaction_status <> 'RCVD' THEN
			RETURN ROW('cancellation_invalid', NULL, NULL,
			    NULL)::pis_result;
		END IF;
		-- The cancel and the daemon's outcome (deviced_finish) race
		-- for the challenge's row lock; whoever takes it first decides.
		-- An outcome written in time came first: the PSU answered on
		-- the device, so the signature decides, not the cancel. Else a
		-- challenge still open ends; the daemon holding it hears
		-- device_challenge_done and clears the device's display, and
		-- its outcome, if one comes, is refused (PROTOCOL.md 5.4).
		IF pis_challenge_answered(a.challenge_id) THEN
			RETURN ROW('cancellation_invalid', NULL, NULL,
			    NULL)::pis_result;
		END IF;
		UPDATE device_challenge SET status = 'cancelled',
		    lease_owner = NULL, lease_expires = NULL
		WHERE id = a.challenge_id AND status IN ('pending', 'claimed');
		UPDATE payment SET transaction_status = 'CANC', held = false,
		    status_at = now()
		WHERE id = p.id;
		UPDATE payment_authorisation SET sca_status = 'failed',
		    status_at = now()
		WHERE id = a.id AND sca_status IN ('received', 'started');
		RETURN ROW(NULL, NULL, 204, NULL)::pis_result;
	ELSE
		RAISE EXCEPTION 'pis_payment: unknown action %', p_action;
	END IF;
	RETURN ROW(NULL, NULL, 200, body::text)::pis_result;
END;
$$;

-- Whether the PSU's answer to challenge p_id is in (done before its
-- deadline), under the challenge's row lock, so that the daemon's write
-- and a cancel are one serialised step. False without a challenge.
CREATE OR REPLACE FUNCTION pis_challenge_answered(p_id uuid)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	SELECT ch.status, ch.finished_at <= ch.deadline AS in_time INTO c
	FROM device_challenge ch WHERE ch.id = p_id FOR UPDATE;
	RETURN FOUND AND c.status = 'done' AND c.in_time;
END;
$$;

-- Ends an undecided payment (RCVD) as RJCT with its reason; the caller
-- holds the payment's row lock. Returns true when it did.
CREATE OR REPLACE FUNCTION pis_reject(p_id uuid, p_reason text,
    p_detail text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	UPDATE payment SET transaction_status = 'RJCT',
	    reject_reason = p_reason, reject_detail = p_detail,
	    status_at = now()
	WHERE id = p_id AND transaction_status = 'RCVD';
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE payment_authorisation SET sca_status = 'failed',
	    status_at = now()
	WHERE payment_id = p_id AND sca_status <> 'failed';
	PERFORM pis_audit_sca(p_id, p_reason, p_detail);
	RETURN true;
END;
$$;

-- The audit row of a payment's SCA outcome, in the transaction
-- that decides it: p_reason NULL for a confirmation, else the reject
-- reason. Inserted unsealed (the sealer chains it), so deciders never
-- wait on each other for the chain's head. PL/pgSQL, not SQL: a SQL
-- function's INSERT is parsed and planned again on every call, and that
-- planning (four joins) was most of what an audit row cost a
-- confirmation; PL/pgSQL keeps the plan for the session.
CREATE OR REPLACE FUNCTION pis_audit_sca(p_id uuid, p_reason text,
    p_detail text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || u.username, 'payment.sca', jsonb_strip_nulls(
	    jsonb_build_object('payment', p.id, 'product', p.product,
		'method', coalesce(a.method, a.approach),
		'device', c.device_serial,
		'outcome', CASE WHEN p_reason IS NULL THEN 'confirmed'
		    WHEN p_reason = 'declined' THEN 'declined'
		    WHEN p_reason = 'timed out' THEN 'timed out'
		    ELSE 'failed' END,
		'reason', p_reason, 'detail', p_detail))
	FROM payment p
	JOIN psu u ON u.id = p.psu_id
	JOIN payment_authorisation a ON a.payment_id = p.id
	LEFT JOIN device_challenge c ON c.id = a.challenge_id
	WHERE p.id = p_id;
END;
$$;

-- The audit row of a confirmation, from what pis_decide holds already
-- (the payment's product and PSU, the authorisation's method, the
-- challenge's device): the same row as pis_audit_sca's for a confirmation,
-- without its four-table join, which was about half of what an audit row
-- cost a confirmation (make bench-audit: commits serialise on the
-- decision's NOTIFY, so that cost counts in full).
CREATE OR REPLACE FUNCTION pis_audit_confirmed(p_id uuid, p_product text,
    p_method text, p_device text, p_psu_id bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || u.username, 'payment.sca', jsonb_strip_nulls(
	    jsonb_build_object('payment', p_id, 'product', p_product,
		'method', p_method, 'device', p_device,
		'outcome', 'confirmed', 'reason', NULL::text,
		'detail', NULL::text))
	FROM psu u WHERE u.id = p_psu_id;
END;
$$;

-- The reject reason of a challenge the daemon (or psd2ctl) failed.
CREATE OR REPLACE FUNCTION pis_failure_reason(p_failure text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
	    WHEN p_failure = 'device unplugged' THEN 'device unplugged'
	    -- staff (psd2ctl, the staff pages) took the device away
	    WHEN p_failure IN ('device blocked', 'device unassigned',
		'device retired') THEN 'device blocked'
	    WHEN p_failure = 'device refused: PIN locked' THEN 'PIN locked'
	    WHEN p_failure = 'device refused: challenge changed'
		THEN 'payment changed'
	    WHEN p_failure IN ('no answer by the deadline',
		'deadline passed without an answer', 'device busy',
		'daemon stopped') THEN 'timed out'
	    ELSE 'device error' END;
$$;

-- The payments the decider may have to decide, found by index
-- (migrations/071): device authorisations not final whose deadline has
-- passed (whatever their challenge did: a decision missed while the
-- service was down is among them), challenges that ended in the last
-- quarter of an hour (a deadline is at most 600 s away, so anything
-- older is in the first set), and open challenges of a device no longer
-- active for its PSU. The callers check each under the payment's lock.
CREATE OR REPLACE FUNCTION pis_candidates()
RETURNS TABLE (payment_id uuid) LANGUAGE sql STABLE AS $$
	SELECT a.payment_id FROM payment_authorisation a
	WHERE a.sca_status IN ('received', 'started') AND a.deadline <= now()
	    AND a.method = 'device'
	UNION
	SELECT a.payment_id FROM device_challenge c
	JOIN payment_authorisation a ON a.challenge_id = c.id
	WHERE c.status IN ('done', 'failed', 'cancelled')
	    AND c.finished_at >= now() - interval '15 minutes'
	UNION
	SELECT a.payment_id FROM device d
	JOIN device_challenge c ON c.device_serial = d.serial
	    AND c.status IN ('pending', 'claimed')
	JOIN payment_authorisation a ON a.challenge_id = c.id
	WHERE d.status <> 'active' OR d.psu_id IS DISTINCT FROM c.psu_id;
$$;

-- The decisions that need no signature, each payment in its own row lock
-- (SKIP LOCKED: another instance deciding it now is left alone):
--	a challenge failed (daemon, psd2ctl) or cancelled by someone else
--	an outcome written after the deadline: timed out, whatever it says
--	an open challenge past its deadline (even with every daemon dead):
--	    cancelled, timed out
--	an open challenge whose device was blocked or reassigned: cancelled,
--	    device blocked
--	a redirect authorisation not finished by its deadline (no device
--	    challenge taken over yet): timed out (pis_redirect_expire)
-- An open challenge is cancelled only if it is still open under the
-- lock (a daemon's outcome that won the race is decided by its
-- signature instead). Returns the number of payments ended.
CREATE OR REPLACE FUNCTION pis_sweep() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n integer := 0;
	k integer;
	v_reason text;
BEGIN
	FOR r IN SELECT p.id, c.id AS cid, c.status, c.failure_reason,
	    c.finished_at > c.deadline AS late, c.deadline <= now() AS past,
	    d.status = 'active' AND d.psu_id = c.psu_id AS device_ok
	    FROM pis_candidates() k
	    JOIN payment p ON p.id = k.payment_id
	    JOIN payment_authorisation a ON a.payment_id = p.id
	    JOIN device_challenge c ON c.id = a.challenge_id
	    JOIN device d ON d.serial = c.device_serial
	    WHERE p.transaction_status = 'RCVD'
		AND (c.status IN ('failed', 'cancelled')
		    OR (c.status = 'done' AND c.finished_at > c.deadline)
		    OR (c.status IN ('pending', 'claimed')
			AND (c.deadline <= now() OR d.status <> 'active'
			    OR d.psu_id IS DISTINCT FROM c.psu_id)))
	    ORDER BY p.created_at
	    FOR UPDATE OF p SKIP LOCKED
	LOOP
		IF r.status IN ('pending', 'claimed') THEN
			UPDATE device_challenge SET status = 'cancelled',
			    lease_owner = NULL, lease_expires = NULL,
			    last_error = CASE WHEN r.device_ok
				THEN 'deadline passed' ELSE 'device blocked' END
			WHERE id = r.cid AND status IN ('pending', 'claimed');
			GET DIAGNOSTICS k = ROW_COUNT;
			IF k = 0 THEN
				CONTINUE;
			END IF;
			v_reason := CASE WHEN r.device_ok THEN 'timed out'
			    ELSE 'device blocked' END;
			IF pis_reject(r.id, v_reason, CASE WHEN r.device_ok
			    THEN 'deadline passed' ELSE 'device blocked or '
			    'reassigned during the challenge' END) THEN
				n := n + 1;
			END IF;
		ELSIF r.status = 'done' THEN
			IF pis_reject(r.id, 'timed out',
			    'outcome written after the deadline') THEN
				n := n + 1;
			END IF;
		ELSIF r.status = 'failed' THEN
			IF pis_reject(r.id, pis_failure_reason(r.failure_reason),
			    r.failure_reason) THEN
				n := n + 1;
			END IF;
		ELSE
			IF pis_reject(r.id, 'device error',
			    'challenge cancelled outside the service') THEN
				n := n + 1;
			END IF;
		END IF;
	END LOOP;
	RETURN n + pis_redirect_expire();
END;
$$;

-- The outcomes the service must verify: challenges done before their
-- deadline whose payment is still RCVD, with what the verification needs:
-- the payment row's own fields (what the device must have signed), the
-- challenge's nonce, the device's enrolled key and last counter. xmin of
-- the payment and challenge rows lets pis_decide() refuse to decide on
-- rows changed after they were read.
CREATE OR REPLACE FUNCTION pis_outcomes(p_limit integer)
RETURNS TABLE (payment_id uuid, challenge_id uuid, outcome text,
    counter bigint, signature bytea, nonce bytea, amount_minor bigint,
    currency text, creditor_name text, creditor_iban text, changed boolean,
    public_key bytea, last_counter bigint, device_ok boolean,
    payment_xmin text, challenge_xmin text)
LANGUAGE sql STABLE AS $$
	SELECT p.id, c.id, c.outcome, c.counter, c.signature, c.nonce,
	    p.amount_minor, p.currency, p.creditor_name, p.creditor_iban,
	    (p.amount_minor, p.currency, p.creditor_name, p.creditor_iban)
		IS DISTINCT FROM (c.amount_minor, c.currency, c.payee_name,
		c.payee_iban),
	    d.public_key, d.last_counter,
	    d.status = 'active' AND d.psu_id = c.psu_id,
	    p.xmin::text, c.xmin::text
	FROM pis_candidates() k
	JOIN payment p ON p.id = k.payment_id
	JOIN payment_authorisation a ON a.payment_id = p.id
	JOIN device_challenge c ON c.id = a.challenge_id
	JOIN device d ON d.serial = c.device_serial
	WHERE p.transaction_status = 'RCVD' AND c.status = 'done'
	    AND c.finished_at <= c.deadline
	ORDER BY c.finished_at
	LIMIT p_limit;
$$;

-- The service's decision on one outcome it verified (src/pis/decide.c):
-- p_reason NULL: the signature verified as an approval, so ACTC; else
-- RJCT with p_reason. p_counter (NULL when the signature did not verify)
-- is the verified counter: the device's last_counter is raised to it only
-- if larger, in this transaction; if it is not larger (or the device is
-- no longer active) the payment is RJCT (counter not increasing, device
-- blocked) instead. Exactly once: the payment's row lock and its RCVD
-- status; rows changed since the service read them (xmin) are not
-- decided here ('stale': read again). Returns the status set, 'decided'
-- (someone else decided it) or 'stale'.
CREATE OR REPLACE FUNCTION pis_decide(p_payment_id uuid,
    p_challenge_id uuid, p_payment_xmin text, p_challenge_xmin text,
    p_reason text, p_detail text, p_counter bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	p record;
	c record;
	d record;
	v_reason text := p_reason;
	v_detail text := p_detail;
BEGIN
	SELECT py.transaction_status, py.xmin::text AS x, py.product,
	    py.psu_id INTO p
	FROM payment py WHERE py.id = p_payment_id FOR UPDATE;
	IF NOT FOUND OR p.transaction_status <> 'RCVD' THEN
		RETURN 'decided';
	END IF;
	SELECT ch.device_serial, ch.psu_id, ch.status,
	    ch.finished_at > ch.deadline AS late, ch.xmin::text AS x,
	    coalesce(a.method, a.approach) AS method INTO c
	FROM device_challenge ch
	JOIN payment_authorisation a ON a.challenge_id = ch.id
	WHERE ch.id = p_challenge_id AND a.payment_id = p_payment_id
	FOR UPDATE OF ch;
	IF NOT FOUND OR c.status <> 'done' OR p.x <> p_payment_xmin
	    OR c.x <> p_challenge_xmin THEN
		RETURN 'stale';
	END IF;
	IF c.late THEN
		v_reason := 'timed out';
		v_detail := 'outcome written after the deadline';
	ELSIF p_counter IS NOT NULL THEN
		SELECT dv.status = 'active' AND dv.psu_id = c.psu_id AS ok INTO d
		FROM device dv WHERE dv.serial = c.device_serial FOR UPDATE;
		IF NOT d.ok THEN
			v_reason := 'device blocked';
			v_detail := 'device blocked or reassigned before the '
			    'decision';
		ELSE
			UPDATE device SET last_counter = p_counter
			WHERE serial = c.device_serial
			    AND last_counter < p_counter;
			IF NOT FOUND THEN
				v_reason := 'counter not increasing';
				v_detail := 'counter ' || p_counter;
			END IF;
		END IF;
	END IF;
	IF v_reason IS NOT NULL THEN
		PERFORM pis_reject(p_payment_id, v_reason, v_detail);
		RETURN 'RJCT';
	END IF;
	UPDATE payment SET transaction_status = 'ACTC', status_at = now()
	WHERE id = p_payment_id;
	UPDATE payment_authorisation SET sca_status = 'finalised',
	    status_at = now()
	WHERE payment_id = p_payment_id;
	PERFORM pis_audit_confirmed(p_payment_id, p.product, c.method,
	    c.device_serial, p.psu_id);
	RETURN 'ACTC';
END;
$$;

-- The sandbox's booking (src/pis/booking.h): an ACTC payment, in one
-- transaction, becomes ACSC (the debtor's available balance falls and a
-- booked transaction appears, negative, with the creditor and the
-- remittance in its explanation) or RJCT insufficient funds. Exactly
-- once: the payment's row lock and its ACTC status. Returns ACSC, RJCT,
-- or 'none' (not ACTC: booked already, or never passed SCA; or its
-- execution date is still ahead).
CREATE OR REPLACE FUNCTION pis_book(p_id uuid) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	p payment%ROWTYPE;
	v_balance bigint;
	v_tx text;
BEGIN
	SELECT * INTO p FROM payment WHERE id = p_id FOR UPDATE;
	IF NOT FOUND OR p.transaction_status <> 'ACTC'
	    OR p.execution_date > current_date THEN
		RETURN 'none';
	END IF;
	SELECT amount_minor INTO v_balance FROM balance
	WHERE account_id = p.debtor_account_id FOR UPDATE;
	IF v_balance IS NULL OR v_balance < p.amount_minor THEN
		UPDATE payment SET transaction_status = 'RJCT',
		    reject_reason = 'insufficient funds',
		    reject_detail = 'available ' || coalesce(v_balance, 0)
			|| ', needed ' || p.amount_minor,
		    status_at = now()
		WHERE id = p_id;
		RETURN 'RJCT';
	END IF;
	v_tx := 'PIS-' || upper(replace(p.id::text, '-', ''));
	UPDATE balance SET amount_minor = amount_minor - p.amount_minor,
	    last_change_at = now(), reference_date = current_date
	WHERE account_id = p.debtor_account_id;
	INSERT INTO account_transaction (account_id, transaction_id,
	    booking_date, value_date, amount_minor, currency, explanation)
	VALUES (p.debtor_account_id, v_tx, current_date, current_date,
	    -p.amount_minor, p.currency,
	    p.creditor_name || ' ' || p.creditor_iban
		|| coalesce(': ' || p.remittance, ''));
	UPDATE payment SET transaction_status = 'ACSC', booking_ref = v_tx,
	    status_at = now()
	WHERE id = p_id;
	RETURN 'ACSC';
END;
$$;

-- ACTC payments not booked yet (a crash between ACTC and the booking, or
-- a notification lost, or a future-dated payment whose date has come:
-- the decider's round asks every second), oldest first.
CREATE OR REPLACE FUNCTION pis_unbooked(p_limit integer)
RETURNS SETOF uuid LANGUAGE sql STABLE AS $$
	SELECT id FROM payment WHERE transaction_status = 'ACTC'
	    AND (execution_date IS NULL OR execution_date <= current_date)
	ORDER BY status_at LIMIT p_limit;
$$;
