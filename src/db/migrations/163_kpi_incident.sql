-- Downtime incidents of the dedicated interface and of the bank's own
-- customer interface (EBA GL/2018/07, GL 2.2: an interface is down when
-- five consecutive requests are not answered within 30 seconds). One row
-- per downtime, per KPI class (src/metrics/kpi_class.h) and per source:
--	service	what one psd2gate instance saw of its real requests
--	probe	the synthetic requests the instance sends to itself
-- started_at is the first of the five unanswered requests, ended_at the
-- first answer after them (NULL while the downtime lasts). Rows are
-- written when the database answers again, so a downtime of the database
-- itself is recorded with the times the instance kept in memory.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

CREATE TABLE kpi_incident (
	id		bigserial PRIMARY KEY,
	class		text NOT NULL CHECK (class IN ('oauth', 'ais', 'pis',
			    'funds', 'psu_pages')),
	source		text NOT NULL CHECK (source IN ('service', 'probe')),
	instance	text NOT NULL CHECK (char_length(instance)
			    BETWEEN 1 AND 64),
	started_at	timestamptz NOT NULL,
	ended_at	timestamptz,
	-- what was seen, for staff: e.g. the last status or "no answer"
	detail		text CHECK (char_length(detail) <= 200),
	recorded_at	timestamptz NOT NULL DEFAULT now(),
	CHECK (ended_at IS NULL OR ended_at >= started_at)
);
-- At most one open downtime per class, source and instance.
CREATE UNIQUE INDEX kpi_incident_open ON kpi_incident (class, source,
    instance) WHERE ended_at IS NULL;
CREATE INDEX kpi_incident_started ON kpi_incident (started_at);
