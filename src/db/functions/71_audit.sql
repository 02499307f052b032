-- The hash-chained audit log (migrations 081, 100 and 120; encoding:
-- README.md, "Audit log"). Writers only INSERT (actor, action, detail)
-- into audit_log (the id and the time are the database's); audit_seal appends each row's link (seq, hashes) to
-- audit_chain. Neither table is ever updated.

-- The canonical bytes of one row, version 1: a header line, then each
-- field as <decimal byte length>:<bytes>LF in this order: seq, id, at
-- (UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ), actor, action, detail (jsonb text
-- output). psd2ctl audit verify computes the same in C. One expression
-- without FROM, so that PostgreSQL inlines it into the sealer's loop
-- (the sealer runs it once per row).
CREATE OR REPLACE FUNCTION audit_canonical(p_seq bigint, p_id bigint,
    p_at timestamptz, p_actor text, p_action text, p_detail jsonb)
RETURNS bytea LANGUAGE sql STABLE AS $$
	SELECT convert_to('psd2gate-audit-v1' || E'\n' ||
	    octet_length(p_seq::text) || ':' || p_seq::text || E'\n' ||
	    octet_length(p_id::text) || ':' || p_id::text || E'\n' ||
	    octet_length(to_char(p_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) || ':' ||
	    to_char(p_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || E'\n' ||
	    octet_length(p_actor) || ':' || p_actor || E'\n' ||
	    octet_length(p_action) || ':' || p_action || E'\n' ||
	    octet_length(p_detail::text) || ':' || p_detail::text || E'\n',
	    'UTF8');
$$;

-- audit_log and audit_chain are append-only, also for their owner:
-- UPDATE, DELETE and TRUNCATE are refused. (A superuser can still switch
-- triggers off: that is what the chain and the signed checkpoints
-- detect.)
CREATE OR REPLACE FUNCTION audit_log_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP
	    USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- Chains up to p_max unsealed rows (audit_log rows without a link in
-- audit_chain) in id order after the head. p_window: only rows with ids
-- above the sequence's last value minus p_window are looked at (the
-- service's timer: a bounded look back, on the primary key, for rows
-- whose transactions committed late; NULL: every row, psd2ctl audit
-- seal). The look back starts from the sequence, not from the highest
-- sealed id: writers cannot choose ids (migration 120), and a row whose
-- id was chosen by hand above the sequence is above the window's start
-- too, so it neither hides nor stops the rows after it. One sealer at a
-- time (advisory lock; another caller returns at once with sealed 0).
-- Returns how many were sealed and the head afterwards (NULL while the
-- chain is empty). The links go in with one INSERT.
-- SECURITY DEFINER: the service's and psd2ctl's roles may only SELECT
-- audit_chain (migration 100).
CREATE OR REPLACE FUNCTION audit_seal(p_max integer, p_window bigint,
    OUT sealed integer, OUT head_seq bigint, OUT head_hash bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
	r record;
	h bytea;
	v_from bigint := -9223372036854775808;
	v_ids bigint[] := '{}';
	v_prev bytea[] := '{}';
	v_hash bytea[] := '{}';
	v_first bigint;
BEGIN
	sealed := 0;
	SELECT c.seq, c.row_hash INTO head_seq, head_hash
	FROM audit_chain c ORDER BY c.seq DESC LIMIT 1;
	IF NOT pg_try_advisory_xact_lock(hashtext('psd2gate:audit_seal')) THEN
		RETURN;
	END IF;
	-- Read again under the lock (a sealer may have committed between).
	SELECT c.seq, c.row_hash INTO head_seq, head_hash
	FROM audit_chain c ORDER BY c.seq DESC LIMIT 1;
	head_seq := coalesce(head_seq, 0);
	head_hash := coalesce(head_hash, decode(repeat('00', 32), 'hex'));
	v_first := head_seq + 1;
	IF p_window IS NOT NULL THEN
		SELECT s.last_value - p_window INTO v_from
		FROM audit_log_id_seq s;
	END IF;
	FOR r IN SELECT a.id, a.at, a.actor, a.action, a.detail
	    FROM audit_log a
	    WHERE a.id >= v_from AND NOT EXISTS (SELECT 1 FROM audit_chain c
		WHERE c.id = a.id)
	    ORDER BY a.id LIMIT p_max
	LOOP
		h := sha256(head_hash || audit_canonical(head_seq + 1, r.id,
		    r.at, r.actor, r.action, r.detail));
		v_ids := v_ids || r.id;
		v_prev := v_prev || head_hash;
		v_hash := v_hash || h;
		head_seq := head_seq + 1;
		head_hash := h;
		sealed := sealed + 1;
	END LOOP;
	INSERT INTO audit_chain (seq, id, prev_hash, row_hash)
	SELECT v_first + u.n - 1, u.id, u.prev, u.hash
	FROM unnest(v_ids, v_prev, v_hash) WITH ORDINALITY
	    AS u(id, prev, hash, n);
	IF head_seq = 0 THEN
		head_seq := NULL;
		head_hash := NULL;
	END IF;
END;
$$;

-- The service's timer (src/app/audit_sealer.c): looks back 10,000 ids
-- from the sequence for rows committed late; psd2ctl audit seal looks at
-- every row.
CREATE OR REPLACE FUNCTION audit_seal(p_max integer, OUT sealed integer,
    OUT head_seq bigint, OUT head_hash bytea)
LANGUAGE sql AS $$
	SELECT * FROM audit_seal(p_max, 10000);
$$;
