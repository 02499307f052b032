-- 070_pis: payment initiation (issue 9). A payment, its one
-- authorisation (Berlin Group "implicit start": created with the payment),
-- the link to the device challenge of decoupled SCA, and what the
-- endpoint functions (src/db/functions/60_pis.sql) answer.
--
-- Amounts are integer minor units (bigint), never a double: the service
-- parses the TPP's decimal string in C. The creditor name is stored in
-- the NFC form that devtext_payee_normalize() returned, which is what
-- the device shows and signs and what the service verifies against.
--
-- Statuses (Berlin Group 1.2):
--	transaction_status	RCVD received, ACTC SCA passed, ACSC booked,
--				RJCT rejected (reject_reason says why),
--				CANC cancelled by the TPP
--	sca_status		received (redirect: the PSU has not opened
--				the page yet), started, finalised, failed
-- Every RJCT keeps its reason (shown to the PSU and to staff; the TPP
-- sees only RJCT, scaStatus failed and a general psuMessage, RTS Art.
-- 4(3)(a)). reject_detail keeps the raw text (e.g. the daemon's
-- failure_reason) for staff.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE payment (
	id		uuid PRIMARY KEY,
	product		text NOT NULL CHECK (product IN ('sepa-credit-transfers',
			    'instant-sepa-credit-transfers')),
	psu_id		bigint NOT NULL REFERENCES psu(id),
	consent_id	uuid NOT NULL REFERENCES consent(id),
	client_id	text NOT NULL REFERENCES oauth_client(client_id),
	tpp_id		bigint NOT NULL REFERENCES tpp(id),
	debtor_account_id bigint NOT NULL REFERENCES account(id),
	debtor_iban	text NOT NULL
			CHECK (debtor_iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$'),
	creditor_iban	text NOT NULL
			CHECK (creditor_iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$'),
	creditor_name	text NOT NULL CHECK (octet_length(creditor_name)
			    BETWEEN 1 AND 70 AND creditor_name !~ '[[:cntrl:]]'),
	remittance	text CHECK (char_length(remittance) BETWEEN 1 AND 140
			    AND remittance !~ '[[:cntrl:]]'),
	amount_minor	bigint NOT NULL
			CHECK (amount_minor BETWEEN 1 AND 99999999999),
	currency	text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
	transaction_status text NOT NULL DEFAULT 'RCVD'
			CHECK (transaction_status IN ('RCVD', 'ACTC', 'ACSC',
			    'RJCT', 'CANC')),
	reject_reason	text CHECK (reject_reason IN ('declined', 'timed out',
			    'device blocked', 'device unplugged', 'PIN locked',
			    'device error', 'bad signature',
			    'counter not increasing', 'payment changed',
			    'insufficient funds', 'authentication failed')),
	reject_detail	text,
	-- TPP-Redirect-URI / TPP-Nok-Redirect-URI (registered URIs of the
	-- client only), for the redirect SCA pages
	tpp_redirect_uri text,
	tpp_nok_redirect_uri text,
	psu_ip_address	inet,
	request_id	uuid,
	-- the account_transaction that booked it (ACSC)
	booking_ref	text,
	created_at	timestamptz NOT NULL DEFAULT now(),
	status_at	timestamptz NOT NULL DEFAULT now(),
	CHECK ((transaction_status = 'RJCT') = (reject_reason IS NOT NULL)),
	CHECK ((transaction_status = 'ACSC') = (booking_ref IS NOT NULL))
);
CREATE INDEX payment_psu ON payment (psu_id, created_at DESC);
-- What the decider and the booking sweep look at.
CREATE INDEX payment_open ON payment (transaction_status, created_at)
	WHERE transaction_status IN ('RCVD', 'ACTC');

-- One authorisation per payment.
--	approach	decoupled (the PSU's authenticator, chosen at
--			initiation) or redirect (the bank's pages)
--	method		how SCA is done: device (a device_challenge) or
--			totp (redirect pages without an authenticator);
--			NULL until known (redirect before the PSU logs in)
--	challenge_id	the device challenge (decoupled: created with the
--			payment; redirect with an authenticator: by the page)
--	auth_code_mac	redirect with TOTP: the authentication code bound
--	auth_code_kid	to the payment (RTS Art. 5), a MAC under a key of
--			the key files (kid) over payment id, amount,
--			currency, creditor IBAN and name
--	deadline	when SCA must be complete (decoupled: the
--			challenge's deadline)
CREATE TABLE payment_authorisation (
	id		uuid PRIMARY KEY,
	payment_id	uuid NOT NULL UNIQUE REFERENCES payment(id),
	approach	text NOT NULL CHECK (approach IN ('decoupled', 'redirect')),
	method		text CHECK (method IN ('device', 'totp')),
	sca_status	text NOT NULL CHECK (sca_status IN ('received', 'started',
			    'finalised', 'failed')),
	challenge_id	uuid UNIQUE REFERENCES device_challenge(id),
	auth_code_mac	bytea,
	auth_code_kid	text,
	deadline	timestamptz,
	created_at	timestamptz NOT NULL DEFAULT now(),
	status_at	timestamptz NOT NULL DEFAULT now(),
	CHECK (approach <> 'decoupled' OR (method = 'device'
	    AND challenge_id IS NOT NULL)),
	CHECK (method IS DISTINCT FROM 'device' OR challenge_id IS NOT NULL
	    OR sca_status = 'received')
);

-- The time of an outcome is the database's, not the writer's: whoever
-- ends a challenge (the daemon, the service, or a forged write straight
-- into the table), finished_at is when the row was written, so that the
-- service can refuse an outcome written after the deadline.
CREATE FUNCTION device_challenge_finish_time() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.status IN ('done', 'failed', 'cancelled')
	    AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status
		OR OLD.outcome IS DISTINCT FROM NEW.outcome
		OR OLD.counter IS DISTINCT FROM NEW.counter
		OR OLD.signature IS DISTINCT FROM NEW.signature) THEN
		NEW.finished_at := clock_timestamp();
	END IF;
	RETURN NEW;
END $$;

CREATE TRIGGER device_challenge_finish_time
	BEFORE INSERT OR UPDATE ON device_challenge
	FOR EACH ROW EXECUTE FUNCTION device_challenge_finish_time();

-- payment_actc (payload: payment id) wakes the booking when a payment
-- passes SCA, whoever decided it (the device decider, the redirect pages).
CREATE FUNCTION payment_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.transaction_status = 'ACTC' AND (TG_OP = 'INSERT'
	    OR OLD.transaction_status IS DISTINCT FROM 'ACTC') THEN
		PERFORM pg_notify('payment_actc', NEW.id::text);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER payment_notify
	AFTER INSERT OR UPDATE OF transaction_status ON payment
	FOR EACH ROW EXECUTE FUNCTION payment_notify();

-- What a payment endpoint function may refuse; src/pis/pis_call.c
-- answers each (status, Berlin Group code, path, text).
CREATE TYPE pis_refusal AS ENUM (
	'token_invalid',
	'token_expired',
	'certificate_of_another_tpp',
	'request_id_used',
	'consent_scope',
	'resource_unknown',		-- 404: not this TPP's and PSU's payment
	'account_unknown',		-- 403: debtor not in the consent
	'debtor_currency',		-- 400: debtor account not in EUR
	'redirect_uri',			-- 400: TPP-Redirect-URI not registered
	'nok_redirect_uri',		-- 400: TPP-Nok-Redirect-URI not registered
	'cancellation_invalid'		-- 405: SCA already final
);

-- An endpoint's answer: a refusal (detail: its variable text, if any),
-- or the HTTP status and the finished JSON body (NULL: no body).
CREATE TYPE pis_result AS (
	refusal	pis_refusal,
	detail	text,
	status	integer,
	body	text
);

-- What the decider reads for one undecided challenge (see
-- pis_outcomes() in the functions file).
CREATE TYPE pis_outcome AS (
	payment_id	uuid,
	challenge_id	uuid,
	status		text,		-- the challenge's
	outcome		text,
	counter		bigint,
	signature	bytea,
	failure_reason	text,
	late		boolean,	-- finished after the deadline
	nonce		bytea,
	amount_minor	bigint,		-- the payment row's fields
	currency	text,
	creditor_name	text,
	creditor_iban	text,
	changed		boolean,	-- payment row differs from challenge
	public_key	bytea,
	last_counter	bigint,
	device_status	text
);
