-- Payment initiation (issue 9): trigger functions of the payment tables
-- and of device_challenge's outcome time (the triggers are schema, in
-- migrations/070_pis.sql), the endpoint functions, the decider's and the
-- booking's functions.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- The time of an outcome is the database's, not the writer's (070).
CREATE OR REPLACE FUNCTION device_challenge_finish_time() RETURNS trigger
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
