-- The hash-chained audit log (migration 081; encoding: README.md, "Audit
-- log"). Writers only INSERT (actor, action, detail); audit_seal chains.

-- The canonical bytes of one row, version 1: a header line, then each
-- field as <decimal byte length>:<bytes>LF in this order: seq, id, at
-- (UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ), actor, action, detail (jsonb text
-- output). psd2ctl audit verify computes the same in C.
CREATE OR REPLACE FUNCTION audit_canonical(p_seq bigint, p_id bigint,
    p_at timestamptz, p_actor text, p_action text, p_detail jsonb)
RETURNS bytea LANGUAGE sql STABLE AS $$
	SELECT convert_to('psd2gate-audit-v1' || E'\n' ||
	    string_agg(octet_length(f)::text || ':' || f || E'\n', ''
		ORDER BY n), 'UTF8')
	FROM unnest(ARRAY[p_seq::text, p_id::text,
	    to_char(p_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
	    p_actor, p_action, p_detail::text]) WITH ORDINALITY AS u(f, n);
$$;

-- Rows arrive unsealed; the one UPDATE allowed seals an unsealed row and
-- changes nothing else; DELETE and TRUNCATE are refused.
CREATE OR REPLACE FUNCTION audit_log_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' AND NEW.seq IS NULL AND NEW.row_hash IS NULL
	    AND NEW.prev_hash IS NULL AND NEW.sealed_at IS NULL THEN
		RETURN NEW;
	END IF;
	IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND NEW.seq IS NOT NULL
	    AND NEW.id = OLD.id AND NEW.at = OLD.at
	    AND NEW.actor = OLD.actor AND NEW.action = OLD.action
	    AND NEW.detail = OLD.detail THEN
		RETURN NEW;
	END IF;
	RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP
	    USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- Chains up to p_max unsealed rows in id order after the head. One
-- sealer at a time (advisory lock; another caller returns at once with
-- sealed 0). Returns how many were sealed and the head afterwards (NULL
-- while the chain is empty).
-- SECURITY DEFINER: the service's and psd2ctl's roles may only INSERT
-- and SELECT audit_log (migration 083); sealing is the one UPDATE, done
-- here as the owner (and allowed by the guard trigger only for unsealed
-- rows).
CREATE OR REPLACE FUNCTION audit_seal(p_max integer, OUT sealed integer,
    OUT head_seq bigint, OUT head_hash bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
	r record;
	h bytea;
BEGIN
	sealed := 0;
	IF NOT pg_try_advisory_xact_lock(hashtext('psd2gate:audit_seal')) THEN
		SELECT a.seq, a.row_hash INTO head_seq, head_hash
		FROM audit_log a WHERE a.seq IS NOT NULL
		ORDER BY a.seq DESC LIMIT 1;
		RETURN;
	END IF;
	SELECT a.seq, a.row_hash INTO head_seq, head_hash
	FROM audit_log a WHERE a.seq IS NOT NULL ORDER BY a.seq DESC LIMIT 1;
	head_seq := coalesce(head_seq, 0);
	head_hash := coalesce(head_hash, decode(repeat('00', 32), 'hex'));
	FOR r IN SELECT a.id, a.at, a.actor, a.action, a.detail
	    FROM audit_log a WHERE a.seq IS NULL ORDER BY a.id LIMIT p_max
	LOOP
		h := sha256(head_hash || audit_canonical(head_seq + 1, r.id,
		    r.at, r.actor, r.action, r.detail));
		UPDATE audit_log SET seq = head_seq + 1, prev_hash = head_hash,
		    row_hash = h, sealed_at = now()
		WHERE id = r.id;
		head_seq := head_seq + 1;
		head_hash := h;
		sealed := sealed + 1;
	END LOOP;
	IF head_seq = 0 THEN
		head_seq := NULL;
		head_hash := NULL;
	END IF;
END;
$$;
