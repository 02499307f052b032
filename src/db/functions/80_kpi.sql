-- The regulator's key performance indicators (RTS Art. 32, EBA
-- GL/2018/07 GL 2.2 to 2.4) and the published statistics: the minutes
-- the instances write (kpi_minute, migration 170), the downtime
-- incidents (kpi_incident, migration 163), and the daily and quarterly
-- figures read from them. Days and quarters are UTC.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- Upper bounds (ms) of the latency buckets: kpi_bounds_ms in
-- src/metrics/kpi.c, the same list.
CREATE OR REPLACE FUNCTION kpi_latency_bounds_ms() RETURNS integer[]
LANGUAGE sql IMMUTABLE AS $$
	SELECT '{1,2,3,4,5,6,7,8,9,10,12,14,16,18,20,25,30,35,40,50,60,70,80,'
	    '100,120,140,160,200,250,300,350,400,500,600,700,800,1000,1250,'
	    '1500,2000,2500,3000,4000,5000,6000,8000,10000,12500,15000,17500,'
	    '20000,22500,25000,30000}'::integer[];
$$;

-- The minutes of one instance (a JSON array of {minute: epoch seconds,
-- class, requests, bank, tpp, psu, slow, failed, sum_ms, latency: [55
-- counts]}),
-- each replacing the row of the same instance, minute and class. Returns
-- the rows written.
CREATE OR REPLACE FUNCTION kpi_minute_record(p_instance text, p_rows jsonb)
RETURNS integer LANGUAGE sql AS $$
	WITH w AS (
		INSERT INTO kpi_minute AS k (instance, minute, class, requests,
		    err_bank, err_tpp, err_psu, slow, failed, sum_ms, latency)
		SELECT p_instance,
		    date_trunc('minute', to_timestamp((r->>'minute')::bigint)),
		    r->>'class', (r->>'requests')::bigint,
		    (r->>'bank')::bigint, (r->>'tpp')::bigint,
		    (r->>'psu')::bigint, (r->>'slow')::bigint,
		    (r->>'failed')::bigint, (r->>'sum_ms')::bigint,
		    ARRAY(SELECT (e.x #>> '{}')::bigint
			FROM jsonb_array_elements(r->'latency')
			    WITH ORDINALITY AS e(x, i) ORDER BY e.i)
		FROM jsonb_array_elements(p_rows) AS r
		ON CONFLICT (instance, minute, class) DO UPDATE SET
		    requests = excluded.requests, err_bank = excluded.err_bank,
		    err_tpp = excluded.err_tpp, err_psu = excluded.err_psu,
		    slow = excluded.slow, failed = excluded.failed,
		    sum_ms = excluded.sum_ms, latency = excluded.latency,
		    recorded_at = now()
		RETURNING 1)
	SELECT count(*)::integer FROM w;
$$;

-- A written minute makes its day stale (migration 171): the reports read
-- that day from its minutes until kpi_rollup() has summed it again.
CREATE OR REPLACE FUNCTION kpi_minute_day_stale() RETURNS trigger
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

-- Sums the stale days that ended more than a day ago (no instance can
-- still hold one of their minutes), at most 3 a call (about a second
-- with a few instances: it runs in the flush round), into kpi_day;
-- returns how many. Several instances may call it at once: a day is
-- taken by one, its stale mark deleted first, so a minute written
-- meanwhile marks it stale again.
CREATE OR REPLACE FUNCTION kpi_rollup() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	d	date;
	n	integer := 0;
BEGIN
	FOR d IN SELECT s.day FROM kpi_day_stale s
	    WHERE s.day < (now() AT TIME ZONE 'UTC')::date - 1
	    ORDER BY s.day LIMIT 3 FOR UPDATE SKIP LOCKED LOOP
		DELETE FROM kpi_day_stale WHERE day = d;
		DELETE FROM kpi_day WHERE day = d;
		INSERT INTO kpi_day (day, class, requests, err_bank, err_tpp,
		    err_psu, slow, failed, sum_ms, latency)
		SELECT d, s.class, s.requests, s.eb, s.et, s.ep, s.slow,
		    s.failed, s.sum_ms, h.latency
		FROM (SELECT m.class, sum(m.requests)::bigint AS requests,
			sum(m.err_bank)::bigint AS eb,
			sum(m.err_tpp)::bigint AS et,
			sum(m.err_psu)::bigint AS ep,
			sum(m.slow)::bigint AS slow,
			sum(m.failed)::bigint AS failed,
			sum(m.sum_ms)::bigint AS sum_ms
		    FROM kpi_minute m
		    WHERE m.minute >= d::timestamp AT TIME ZONE 'UTC'
			AND m.minute < (d + 1)::timestamp AT TIME ZONE 'UTC'
		    GROUP BY m.class) AS s
		JOIN (SELECT x.class, array_agg(x.n ORDER BY x.i) AS latency
		    FROM (SELECT m.class, u.i, sum(u.n)::bigint AS n
			FROM kpi_minute m,
			    unnest(m.latency) WITH ORDINALITY AS u(n, i)
			WHERE m.minute >= d::timestamp AT TIME ZONE 'UTC'
			    AND m.minute < (d + 1)::timestamp AT TIME ZONE 'UTC'
			GROUP BY m.class, u.i) AS x
		    GROUP BY x.class) AS h ON h.class = s.class;
		n := n + 1;
	END LOOP;
	RETURN n;
END;
$$;

-- The first and last day of a quarter named YYYYQn (2026Q4); 22023 for
-- another name.
CREATE OR REPLACE FUNCTION kpi_quarter_days(p_quarter text,
    OUT first_day date, OUT last_day date)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF p_quarter IS NULL OR p_quarter !~ '^(19|2[0-9])[0-9]{2}Q[1-4]$' THEN
		RAISE EXCEPTION 'a quarter is YYYYQn, e.g. 2026Q4'
		    USING ERRCODE = '22023';
	END IF;
	first_day := make_date(substr(p_quarter, 1, 4)::integer,
	    (substr(p_quarter, 6, 1)::integer - 1) * 3 + 1, 1);
	last_day := (first_day + interval '3 months' - interval '1 day')::date;
END;
$$;

CREATE OR REPLACE FUNCTION kpi_current_quarter() RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY"Q"Q');
$$;

-- Seconds of [p_from, p_to) in the union of the class's downtime
-- incidents, both sources and every instance (GL 2.2); an incident still
-- open lasts until now.
CREATE OR REPLACE FUNCTION kpi_downtime_s(p_class text, p_from timestamptz,
    p_to timestamptz) RETURNS numeric
LANGUAGE sql STABLE AS $$
	WITH iv AS (
		SELECT greatest(started_at, p_from) AS s,
		    least(coalesce(ended_at, now()), p_to) AS e
		FROM kpi_incident
		WHERE class = p_class AND started_at < p_to
		    AND coalesce(ended_at, now()) > p_from
	), o AS (
		SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN
		    UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
		FROM iv WHERE e > s
	), g AS (
		SELECT s, e, count(*) FILTER (WHERE before IS NULL OR
		    s > before) OVER (ORDER BY s, e) AS island
		FROM o
	)
	SELECT coalesce(sum(extract(epoch FROM hi - lo)), 0)
	FROM (SELECT min(s) AS lo, max(e) AS hi FROM g GROUP BY island) AS u;
$$;

-- The KPIs of every class for each day from p_first to p_last (UTC days
-- up to now) and, with day NULL, for the whole period:
--	uptime_pct	100 minus the downtime's share of the period
--	availability_pct answers neither 5xx nor later than 30 s, of all
--	mean_ms		the mean response time (GL 2.3), rounded
--	median_ms, p95_ms the bound of the latency bucket holding that rank
--	err_*_pct	error answers of that cause, of all answers
-- Percentages have three decimals; NULL where there were no requests.
CREATE OR REPLACE FUNCTION kpi_report(p_first date, p_last date)
RETURNS TABLE (day date, class text, interface text, requests bigint,
    period_s numeric, downtime_s bigint, uptime_pct numeric,
    availability_pct numeric, mean_ms bigint, median_ms integer,
    p95_ms integer,
    err_bank_pct numeric, err_tpp_pct numeric, err_psu_pct numeric,
    slow bigint)
LANGUAGE sql STABLE AS $$
	WITH classes AS (
		SELECT c.name, c.ord FROM unnest(ARRAY['ais', 'pis', 'funds',
		    'oauth', 'psu_pages']) WITH ORDINALITY AS c(name, ord)
	), days AS (
		SELECT d::date AS day, d AT TIME ZONE 'UTC' AS t0,
		    least((d + interval '1 day') AT TIME ZONE 'UTC', now())
		    AS t1
		FROM generate_series(p_first::timestamp, p_last::timestamp,
		    interval '1 day') AS d
		WHERE d AT TIME ZONE 'UTC' < now()
	), down AS (
		SELECT d.day, c.name AS class, c.ord,
		    kpi_downtime_s(c.name, d.t0, d.t1) AS down_s,
		    extract(epoch FROM d.t1 - d.t0) AS period_s
		FROM days d CROSS JOIN classes c
	), cells AS (
		SELECT down.day, down.class, down.ord, down.down_s,
		    down.period_s FROM down
		UNION ALL
		SELECT NULL, down.class, down.ord, sum(down.down_s),
		    sum(down.period_s) FROM down GROUP BY down.class, down.ord
	), mins AS (
		-- a stale day from its minutes, the others from kpi_day
		SELECT st.day, m.class, m.requests, m.err_bank, m.err_tpp,
		    m.err_psu, m.slow, m.failed, m.sum_ms, m.latency
		FROM kpi_day_stale st JOIN kpi_minute m
		    ON m.minute >= st.day::timestamp AT TIME ZONE 'UTC'
		    AND m.minute < (st.day + 1)::timestamp AT TIME ZONE 'UTC'
		WHERE st.day BETWEEN p_first AND p_last
		UNION ALL
		SELECT k.day, k.class, k.requests, k.err_bank, k.err_tpp,
		    k.err_psu, k.slow, k.failed, k.sum_ms, k.latency
		FROM kpi_day k
		WHERE k.day BETWEEN p_first AND p_last
		    AND NOT EXISTS (SELECT 1 FROM kpi_day_stale st
			WHERE st.day = k.day)
	), sums AS (
		SELECT mins.day, mins.class, sum(mins.requests) AS requests,
		    sum(mins.err_bank) AS eb, sum(mins.err_tpp) AS et,
		    sum(mins.err_psu) AS ep, sum(mins.slow) AS slow,
		    sum(mins.failed) AS failed, sum(mins.sum_ms) AS sum_ms
		FROM mins GROUP BY GROUPING SETS ((mins.day, mins.class),
		    (mins.class))
	), hist AS (
		SELECT mins.day, mins.class, u.i, sum(u.n) AS n
		FROM mins, unnest(mins.latency) WITH ORDINALITY AS u(n, i)
		GROUP BY GROUPING SETS ((mins.day, mins.class, u.i),
		    (mins.class, u.i))
	), cum AS (
		SELECT hist.day, hist.class, hist.i,
		    sum(hist.n) OVER (PARTITION BY hist.day, hist.class
			ORDER BY hist.i) AS cum,
		    sum(hist.n) OVER (PARTITION BY hist.day, hist.class)
			AS total
		FROM hist
	), pct AS (
		SELECT cum.day, cum.class,
		    min(cum.i) FILTER (WHERE cum.cum >= ceil(cum.total * 0.5))
			AS i50,
		    min(cum.i) FILTER (WHERE cum.cum >= ceil(cum.total * 0.95))
			AS i95
		FROM cum WHERE cum.total > 0 GROUP BY cum.day, cum.class
	)
	SELECT x.day, x.class,
	    CASE x.class WHEN 'psu_pages' THEN 'customer' ELSE 'dedicated' END,
	    coalesce(s.requests, 0)::bigint, x.period_s,
	    round(x.down_s)::bigint,
	    round(100 - 100 * x.down_s / nullif(x.period_s, 0), 3),
	    round(100.0 * (s.requests - s.failed) / nullif(s.requests, 0), 3),
	    round(s.sum_ms / nullif(s.requests, 0))::bigint,
	    b.bounds[p.i50], b.bounds[p.i95],
	    round(100.0 * s.eb / nullif(s.requests, 0), 3),
	    round(100.0 * s.et / nullif(s.requests, 0), 3),
	    round(100.0 * s.ep / nullif(s.requests, 0), 3),
	    coalesce(s.slow, 0)::bigint
	FROM cells x
	-- the bucket over 30 s reads as 30000: "at least"
	CROSS JOIN (SELECT kpi_latency_bounds_ms() || 30000 AS bounds) AS b
	LEFT JOIN sums s ON s.day IS NOT DISTINCT FROM x.day
	    AND s.class = x.class
	LEFT JOIN pct p ON p.day IS NOT DISTINCT FROM x.day
	    AND p.class = x.class
	ORDER BY x.day NULLS LAST, x.ord;
$$;

-- The published statistics of a quarter as CSV (RFC 4180, a header
-- line; "quarter" in the date column for the quarter's figures): the
-- public /psd2/statistics.csv and `psd2ctl report kpi --csv`.
CREATE OR REPLACE FUNCTION kpi_report_csv(p_quarter text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT 'quarter,date,interface,service,requests,uptime_pct,'
	    'downtime_s,availability_pct,mean_ms,median_ms,p95_ms,'
	    'error_rate_bank_pct,error_rate_tpp_pct,error_rate_psu_pct,'
	    'slow_answers' || E'\r\n' ||
	    coalesce(string_agg(concat_ws(',', p_quarter,
		coalesce(r.day::text, 'quarter'), r.interface, r.class,
		r.requests, coalesce(r.uptime_pct::text, ''), r.downtime_s,
		coalesce(r.availability_pct::text, ''),
		coalesce(r.mean_ms::text, ''),
		coalesce(r.median_ms::text, ''), coalesce(r.p95_ms::text, ''),
		coalesce(r.err_bank_pct::text, ''),
		coalesce(r.err_tpp_pct::text, ''),
		coalesce(r.err_psu_pct::text, ''), r.slow) || E'\r\n', ''
		ORDER BY r.n), '')
	FROM kpi_quarter_days(p_quarter) AS q,
	    LATERAL (SELECT k.*, row_number() OVER () AS n
		FROM kpi_report(q.first_day, q.last_day) AS k) AS r;
$$;

-- The same figures for the pages: a row a day and one for the quarter,
-- each with a cell per class (ais, pis, funds, oauth, psu_pages); "–"
-- where there is no figure.
CREATE OR REPLACE FUNCTION kpi_report_json(p_quarter text) RETURNS json
LANGUAGE sql STABLE AS $$
	WITH q AS (
		SELECT * FROM kpi_quarter_days(p_quarter)
	), r AS (
		SELECT k.*, row_number() OVER () AS n
		FROM q, kpi_report(q.first_day, q.last_day) AS k
	), d AS (
		SELECT r.day, min(r.n) AS n, json_agg(json_build_object(
		    'class', r.class, 'interface', r.interface,
		    'requests', r.requests,
		    'uptime', coalesce(r.uptime_pct::text, '–'),
		    'downtime', r.downtime_s,
		    'availability', coalesce(r.availability_pct::text, '–'),
		    'mean', coalesce(r.mean_ms::text, '–'),
		    'median', coalesce(r.median_ms::text, '–'),
		    'p95', coalesce(r.p95_ms::text, '–'),
		    'bank', coalesce(r.err_bank_pct::text, '–'),
		    'tpp', coalesce(r.err_tpp_pct::text, '–'),
		    'psu', coalesce(r.err_psu_pct::text, '–'),
		    -- the caller's errors: the TPP's, or the PSU's on the pages
		    'caller', coalesce((CASE r.interface WHEN 'customer' THEN
			r.err_psu_pct ELSE r.err_tpp_pct END)::text, '–'),
		    'slow', r.slow) ORDER BY r.n) AS cells
		FROM r GROUP BY r.day
	)
	SELECT json_build_object('quarter', p_quarter,
	    'first', q.first_day, 'last', q.last_day,
	    'rows', coalesce((SELECT json_agg(json_build_object(
		'day', coalesce(d.day::text, p_quarter), 'total', d.day IS NULL,
		'cells', d.cells) ORDER BY d.n) FROM d), '[]'::json))
	FROM q;
$$;
