-- Future-dated single payments (requestedExecutionDate, the standard's
-- paths, src/bg/README.md "Payments"): authorised now, booked on their
-- date, ACTC until then, cancellable by the TPP until the day before.
-- NULL: executed once authorised, as before.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).
-- The new enum value is used only by functions called after the commit.

ALTER TABLE payment ADD COLUMN execution_date date;

ALTER TYPE pis_refusal ADD VALUE IF NOT EXISTS 'execution_date_invalid';
