-- Fraud marks of payments, for the semi-annual fraud statistics (EBA
-- Guidelines on fraud reporting under PSD2, EBA/GL/2018/05). A PSU marks
-- one of their executed payments, staff mark, correct (another type) or
-- withdraw a mark, each with a reason. One row per act, never updated:
-- the payment's mark is its newest row (withdraw: not fraudulent), the
-- rows before it are the history. Each act is an audit row as well.
--
-- fraud_type: the guidelines' three types for credit transfers:
--	issued_by_fraudster	issuance of a payment order by the fraudster
--	modified_by_fraudster	modification of a payment order by the
--				fraudster
--	payer_manipulated	manipulation of the payer by the fraudster to
--				issue a payment order
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE fraud_mark (
	id		bigserial PRIMARY KEY,
	payment_id	uuid NOT NULL REFERENCES payment(id),
	action		text NOT NULL CHECK (action IN ('mark', 'correct',
			    'withdraw')),
	fraud_type	text CHECK (fraud_type IN ('issued_by_fraudster',
			    'modified_by_fraudster', 'payer_manipulated')),
	reported_by	text NOT NULL CHECK (reported_by IN ('psu', 'staff')),
	-- "psu:<username>" or "staff:<username>", as in audit_log
	actor		text NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
	reason		text CHECK (char_length(reason) BETWEEN 1 AND 500
			    AND reason !~ '[[:cntrl:]]'),
	created_at	timestamptz NOT NULL DEFAULT now(),
	CHECK ((action = 'withdraw') = (fraud_type IS NULL)),
	-- staff give a reason for every act; a PSU's is optional
	CHECK (reported_by = 'psu' OR reason IS NOT NULL),
	CHECK (reported_by = 'staff' OR action = 'mark')
);
CREATE INDEX fraud_mark_payment ON fraud_mark (payment_id, id);

-- The history is kept: no role of the service or of psd2ctl may change
-- or delete a row (the default privileges of migration 083 grant both).
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['psd2_service', 'psd2_operator'] LOOP
		CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles
		    WHERE rolname = r);
		EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON fraud_mark '
		    'FROM %I', r);
	END LOOP;
END $$;

-- The report counts executed payments by the time they were executed.
CREATE INDEX payment_acsc_status_at ON payment (status_at)
    WHERE transaction_status = 'ACSC';
