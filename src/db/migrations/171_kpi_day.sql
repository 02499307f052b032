-- The day's sums of kpi_minute over every instance, per class: what the
-- reports read for a day instead of its minutes (a quarter of one
-- instance's minutes is 660,000 rows of 55 buckets each). A cache that
-- is never wrong: every write of a minute marks its day stale
-- (kpi_day_stale, by the trigger below), a stale day is read from its
-- minutes, and kpi_rollup() (worker 1 of each instance, after writing
-- its minutes) sums the stale days that ended more than a day ago, when
-- no instance can still hold one of their minutes (src/metrics/kpi.h:
-- a day of minutes in memory at most).
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE kpi_day (
	day		date NOT NULL,
	class		text NOT NULL CHECK (class IN ('oauth', 'ais', 'pis',
			    'funds', 'psu_pages')),
	requests	bigint NOT NULL,
	err_bank	bigint NOT NULL,
	err_tpp		bigint NOT NULL,
	err_psu		bigint NOT NULL,
	slow		bigint NOT NULL,
	failed		bigint NOT NULL,
	latency		bigint[] NOT NULL CHECK (cardinality(latency) = 55),
	PRIMARY KEY (day, class)
);

-- Days (UTC) whose minutes changed since they were last summed.
CREATE TABLE kpi_day_stale (
	day		date PRIMARY KEY
);

-- The minutes already written: their days are stale until summed.
INSERT INTO kpi_day_stale
SELECT DISTINCT (minute AT TIME ZONE 'UTC')::date FROM kpi_minute;

-- The trigger's function as it is now (functions/80_kpi.sql keeps its
-- current definition).
CREATE FUNCTION kpi_minute_day_stale() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		INSERT INTO kpi_day_stale
		VALUES ((OLD.minute AT TIME ZONE 'UTC')::date)
		ON CONFLICT DO NOTHING;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		INSERT INTO kpi_day_stale
		VALUES ((NEW.minute AT TIME ZONE 'UTC')::date)
		ON CONFLICT DO NOTHING;
	END IF;
	RETURN NULL;
END;
$$;

CREATE TRIGGER kpi_minute_day_stale AFTER INSERT OR UPDATE OR DELETE
    ON kpi_minute FOR EACH ROW EXECUTE FUNCTION kpi_minute_day_stale();
