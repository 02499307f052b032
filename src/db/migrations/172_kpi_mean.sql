-- The mean response time besides the median and the 95th percentile:
-- EBA GL/2018/07 GL 2.3 asks for the daily average time per request. The
-- sum of the answers' milliseconds per minute (kpi_minute) and per day
-- (kpi_day); rows written before count 0 (their mean is not known).
-- kpi_report gains a column, so its old result type goes (the functions
-- file creates it anew; a new database has none yet: functions come
-- after the migrations).
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE kpi_minute ADD COLUMN sum_ms bigint NOT NULL DEFAULT 0
    CHECK (sum_ms >= 0);
ALTER TABLE kpi_day ADD COLUMN sum_ms bigint NOT NULL DEFAULT 0;

DROP FUNCTION IF EXISTS kpi_report(date, date);
