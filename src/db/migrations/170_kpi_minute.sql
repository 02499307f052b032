-- The regulator's key performance indicators (RTS Art. 32, EBA
-- GL/2018/07 GL 2.2 to 2.4): what each psd2gate instance answered, per
-- minute and KPI class (src/metrics/kpi_class.h). Written by the
-- instance's worker 1 through kpi_minute_record(); a row is replaced by a
-- later write of the same key (the running minute is written again as it
-- grows; a write the instance did not see succeed is repeated).
--	latency[i]	answers taken at most kpi_latency_bounds_ms()[i] ms
--			(and more than the bound before); the last element
--			counts those over the last bound (30 s)
--	slow		answered later than 30 s (GL 2.2: not answered)
--	failed		5xx or later than 30 s: not available
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE kpi_minute (
	instance	text NOT NULL CHECK (char_length(instance)
			    BETWEEN 1 AND 64),
	minute		timestamptz NOT NULL,
	class		text NOT NULL CHECK (class IN ('oauth', 'ais', 'pis',
			    'funds', 'psu_pages')),
	requests	bigint NOT NULL CHECK (requests >= 0),
	err_bank	bigint NOT NULL CHECK (err_bank >= 0),
	err_tpp		bigint NOT NULL CHECK (err_tpp >= 0),
	err_psu		bigint NOT NULL CHECK (err_psu >= 0),
	slow		bigint NOT NULL CHECK (slow >= 0),
	failed		bigint NOT NULL CHECK (failed >= 0),
	latency		bigint[] NOT NULL CHECK (cardinality(latency) = 55),
	recorded_at	timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (instance, minute, class)
);
CREATE INDEX kpi_minute_minute ON kpi_minute (minute);
