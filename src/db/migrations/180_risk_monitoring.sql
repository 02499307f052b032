-- 180_risk_monitoring: transaction monitoring (RTS Art. 2). Every payment
-- is assessed in pis_initiate's transaction, before it goes to the PSU
-- for SCA, against rules the bank configures; the outcome is kept on the
-- payment, and a payment whose level says so is held for a staff review
-- (four eyes) or rejected at once (src/db/functions/63_pis_risk.sql).
--
-- Configuration is in tables, not in settings: rules change while the
-- service runs, the same for every instance, and each change is an audit
-- row. Only the functions of 63_pis_risk.sql (SECURITY DEFINER) write
-- them: the service's and psd2ctl's roles may only read.
--	risk_rule	one row per rule the assessment knows: enabled, the
--			score it adds when it fires, its parameters
--	risk_level	the score from which a level starts and what it does:
--			proceed (SCA as before), hold (staff review), reject
--	risk_blocklist	creditor IBANs the bank blocks
-- payment: risk_score, risk_level, risk_rules (the rules that fired with
-- their values and thresholds), NULL for payments made before this
-- migration; held: waiting for the review (no SCA may start).
-- payment_review: a held payment's review: a proposal (release or
-- reject) by one staff member, confirmed by another; written only by
-- the functions too, so no role skips the second pair of eyes.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE risk_rule (
	rule		text PRIMARY KEY CHECK (rule IN ('amount_history',
			    'new_payee', 'velocity_count', 'velocity_sum',
			    'unusual_ip', 'blocklist', 'instant_night')),
	enabled		boolean NOT NULL,
	score		integer NOT NULL CHECK (score BETWEEN 0 AND 1000),
	params		jsonb NOT NULL CHECK (jsonb_typeof(params) = 'object'),
	updated_by	text NOT NULL,
	updated_at	timestamptz NOT NULL DEFAULT now()
);

-- Only the block list is on from the start: the other thresholds depend
-- on the bank's customers, and set blind they would hold ordinary
-- payments; the bank enables and tunes them (psd2ctl risk set).
INSERT INTO risk_rule (rule, enabled, score, params, updated_by) VALUES
	('amount_history', false, 60, '{"days": 90, "percent": 500,
	    "statistic": "median", "min_payments": 3}', 'migration'),
	('new_payee', false, 20, '{"days": 365}', 'migration'),
	('velocity_count', false, 40, '{"minutes": 10, "count": 5}',
	    'migration'),
	('velocity_sum', false, 40, '{"minutes": 60, "sum_minor": 500000}',
	    'migration'),
	('unusual_ip', false, 30, '{"days": 90, "min_payments": 3,
	    "prefix_v4": 24, "prefix_v6": 48}', 'migration'),
	('blocklist', true, 100, '{}', 'migration'),
	('instant_night', false, 20, '{"from": "23:00", "to": "06:00",
	    "time_zone": "Europe/Berlin"}', 'migration');

CREATE TABLE risk_level (
	level		text PRIMARY KEY CHECK (level IN ('low', 'medium',
			    'high')),
	min_score	integer NOT NULL CHECK (min_score BETWEEN 0 AND 100000),
	action		text NOT NULL CHECK (action IN ('proceed', 'hold',
			    'reject')),
	updated_by	text NOT NULL,
	updated_at	timestamptz NOT NULL DEFAULT now(),
	CHECK (level <> 'low' OR (min_score = 0 AND action = 'proceed'))
);
INSERT INTO risk_level (level, min_score, action, updated_by) VALUES
	('low', 0, 'proceed', 'migration'),
	('medium', 50, 'proceed', 'migration'),
	('high', 100, 'hold', 'migration');

CREATE TABLE risk_blocklist (
	iban		text PRIMARY KEY
			CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$'),
	reason		text NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 200
			    AND reason !~ '[[:cntrl:]]'),
	added_by	text NOT NULL,
	added_at	timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE payment ADD COLUMN risk_score integer;
ALTER TABLE payment ADD COLUMN risk_level text
	CHECK (risk_level IN ('low', 'medium', 'high'));
ALTER TABLE payment ADD COLUMN risk_rules jsonb;
ALTER TABLE payment ADD COLUMN held boolean NOT NULL DEFAULT false;
ALTER TABLE payment ADD CONSTRAINT payment_held_open
	CHECK (NOT held OR transaction_status = 'RCVD');

-- Two reasons more: rejected by the assessment, rejected by the review.
ALTER TABLE payment DROP CONSTRAINT payment_reject_reason_check;
ALTER TABLE payment ADD CONSTRAINT payment_reject_reason_check
	CHECK (reject_reason IN ('declined', 'timed out', 'device blocked',
	    'device unplugged', 'PIN locked', 'device error', 'bad signature',
	    'counter not increasing', 'payment changed', 'insufficient funds',
	    'authentication failed', 'suspected fraud', 'rejected on review'));

-- A held decoupled payment has no challenge yet (method NULL until the
-- release creates it); one rejected before SCA never gets one.
ALTER TABLE payment_authorisation DROP CONSTRAINT payment_authorisation_check;
ALTER TABLE payment_authorisation ADD CONSTRAINT payment_authorisation_check
	CHECK (approach <> 'decoupled' OR (method = 'device'
	    AND challenge_id IS NOT NULL) OR (method IS NULL
	    AND challenge_id IS NULL AND sca_status IN ('received', 'failed')));

-- status: open (no proposal), proposed (proposal by proposed_by, waiting
-- for a second member), released, rejected (decided_by confirmed it).
-- sca_seconds and nonce: what the release gives the SCA (the deadline
-- starts at the release; the nonce of the initiation, never used before).
CREATE TABLE payment_review (
	payment_id	uuid PRIMARY KEY REFERENCES payment(id),
	status		text NOT NULL DEFAULT 'open' CHECK (status IN ('open',
			    'proposed', 'released', 'rejected')),
	proposal	text CHECK (proposal IN ('release', 'reject')),
	proposed_by	text,
	proposed_at	timestamptz,
	decided_by	text,
	decided_at	timestamptz,
	sca_seconds	integer NOT NULL CHECK (sca_seconds > 0),
	nonce		bytea NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT now(),
	CHECK ((status = 'open') = (proposal IS NULL)),
	CHECK ((proposal IS NULL) = (proposed_by IS NULL)),
	CHECK ((status IN ('released', 'rejected')) = (decided_by IS NOT NULL)),
	CHECK (decided_by IS NULL OR decided_by <> proposed_by)
);
CREATE INDEX payment_review_queue ON payment_review (created_at)
	WHERE status IN ('open', 'proposed');

DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['psd2_service', 'psd2_operator'] LOOP
		CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles
		    WHERE rolname = r);
		EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON risk_rule, '
		    'risk_level, risk_blocklist, payment_review FROM %I', r);
	END LOOP;
END
$$;
