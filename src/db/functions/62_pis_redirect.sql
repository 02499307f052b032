-- Payment initiation, the PSU's pages (redirect): what the
-- bank's own pages under /auth/payments read. The current definition of
-- each function, applied whole after the migrations (src/db/README.md).

-- GET /auth/payments: the PSU of the browser session (idle rule of the
-- PSU login, session_psu) and their payments, newest first. Unlike the
-- TPP, the PSU sees the specific reason of a rejection. The
-- amount stays integer minor units; the page formats it (devcur_format).
CREATE OR REPLACE FUNCTION psu_payments(p_session_hash bytea, p_idle integer,
    OUT psu_id bigint, OUT payments json)
LANGUAGE plpgsql AS $$
BEGIN
	psu_id := session_psu(p_session_hash, p_idle);
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(json_agg(json_build_object(
	    'id', p.id,
	    'created', to_char(p.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'tpp', t.name,
	    'amount_minor', p.amount_minor,
	    'currency', p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban,
	    'debtor_iban', p.debtor_iban,
	    'remittance', p.remittance,
	    'execution_date', p.execution_date,
	    'status', CASE WHEN p.held THEN 'HELD'
		ELSE p.transaction_status END,
	    'reason', p.reject_reason,
	    'risk', pis_risk_psu_rules(p.held, p.reject_reason, p.risk_rules))
	    ORDER BY p.created_at DESC, p.id), '[]'::json)
	INTO payments
	FROM (SELECT * FROM payment
	    WHERE payment.psu_id = psu_payments.psu_id
	    ORDER BY created_at DESC, id LIMIT 200) p
	JOIN tpp t ON t.id = p.tpp_id;
END;
$$;

-- The PSU of a browser session for payment p_id's authorise page (idle
-- rule of the PSU login, renewed on use): a full PSU session (password
-- and TOTP), or a session opened by the password alone for this payment
-- (psu_payment_login), whose second factor is the payment's own SCA.
-- NULL otherwise.
CREATE OR REPLACE FUNCTION session_psu_payment(p_session_hash bytea,
    p_idle integer, p_id uuid)
RETURNS bigint LANGUAGE sql AS $$
	UPDATE web_session SET last_seen_at = now(),
	    expires_at = now() + make_interval(secs => p_idle)
	WHERE id_hash = p_session_hash AND expires_at - now() > '0'
	    AND (subject_kind = 'psu' OR (subject_kind = 'psu_payment'
		AND payment_id = p_id))
	RETURNING subject_id;
$$;

-- The password step of a login for payment p_id's authorise page: the
-- factor's outcome as in the PSU login (login_factor: lockout, audit),
-- and on success a session for that page only (p_session_hash, derived
-- from the flow and the PSU, so a repeated post opens no second one).
-- The PSU then authenticates the payment itself on the page (device or
-- TOTP): one password and one second factor, never a TOTP at login and
-- another for the payment. Returns ok (opened now), repeat (this form's
-- login opened it before and it is live: the caller shows the page only
-- to the browser that holds it), expired (it was, and has ended), failed
-- or locked.
CREATE OR REPLACE FUNCTION psu_payment_login(p_psu_id bigint, p_ok boolean,
    p_max_failures integer, p_lock_seconds integer, p_session_hash bytea,
    p_session_idle integer, p_id uuid)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	r := login_factor(p_psu_id, p_ok, p_max_failures, p_lock_seconds,
	    false);
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	-- login_factor holds the PSU's row lock: a racing repeat waits here.
	IF EXISTS (SELECT 1 FROM web_session WHERE id_hash = p_session_hash) THEN
		IF EXISTS (SELECT 1 FROM web_session
		    WHERE id_hash = p_session_hash
			AND subject_kind = 'psu_payment'
			AND subject_id = p_psu_id AND payment_id = p_id
			AND expires_at - now() > '0') THEN
			RETURN 'repeat';
		END IF;
		RETURN 'expired';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.login', jsonb_build_object('factor',
	    'password', 'outcome', 'ok', 'payment', p_id)
	FROM psu WHERE id = p_psu_id;
	INSERT INTO web_session (id_hash, subject_kind, subject_id,
	    payment_id, expires_at)
	VALUES (p_session_hash, 'psu_payment', p_psu_id, p_id,
	    now() + make_interval(secs => p_session_idle));
	RETURN 'ok';
END;
$$;

-- Ends payment p_id RJCT timed out if its redirect authorisation is
-- still open, no device challenge has taken it over, and its deadline
-- (psd2_pis_redirect_seconds after initiation) has passed. The caller
-- holds the payment's row lock. Returns true when it did.
CREATE OR REPLACE FUNCTION pis_redirect_expire_one(p_id uuid)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM payment_authorisation
	WHERE payment_id = p_id AND approach = 'redirect' AND method IS NULL
	    AND sca_status IN ('received', 'started') AND deadline <= now();
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	RETURN pis_reject(p_id, 'timed out',
	    'redirect authorisation not finished by the deadline');
END;
$$;

-- The redirect part of the decider's sweep (pis_sweep): every redirect
-- payment whose deadline passed unfinished ends RJCT timed out, found by
-- index (migrations/090), each under its row lock (SKIP LOCKED: a PSU
-- posting right now, or another instance, is left alone and checked
-- again under the lock). Returns the number ended.
CREATE OR REPLACE FUNCTION pis_redirect_expire() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n integer := 0;
BEGIN
	FOR r IN SELECT p.id FROM payment_authorisation a
	    JOIN payment p ON p.id = a.payment_id
	    WHERE a.sca_status IN ('received', 'started')
		AND a.approach = 'redirect' AND a.method IS NULL
		AND a.deadline <= now() AND p.transaction_status = 'RCVD'
	    ORDER BY a.deadline
	    FOR UPDATE OF p SKIP LOCKED
	LOOP
		IF pis_redirect_expire_one(r.id) THEN
			n := n + 1;
		END IF;
	END LOOP;
	RETURN n;
END;
$$;

-- GET /auth/payments/{id}/authorise (the scaRedirect of 60_pis.sql):
-- opening the page moves a redirect authorisation of an undecided payment
-- from received to started (Berlin Group: the PSU has begun), with or
-- without a browser session. Then, for the PSU of the session
-- (session_psu_payment): that PSU's payment as the page shows it, or
-- NULL when it is not theirs or not a redirect payment (the page then
-- says unknown, as for any id). psu_id NULL: no session, the login comes
-- first. A payment past its redirect deadline ends here (RJCT timed out)
-- if the sweep has not ended it yet, so the page says it expired.
-- can_device / can_totp: the form the page offers (an active
-- authenticator or not); key_ids: with can_totp, the PSU's passkeys and
-- security keys, which may replace the code; waiting: a device challenge runs (the page
-- refreshes itself); ok_uri / nok_uri: where the browser goes at the end.
CREATE OR REPLACE FUNCTION psu_payment_authorise_page(p_session_hash bytea,
    p_idle integer, p_id uuid, OUT psu_id bigint, OUT payment json)
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE payment_authorisation a SET sca_status = 'started',
	    status_at = now()
	FROM payment p
	WHERE a.payment_id = p_id AND p.id = a.payment_id
	    AND a.approach = 'redirect' AND a.sca_status = 'received'
	    AND p.transaction_status = 'RCVD' AND NOT p.held;
	IF p_session_hash IS NULL THEN
		RETURN;
	END IF;
	psu_id := session_psu_payment(p_session_hash, p_idle, p_id);
	IF psu_id IS NULL THEN
		RETURN;
	END IF;
	PERFORM 1 FROM payment py WHERE py.id = p_id
	    AND py.psu_id = psu_payment_authorise_page.psu_id
	    AND py.transaction_status = 'RCVD' FOR UPDATE;
	IF FOUND THEN
		PERFORM pis_redirect_expire_one(p_id);
	END IF;
	SELECT json_build_object(
	    'id', p.id,
	    'tpp', t.name,
	    'amount_minor', p.amount_minor,
	    'currency', p.currency,
	    'creditor_name', p.creditor_name,
	    'creditor_iban', p.creditor_iban,
	    'debtor_iban', p.debtor_iban,
	    'remittance', p.remittance,
	    'execution_date', p.execution_date,
	    'status', CASE WHEN p.held THEN 'HELD'
		ELSE p.transaction_status END,
	    'reason', p.reject_reason,
	    'risk', pis_risk_psu_rules(p.held, p.reject_reason, p.risk_rules),
	    'sca_status', a.sca_status,
	    'held', p.held,
	    'has_device', d.has_device,
	    'can_device', d.has_device AND o.open AND a.method IS NULL,
	    'can_totp', NOT d.has_device AND o.open AND a.method IS NULL,
	    'key_ids', CASE WHEN NOT d.has_device AND o.open
		AND a.method IS NULL THEN psu_key_ids(p.psu_id) END,
	    'waiting', o.open AND a.method = 'device',
	    'ok_uri', p.tpp_redirect_uri,
	    'nok_uri', p.tpp_nok_redirect_uri)
	INTO payment
	FROM payment p
	JOIN payment_authorisation a ON a.payment_id = p.id
	JOIN tpp t ON t.id = p.tpp_id
	CROSS JOIN LATERAL (SELECT p.transaction_status = 'RCVD'
	    AND NOT p.held AND a.sca_status IN ('received', 'started')
	    AS open) o
	CROSS JOIN LATERAL (SELECT pis_psu_device(p.psu_id) IS NOT NULL
	    AS has_device) d
	WHERE p.id = p_id AND p.psu_id = psu_payment_authorise_page.psu_id
	    AND a.approach = 'redirect';
END;
$$;

-- What the booking (src/pis/booking.c) checks before it books: the
-- authorisation's method and authentication code (sca_code.h: kept for
-- redirect SCA, by TOTP or on the authenticator), and the payment's
-- values the code covers.
-- No row for a payment that is not ACTC.
CREATE OR REPLACE FUNCTION pis_book_input(p_id uuid, OUT method text,
    OUT auth_code_kid text, OUT auth_code_hex text, OUT amount_minor bigint,
    OUT currency text, OUT creditor_iban text, OUT creditor_name text)
RETURNS SETOF record LANGUAGE sql STABLE AS $$
	SELECT a.method, a.auth_code_kid, encode(a.auth_code_mac, 'hex'),
	    p.amount_minor, p.currency, p.creditor_iban, p.creditor_name
	FROM payment p JOIN payment_authorisation a ON a.payment_id = p.id
	WHERE p.id = p_id AND p.transaction_status = 'ACTC';
$$;

-- Books an ACTC payment (pis_book, 60_pis.sql) once the service has
-- checked its authentication code: p_code_ok is the service's verdict
-- on the code over the values p_amount .. p_name it read. A payment
-- authorised with a code (method totp, or a code kept) books only when
-- the code verified and the row, under its lock now, still holds those
-- values; otherwise RJCT payment changed (RTS Art. 5: the code is bound
-- to amount and payee). Other payments book as before.
CREATE OR REPLACE FUNCTION pis_book_coded(p_id uuid, p_code_ok boolean,
    p_amount bigint, p_currency text, p_iban text, p_name text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	p payment%ROWTYPE;
	a payment_authorisation%ROWTYPE;
BEGIN
	SELECT * INTO p FROM payment WHERE id = p_id FOR UPDATE;
	IF NOT FOUND OR p.transaction_status <> 'ACTC' THEN
		RETURN 'none';
	END IF;
	SELECT * INTO a FROM payment_authorisation WHERE payment_id = p_id;
	IF (a.method IN ('totp', 'key') OR a.auth_code_mac IS NOT NULL) AND
	    (NOT coalesce(p_code_ok, false)
	    OR p.amount_minor IS DISTINCT FROM p_amount
	    OR p.currency IS DISTINCT FROM p_currency
	    OR p.creditor_iban IS DISTINCT FROM p_iban
	    OR p.creditor_name IS DISTINCT FROM p_name) THEN
		UPDATE payment SET transaction_status = 'RJCT',
		    reject_reason = 'payment changed',
		    reject_detail = 'authentication code does not match the '
			|| 'payment',
		    status_at = now()
		WHERE id = p_id;
		RETURN 'RJCT';
	END IF;
	RETURN pis_book(p_id);
END;
$$;

-- POST /auth/payments/{id}/authorise, redirect SCA by TOTP or on the
-- authenticator: what the service needs to check the code and to compute
-- the authentication code (sca_code.h): the session's PSU
-- (session_psu_payment), the sealed TOTP seed, and the
-- payment's values. No row without a live session of the payment's PSU
-- or for a payment that is not a redirect one.
CREATE OR REPLACE FUNCTION psu_payment_totp_input(p_session_hash bytea,
    p_idle integer, p_id uuid, OUT psu_id bigint, OUT username text,
    OUT totp_box text, OUT amount_minor bigint, OUT currency text,
    OUT creditor_iban text, OUT creditor_name text)
RETURNS SETOF record LANGUAGE sql AS $$
	SELECT u.id, u.username, u.totp_box, p.amount_minor, p.currency,
	    p.creditor_iban, p.creditor_name
	FROM payment p
	JOIN payment_authorisation a ON a.payment_id = p.id
	JOIN psu u ON u.id = p.psu_id
	WHERE p.id = p_id AND a.approach = 'redirect'
	    AND u.id = session_psu_payment(p_session_hash, p_idle, p_id);
$$;

-- The PSU's TOTP code for a redirect payment, in one transaction under
-- the payment's and the PSU's locks. p_step: the time step the code
-- matched (NULL: it did not); p_amount .. p_name: the values the service
-- computed the authentication code p_mac (key p_kid) over. Lockout as in
-- the PSU login (login_factor): a wrong or reused code counts as a
-- failure. outcome:
--	ok		SCA passed now, or before (a repeated post): ACTC,
--			the code kept; the booking follows (payment_actc)
--	failed		the code was wrong or reused: nothing else changed
--	locked		the PSU is locked (right code while locked)
--	held		held for the bank's review (transaction monitoring):
--			no SCA until staff release it
--	rejected	the payment ended before (RJCT, CANC) or ended now
--			(its redirect deadline passed: RJCT timed out)
--	device		the PSU has an active authenticator, or a device
--			challenge runs: SCA is done on the authenticator
--	changed		the payment no longer holds the values the code was
--			made for: nothing stored
-- ok_uri / nok_uri: TPP-Redirect-URI and TPP-Nok-Redirect-URI.
CREATE OR REPLACE FUNCTION psu_payment_totp(p_id uuid, p_psu_id bigint,
    p_step bigint, p_max_failures integer, p_lock_seconds integer,
    p_amount bigint, p_currency text, p_iban text, p_name text,
    p_mac bytea, p_kid text, OUT outcome text, OUT ok_uri text,
    OUT nok_uri text)
LANGUAGE plpgsql AS $$
DECLARE
	p payment%ROWTYPE;
	a payment_authorisation%ROWTYPE;
	fresh boolean;
BEGIN
	SELECT * INTO p FROM payment WHERE id = p_id AND psu_id = p_psu_id
	FOR UPDATE;
	IF NOT FOUND THEN
		outcome := 'rejected';
		RETURN;
	END IF;
	ok_uri := p.tpp_redirect_uri;
	nok_uri := p.tpp_nok_redirect_uri;
	SELECT * INTO a FROM payment_authorisation WHERE payment_id = p_id;
	outcome := psu_payment_code_gate(p, a, p_psu_id, 'totp', p_amount,
	    p_currency, p_iban, p_name);
	IF outcome IS NOT NULL THEN
		RETURN;
	END IF;
	PERFORM 1 FROM psu WHERE id = p_psu_id FOR UPDATE;
	fresh := p_step IS NOT NULL AND EXISTS (SELECT 1 FROM psu
	    WHERE id = p_psu_id AND totp_last_step < p_step);
	outcome := login_factor(p_psu_id, fresh, p_max_failures,
	    p_lock_seconds, true);
	IF outcome <> 'ok' THEN
		RETURN;
	END IF;
	UPDATE psu SET totp_last_step = p_step WHERE id = p_psu_id;
	PERFORM psu_payment_code_done(p, a, p_psu_id, 'totp', p_mac, p_kid);
END;
$$;

-- The checks of psu_payment_totp and psu_payment_key before the code
-- itself, under the payment's lock (the caller's): NULL to go on, or the
-- outcome (ok: SCA passed before with the same method p_method, a
-- repeated post).
CREATE OR REPLACE FUNCTION psu_payment_code_gate(p payment,
    a payment_authorisation, p_psu_id bigint, p_method text,
    p_amount bigint, p_currency text, p_iban text, p_name text)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF a.sca_status = 'finalised' AND a.method = p_method AND
	    p.transaction_status IN ('ACTC', 'ACSC') THEN
		RETURN 'ok';
	END IF;
	IF p.held THEN
		RETURN 'held';
	END IF;
	IF p.transaction_status <> 'RCVD' OR a.approach <> 'redirect' OR
	    a.sca_status NOT IN ('received', 'started') OR
	    pis_redirect_expire_one(p.id) THEN
		RETURN 'rejected';
	END IF;
	IF a.method IS NOT NULL OR pis_psu_device(p_psu_id) IS NOT NULL THEN
		RETURN 'device';
	END IF;
	IF p.amount_minor IS DISTINCT FROM p_amount OR
	    p.currency IS DISTINCT FROM p_currency OR
	    p.creditor_iban IS DISTINCT FROM p_iban OR
	    p.creditor_name IS DISTINCT FROM p_name THEN
		RETURN 'changed';
	END IF;
	RETURN NULL;
END;
$$;

-- A redirect payment's code accepted (method totp or key): the code
-- bound to amount and payee kept, ACTC, the SCA outcome in the audit log
-- as the decider writes it for a device confirmation (60_pis.sql).
CREATE OR REPLACE FUNCTION psu_payment_code_done(p payment,
    a payment_authorisation, p_psu_id bigint, p_method text, p_mac bytea,
    p_kid text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	UPDATE payment_authorisation SET method = p_method,
	    sca_status = 'finalised', auth_code_mac = p_mac,
	    auth_code_kid = p_kid, status_at = now()
	WHERE id = a.id;
	UPDATE payment SET transaction_status = 'ACTC', status_at = now()
	WHERE id = p.id;
	PERFORM pis_audit_confirmed(p.id, p.product, p_method, NULL,
	    p_psu_id);
END;
$$;

-- The PSU's passkey or security key for a redirect payment, as
-- psu_payment_totp with a key instead of a code (psu_key_use has the
-- key's parameters: the challenge it signed was derived from the
-- payment's authentication code p_mac, so from amount and payee). A
-- spent challenge is refused as failed. Outcomes as psu_payment_totp's.
CREATE OR REPLACE FUNCTION psu_payment_key(p_id uuid, p_psu_id bigint,
    p_key_id bigint, p_ok boolean, p_count bigint, p_challenge_hash bytea,
    p_challenge_ttl integer, p_max_failures integer,
    p_lock_seconds integer, p_amount bigint, p_currency text,
    p_iban text, p_name text, p_mac bytea, p_kid text, OUT outcome text,
    OUT ok_uri text, OUT nok_uri text)
LANGUAGE plpgsql AS $$
DECLARE
	p payment%ROWTYPE;
	a payment_authorisation%ROWTYPE;
BEGIN
	SELECT * INTO p FROM payment WHERE id = p_id AND psu_id = p_psu_id
	FOR UPDATE;
	IF NOT FOUND THEN
		outcome := 'rejected';
		RETURN;
	END IF;
	ok_uri := p.tpp_redirect_uri;
	nok_uri := p.tpp_nok_redirect_uri;
	SELECT * INTO a FROM payment_authorisation WHERE payment_id = p_id;
	outcome := psu_payment_code_gate(p, a, p_psu_id, 'key', p_amount,
	    p_currency, p_iban, p_name);
	IF outcome IS NOT NULL THEN
		RETURN;
	END IF;
	PERFORM 1 FROM psu WHERE id = p_psu_id FOR UPDATE;
	outcome := psu_key_use(p_psu_id, p_key_id, p_ok, p_count,
	    p_challenge_hash, p_challenge_ttl, p_max_failures, p_lock_seconds);
	IF outcome = 'used' THEN
		outcome := 'failed';
	END IF;
	IF outcome <> 'ok' THEN
		RETURN;
	END IF;
	PERFORM psu_payment_code_done(p, a, p_psu_id, 'key', p_mac, p_kid);
END;
$$;

-- POST /auth/payments/{id}/authorise with method=device: the PSU with an
-- active authenticator chooses to confirm on it. In one transaction under
-- the payment's lock: the device challenge (pis_challenge_create, as for
-- decoupled SCA: exactly the payment's values, the service's fresh nonce
-- p_nonce, deadline p_sca_seconds from now, queued behind the device's
-- other challenges), the authorisation taken over by it (method device,
-- its deadline now the challenge's) and the authentication code p_mac
-- (key p_kid) over the values p_amount .. p_name the page showed, checked
-- again before booking. The decider (src/pis/decide.c) decides the
-- device's outcome as for decoupled SCA. outcome:
--	waiting		a challenge runs (created now, or before: a refresh
--			or a second post creates no second one)
--	ok		SCA passed before: ACTC or ACSC
--	held		held for the bank's review (transaction monitoring)
--	rejected	the payment ended (RJCT, CANC), or ended now (its
--			redirect deadline passed: RJCT timed out)
--	no_device	the PSU has no active authenticator (any more)
--	changed		the payment no longer holds the values shown
-- ok_uri / nok_uri: TPP-Redirect-URI and TPP-Nok-Redirect-URI.
CREATE OR REPLACE FUNCTION psu_payment_device(p_id uuid, p_psu_id bigint,
    p_nonce bytea, p_sca_seconds integer, p_amount bigint, p_currency text,
    p_iban text, p_name text, p_mac bytea, p_kid text, OUT outcome text,
    OUT ok_uri text, OUT nok_uri text)
LANGUAGE plpgsql AS $$
DECLARE
	p payment%ROWTYPE;
	a payment_authorisation%ROWTYPE;
	v_serial text;
	v_deadline timestamptz;
	v_challenge uuid;
BEGIN
	SELECT * INTO p FROM payment WHERE id = p_id AND psu_id = p_psu_id
	FOR UPDATE;
	IF NOT FOUND THEN
		outcome := 'rejected';
		RETURN;
	END IF;
	ok_uri := p.tpp_redirect_uri;
	nok_uri := p.tpp_nok_redirect_uri;
	SELECT * INTO a FROM payment_authorisation WHERE payment_id = p_id;
	IF p.transaction_status IN ('ACTC', 'ACSC') THEN
		outcome := 'ok';
		RETURN;
	END IF;
	IF p.held THEN
		outcome := 'held';
		RETURN;
	END IF;
	IF p.transaction_status <> 'RCVD' OR a.approach <> 'redirect' OR
	    a.sca_status NOT IN ('received', 'started') OR
	    pis_redirect_expire_one(p_id) THEN
		outcome := 'rejected';
		RETURN;
	END IF;
	IF a.method = 'device' THEN
		outcome := 'waiting';
		RETURN;
	END IF;
	IF p.amount_minor IS DISTINCT FROM p_amount OR
	    p.currency IS DISTINCT FROM p_currency OR
	    p.creditor_iban IS DISTINCT FROM p_iban OR
	    p.creditor_name IS DISTINCT FROM p_name THEN
		outcome := 'changed';
		RETURN;
	END IF;
	v_serial := pis_psu_device(p_psu_id);
	IF v_serial IS NULL THEN
		outcome := 'no_device';
		RETURN;
	END IF;
	v_deadline := now() + make_interval(secs => p_sca_seconds);
	v_challenge := pis_challenge_create(v_serial, p_id, p_nonce,
	    v_deadline);
	UPDATE payment_authorisation SET method = 'device',
	    challenge_id = v_challenge, sca_status = 'started',
	    deadline = v_deadline, auth_code_mac = p_mac,
	    auth_code_kid = p_kid, status_at = now()
	WHERE id = a.id;
	outcome := 'waiting';
END;
$$;
