-- Downtime incidents (table kpi_incident, migration 163; EBA GL/2018/07
-- GL 2.2). The service's worker 1 writes each start and end the
-- detector saw (src/metrics/downtime.h), with the times it kept, also
-- long after they happened when the database itself was down. Each
-- write is one transaction with its audit row.

-- One start or end: p_kind 'start' (p_at: the first of the five
-- requests not answered) or 'end' (p_at: the first answer after them).
-- Writing the same event again changes nothing (the service retries
-- when it did not see the result). A start while an earlier downtime of
-- the same class, source and instance is still open (the instance was
-- restarted before it saw an answer) ends that one at p_at. Returns
-- the incident's id, NULL for an end without an open incident.
-- p_kind 'restart' (p_class and p_source NULL): the instance started
-- at p_at, so the downtimes it left open end then (their real end is
-- unknown); returns how many.
-- The instance p_instance started at p_at: every incident it left open
-- ends then, noted as such, with its audit row. Returns how many.
CREATE OR REPLACE FUNCTION kpi_incident_restart(p_instance text,
    p_at timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n bigint := 0;
BEGIN
	FOR r IN UPDATE kpi_incident
	    SET ended_at = greatest(p_at, started_at),
		detail = left(coalesce(detail || '; ', '') ||
		    'end unknown (instance restarted)', 200)
	    WHERE instance = p_instance AND ended_at IS NULL
	    RETURNING id, class, source, started_at, ended_at
	LOOP
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('service:' || left(p_instance, 64), 'incident.end',
		    jsonb_build_object('id', r.id, 'class', r.class,
		    'source', r.source, 'instance', p_instance,
		    'started_at', r.started_at, 'ended_at', r.ended_at,
		    'detail', 'end unknown (instance restarted)'));
		n := n + 1;
	END LOOP;
	RETURN n;
END;
$$;

CREATE OR REPLACE FUNCTION kpi_incident_event(p_class text, p_source text,
    p_instance text, p_kind text, p_at timestamptz, p_detail text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
	v_started timestamptz;
	v_actor text := 'service:' || left(p_instance, 64);
BEGIN
	IF p_kind NOT IN ('start', 'end', 'restart') THEN
		RAISE EXCEPTION 'kpi_incident_event: unknown kind %', p_kind
		    USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF p_kind = 'restart' THEN
		RETURN kpi_incident_restart(p_instance, p_at);
	END IF;
	SELECT id, started_at INTO v_id, v_started FROM kpi_incident
	WHERE class = p_class AND source = p_source AND instance = p_instance
	    AND ended_at IS NULL
	FOR UPDATE;
	IF p_kind = 'end' THEN
		IF v_id IS NULL THEN
			RETURN NULL;
		END IF;
		UPDATE kpi_incident SET ended_at = greatest(p_at, started_at)
		WHERE id = v_id;
		INSERT INTO audit_log (actor, action, detail)
		VALUES (v_actor, 'incident.end', jsonb_build_object('id', v_id,
		    'class', p_class, 'source', p_source,
		    'instance', p_instance, 'started_at', v_started,
		    'ended_at', greatest(p_at, v_started),
		    'detail', left(p_detail, 200)));
		RETURN v_id;
	END IF;
	IF v_id IS NOT NULL AND v_started = p_at THEN
		RETURN v_id;
	END IF;
	IF EXISTS (SELECT 1 FROM kpi_incident WHERE class = p_class AND
	    source = p_source AND instance = p_instance AND
	    started_at = p_at) THEN
		RETURN NULL;
	END IF;
	IF v_id IS NOT NULL THEN
		UPDATE kpi_incident SET ended_at = greatest(p_at, started_at),
		    detail = left(coalesce(detail || '; ', '') ||
			'end unknown (instance restarted)', 200)
		WHERE id = v_id;
		INSERT INTO audit_log (actor, action, detail)
		VALUES (v_actor, 'incident.end', jsonb_build_object('id', v_id,
		    'class', p_class, 'source', p_source,
		    'instance', p_instance, 'started_at', v_started,
		    'ended_at', greatest(p_at, v_started),
		    'detail', 'end unknown (instance restarted)'));
	END IF;
	INSERT INTO kpi_incident (class, source, instance, started_at, detail)
	VALUES (p_class, p_source, p_instance, p_at, left(p_detail, 200))
	RETURNING id INTO v_id;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (v_actor, 'incident.start', jsonb_build_object('id', v_id,
	    'class', p_class, 'source', p_source, 'instance', p_instance,
	    'started_at', p_at, 'detail', left(p_detail, 200)));
	RETURN v_id;
END;
$$;

-- The staff page's list (/staff/incidents): newest first, p_limit a
-- page (p_page from 0), filtered by class, source, state ('open',
-- 'ended' or NULL for both) and part of the instance's name; with the
-- number open now.
CREATE OR REPLACE FUNCTION staff_incidents_json(p_class text,
    p_source text, p_state text, p_instance text, p_page integer,
    p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT staff_list_page('incidents', coalesce(jsonb_agg(
	    jsonb_build_object('id', i.id, 'class', i.class,
		'source', i.source, 'instance', i.instance,
		'started_at', to_char(i.started_at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD HH24:MI:SS.MS'),
		'ended_at', to_char(i.ended_at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD HH24:MI:SS.MS'),
		'open', i.ended_at IS NULL,
		'seconds', round(extract(epoch FROM coalesce(i.ended_at,
		    now()) - i.started_at))::bigint,
		'detail', i.detail)
	    ORDER BY i.started_at DESC, i.id DESC), '[]'), p_page, p_limit) ||
	    jsonb_build_object('open_count', (SELECT count(*) FROM
		kpi_incident WHERE ended_at IS NULL))
	FROM (SELECT * FROM kpi_incident
	    WHERE (coalesce(p_class, '') = '' OR class = p_class)
		AND (coalesce(p_source, '') = '' OR source = p_source)
		AND (coalesce(p_state, '') = '' OR
		    (p_state = 'open') = (ended_at IS NULL))
		AND (coalesce(p_instance, '') = '' OR
		    strpos(lower(instance), lower(p_instance)) > 0)
	    ORDER BY started_at DESC, id DESC
	    LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit) i;
$$;
