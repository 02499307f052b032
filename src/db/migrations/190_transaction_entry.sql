-- Each transaction's entry of the contract's transactions page, built
-- once, when the row is written, instead of on every read: building a
-- page's 50 entries (to_char, the amount, json_build_object) was half of
-- what PostgreSQL spent on a transactions call (tests/bench/README.md,
-- "Where the database's time goes"). ais_transactions aggregates the
-- stored entries as they are, in the same text json_build_object made.
--
-- A trigger builds the entry on every INSERT and UPDATE, so it cannot go
-- stale and no writer has to know about it. The rows already there get
-- theirs here: CREATE TRIGGER holds off other writers of the table until
-- this transaction commits, so none is written without one.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE account_transaction ADD COLUMN entry json;

-- The trigger's function as it is now (functions/30_ais.sql keeps its
-- current definition).
CREATE FUNCTION account_transaction_entry() RETURNS trigger
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
	RETURN NEW;
END;
$$;

CREATE TRIGGER account_transaction_entry BEFORE INSERT OR UPDATE
    ON account_transaction FOR EACH ROW
    EXECUTE FUNCTION account_transaction_entry();

-- The trigger builds what this sets.
UPDATE account_transaction SET entry = NULL;
ALTER TABLE account_transaction ALTER COLUMN entry SET NOT NULL;
