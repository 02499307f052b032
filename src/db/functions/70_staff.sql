-- Staff login and sessions for the staff pages (src/staff/). The same
-- lockout rules as PSUs (login_factor): consecutive failures of either
-- factor lock the member; a lock is revealed only with a right factor.
-- Every outcome writes an audit row (actor staff:<username>).

-- Password step: counts the address against the login rate limit and
-- finds an active member. No row data when unknown or disabled.
CREATE OR REPLACE FUNCTION staff_login_lookup(p_username text, p_addr text,
    p_limit integer, OUT rate_ok boolean, OUT staff_id bigint,
    OUT password_hash text)
LANGUAGE plpgsql AS $$
BEGIN
	rate_ok := rate_hit('staff-login:' || p_addr, p_limit);
	SELECT s.id, s.password_hash INTO staff_id, password_hash
	FROM staff s WHERE s.username = p_username AND s.status = 'active';
END;
$$;

-- Outcome of one factor (p_factor 'password', 'totp' or 'key'); result ok,
-- failed, locked. p_username names an unknown member in the audit row.
CREATE OR REPLACE FUNCTION staff_login_factor(p_staff_id bigint,
    p_username text, p_factor text, p_ok boolean, p_max_failures integer,
    p_lock_seconds integer, p_addr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s staff%ROWTYPE;
	r text;
BEGIN
	SELECT * INTO s FROM staff WHERE id = p_staff_id FOR UPDATE;
	IF NOT FOUND THEN
		r := 'failed';
	ELSIF s.locked_until IS NOT NULL AND s.locked_until > now() THEN
		r := CASE WHEN p_ok THEN 'locked' ELSE 'failed' END;
	ELSIF NOT p_ok THEN
		IF s.failed_logins + 1 >= p_max_failures THEN
			UPDATE staff SET failed_logins = 0, locked_until =
			    now() + make_interval(secs => p_lock_seconds)
			WHERE id = p_staff_id;
			INSERT INTO audit_log (actor, action, detail)
			VALUES ('staff:' || s.username, 'staff.locked',
			    jsonb_build_object('seconds', p_lock_seconds));
		ELSE
			UPDATE staff SET failed_logins = failed_logins + 1
			WHERE id = p_staff_id;
		END IF;
		r := 'failed';
	ELSE
		r := 'ok';
	END IF;
	IF r <> 'ok' OR p_factor IN ('totp', 'key') THEN
		INSERT INTO audit_log (actor, action, detail)
		VALUES ('staff:' || coalesce(s.username, p_username),
		    CASE WHEN r = 'ok' THEN 'staff.login'
			ELSE 'staff.login_failed' END,
		    jsonb_build_object('factor', p_factor, 'outcome', r,
			'addr', p_addr));
	END IF;
	RETURN r;
END;
$$;

-- A second factor presented again (the TOTP code's step, or a key's
-- challenge, accepted before) by the member p_staff_id, whose login form
-- names the session p_session_hash: used (not that session's: another
-- form, or after logout; an audit row for p_factor), locked, expired
-- (that session has ended) or repeat (it is live).
CREATE OR REPLACE FUNCTION staff_login_again(p_staff_id bigint,
    p_factor text, p_session_hash bytea, p_addr text)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM web_session w
	    WHERE w.id_hash = p_session_hash AND w.subject_kind = 'staff'
		AND w.subject_id = p_staff_id) THEN
		INSERT INTO audit_log (actor, action, detail)
		SELECT 'staff:' || username, 'staff.login_failed',
		    jsonb_build_object('factor', p_factor, 'outcome', 'used',
			'addr', p_addr)
		FROM staff WHERE id = p_staff_id;
		RETURN 'used';
	END IF;
	IF EXISTS (SELECT 1 FROM staff WHERE id = p_staff_id
	    AND locked_until > now()) THEN
		RETURN 'locked';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM web_session w
	    JOIN staff s ON s.id = w.subject_id
	    WHERE w.id_hash = p_session_hash AND w.subject_kind = 'staff'
		AND w.expires_at - now() > '0' AND s.status = 'active') THEN
		RETURN 'expired';
	END IF;
	RETURN 'repeat';
END;
$$;

-- TOTP step: p_step the time step the code matches (NULL: none); a step
-- is accepted once per member. Success resets the failures and opens a
-- session (p_session_hash, idle p_idle seconds), whose id the service
-- derives from the login form's flow and the member. result, as of
-- login_totp_flow:
--   ok       the session was opened now (the caller sends its cookie)
--   repeat   the same form posted again with the step it was accepted
--            with (a double click, even one racing the first post, or a
--            replay by someone else) finds that session: no failure
--            counted, no second session or audit row, nothing renewed;
--            the caller shows the first result only to the browser that
--            holds the session
--   used     the member's last accepted step, without that session (from
--            another form, or after logout): refused, no failure counted
--   expired  a repeat whose session has ended (a repeat does not lift
--            the idle timeout)
--   key_required  an admin holding an approved security key logs in
--            with it: refused, no failure counted
--   failed, locked
CREATE OR REPLACE FUNCTION staff_login_totp(p_staff_id bigint,
    p_step bigint, p_max_failures integer, p_lock_seconds integer,
    p_session_hash bytea, p_idle integer, p_addr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	fresh boolean;
	r text;
BEGIN
	PERFORM 1 FROM staff WHERE id = p_staff_id FOR UPDATE;
	IF p_step IS NOT NULL AND EXISTS (SELECT 1 FROM staff
	    WHERE id = p_staff_id AND totp_last_step = p_step) THEN
		RETURN staff_login_again(p_staff_id, 'totp', p_session_hash,
		    p_addr);
	END IF;
	-- An admin with an approved security key uses it (73_staff_keys):
	-- the code is refused without counting a failure.
	IF staff_key_required(p_staff_id) THEN
		INSERT INTO audit_log (actor, action, detail)
		SELECT 'staff:' || username, 'staff.login_failed',
		    jsonb_build_object('factor', 'totp', 'outcome',
			'key_required', 'addr', p_addr)
		FROM staff WHERE id = p_staff_id;
		RETURN 'key_required';
	END IF;
	fresh := p_step IS NOT NULL AND EXISTS (SELECT 1 FROM staff
	    WHERE id = p_staff_id AND totp_last_step < p_step
		AND status = 'active');
	r := staff_login_factor(p_staff_id, NULL, 'totp', fresh,
	    p_max_failures, p_lock_seconds, p_addr);
	IF r <> 'ok' THEN
		RETURN r;
	END IF;
	UPDATE staff SET totp_last_step = p_step, failed_logins = 0,
	    locked_until = NULL
	WHERE id = p_staff_id;
	INSERT INTO web_session (id_hash, subject_kind, subject_id,
	    expires_at)
	VALUES (p_session_hash, 'staff', p_staff_id,
	    now() + make_interval(secs => p_idle));
	RETURN 'ok';
END;
$$;

-- A live staff session (idle timeout renewed on use) of an active
-- member: id, username, display name and role; no row otherwise.
CREATE OR REPLACE FUNCTION staff_session(p_session_hash bytea,
    p_idle integer, OUT staff_id bigint, OUT username text,
    OUT display_name text, OUT role text)
RETURNS SETOF record LANGUAGE sql AS $$
	WITH w AS (
		UPDATE web_session SET last_seen_at = now(),
		    expires_at = now() + make_interval(secs => p_idle)
		WHERE id_hash = p_session_hash AND subject_kind = 'staff'
		    AND expires_at - now() > '0'
		RETURNING subject_id
	)
	SELECT s.id, s.username, s.display_name, s.role
	FROM w JOIN staff s ON s.id = w.subject_id
	WHERE s.status = 'active';
$$;

-- Ends a staff session (logout); true when there was one.
CREATE OR REPLACE FUNCTION staff_logout(p_session_hash bytea)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	who text;
BEGIN
	DELETE FROM web_session w USING staff s
	WHERE w.id_hash = p_session_hash AND w.subject_kind = 'staff'
	    AND s.id = w.subject_id
	RETURNING s.username INTO who;
	IF who IS NULL THEN
		RETURN false;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES ('staff:' || who, 'staff.logout', '{}');
	RETURN true;
END;
$$;

-- ---- Authenticators --------------------------------
-- Every change of a device's status or PSU by staff (pages, actor
-- 'staff:<username>') or by psd2ctl (actor 'operator:<name>') goes
-- through staff_device_action, in one transaction with its audit row.
-- Blocking, unassigning and retiring fail the device's open challenges at
-- once (the payment follows as RJCT with the reason).

-- The key fingerprint staff compare with the device's display and label:
-- the first 16 bytes of SHA-256(public key), upper-case hex in groups of
-- four (as psd2ctl device enrol prints it).
CREATE OR REPLACE FUNCTION device_fingerprint(p_key bytea)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT rtrim(regexp_replace(upper(encode(substring(sha256(p_key)
	    FROM 1 FOR 16), 'hex')), '(.{4})', '\1 ', 'g'));
$$;

-- One device as the staff pages show it, with what may be done to it.
CREATE OR REPLACE FUNCTION staff_device_json(d device)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('serial', d.serial, 'model', d.model,
	    'status', d.status, 'host', d.host,
	    'last_seen', to_char(d.last_seen AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI:SS "UTC"'),
	    'attestation_ok', d.attestation_ok,
	    'fingerprint', device_fingerprint(d.public_key),
	    'holder', p.username, 'holder_name', p.display_name,
	    'pending_psu', rp.username, 'pending_by', a.requested_by,
	    'can_enrol', d.status = 'not_enrolled',
	    'can_assign', d.status = 'active' AND d.psu_id IS NULL
		AND a.id IS NULL,
	    'can_unassign', d.psu_id IS NOT NULL,
	    'can_block', d.status NOT IN ('blocked', 'retired'),
	    'can_retire', d.status <> 'retired')
	FROM (SELECT 1) one
	LEFT JOIN psu p ON p.id = d.psu_id
	LEFT JOIN device_assignment a ON a.device_serial = d.serial
	    AND a.status = 'pending'
	LEFT JOIN psu rp ON rp.id = a.psu_id;
$$;

-- A page of a staff list: the items of the page (p_items holds at most
-- p_limit + 1, in order: one more than a page tells that a next page
-- exists) under p_key, and where the pager goes.
CREATE OR REPLACE FUNCTION staff_list_page(p_key text, p_items jsonb,
    p_page integer, p_limit integer)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT jsonb_build_object(p_key, coalesce((SELECT jsonb_agg(x.e
	    ORDER BY x.n) FROM jsonb_array_elements(p_items)
	    WITH ORDINALITY AS x(e, n) WHERE x.n <= p_limit), '[]'),
	    'next', CASE WHEN jsonb_array_length(p_items) > p_limit
		THEN p_page + 1 END,
	    'has_previous', p_page > 0, 'previous', greatest(p_page - 1, 0));
$$;

-- The device list, p_limit a page (p_page from 0): p_status one status
-- or NULL, p_q part of a serial, PSU username or name, or NULL.
CREATE OR REPLACE FUNCTION staff_devices_json(p_status text, p_q text,
    p_page integer, p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT staff_list_page('devices', coalesce(jsonb_agg(
	    staff_device_json(s.dev) ORDER BY (s.dev).serial), '[]'),
	    p_page, p_limit)
	FROM (SELECT d AS dev FROM device d LEFT JOIN psu p ON p.id = d.psu_id
	    WHERE (coalesce(p_status, '') = '' OR d.status = p_status)
		AND (coalesce(p_q, '') = '' OR
		    strpos(lower(d.serial), lower(p_q)) > 0 OR
		    strpos(lower(p.username), lower(p_q)) > 0 OR
		    strpos(lower(p.display_name), lower(p_q)) > 0)
	    ORDER BY d.serial
	    LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit) s;
$$;

-- PSUs matching a search (username or name), at most 20.
CREATE OR REPLACE FUNCTION staff_psus_json(p_q text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT coalesce(jsonb_agg(jsonb_build_object('username', username,
	    'name', display_name) ORDER BY username), '[]')
	FROM (SELECT username, display_name FROM psu
	    WHERE coalesce(p_q, '') <> '' AND (
		strpos(lower(username), lower(p_q)) > 0 OR
		strpos(lower(display_name), lower(p_q)) > 0)
	    ORDER BY username LIMIT 20) s;
$$;

-- A device and, for an assignment, the PSUs matching p_q.
CREATE OR REPLACE FUNCTION staff_device_confirm_json(p_serial text,
    p_q text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('device', staff_device_json(d),
	    'psus', staff_psus_json(p_q))
	FROM device d WHERE d.serial = p_serial;
$$;

-- An audit row's detail as fields people read (name, value), by name:
-- strings as they are, lists joined by ", ", anything else as JSON.
CREATE OR REPLACE FUNCTION staff_detail_fields(p_detail jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(jsonb_agg(jsonb_build_object('name', f.key,
	    'value', CASE jsonb_typeof(f.value)
		WHEN 'string' THEN f.value #>> '{}'
		WHEN 'array' THEN (SELECT string_agg(CASE jsonb_typeof(e)
		    WHEN 'string' THEN e #>> '{}' ELSE e::text END, ', ')
		    FROM jsonb_array_elements(f.value) e)
		ELSE f.value::text END) ORDER BY f.key), '[]')
	FROM jsonb_each(CASE jsonb_typeof(p_detail) WHEN 'object'
	    THEN p_detail ELSE jsonb_build_object('value', p_detail) END) f;
$$;

-- A PSU's page: their authenticators, assignment history and recent
-- audit rows (SCA outcomes and staff actions naming them).
CREATE OR REPLACE FUNCTION staff_psu_json(p_username text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('username', p.username,
	    'name', p.display_name,
	    'locked', coalesce(p.locked_until > now(), false),
	    'devices', (SELECT coalesce(jsonb_agg(staff_device_json(d)
		ORDER BY d.serial), '[]') FROM device d WHERE d.psu_id = p.id),
	    'keys', staff_psu_keys_json(p.id),
	    'assignments', (SELECT coalesce(jsonb_agg(jsonb_build_object(
		'serial', a.device_serial, 'status', a.status,
		'requested_by', a.requested_by, 'decided_by', a.decided_by,
		'at', to_char(a.requested_at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD HH24:MI:SS "UTC"')) ORDER BY a.id DESC), '[]')
		FROM device_assignment a WHERE a.psu_id = p.id),
	    'events', (SELECT coalesce(jsonb_agg(jsonb_build_object(
		'id', e.id, 'actor', e.actor, 'action', e.action,
		'fields', staff_detail_fields(e.detail),
		'at', to_char(e.at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD HH24:MI:SS "UTC"')) ORDER BY e.id DESC), '[]')
		FROM (SELECT * FROM audit_log
		    WHERE actor = 'psu:' || p.username
			OR (detail ? 'psu' AND detail->>'psu' = p.username)
		    ORDER BY id DESC LIMIT 50) e))
	FROM psu p WHERE p.username = p_username;
$$;

-- ---- TPPs (admin only) -----------------------------

-- The TPP registry with each TPP's clients, p_limit TPPs a page (p_page
-- from 0), p_q part of the name or organizationIdentifier, or NULL.
CREATE OR REPLACE FUNCTION staff_tpps_json(p_q text, p_page integer,
    p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT staff_list_page('tpps', coalesce(jsonb_agg(jsonb_build_object(
	    'org_id', t.org_id, 'name', t.name, 'status', t.status,
	    'suspended', t.status = 'suspended',
	    'clients', (SELECT coalesce(jsonb_agg(jsonb_build_object(
		'client_id', c.client_id, 'status', c.status,
		'redirect_uris', array_to_string(c.redirect_uris, ' '),
		'pkce_required', c.pkce_required,
		'access_ttl', c.access_ttl, 'auth_method', c.auth_method,
		'keys', coalesce(jsonb_array_length(c.jwks->'keys'), 0),
		'par_required', c.par_required,
		'refresh_rotation', c.refresh_rotation) ORDER BY c.client_id),
		'[]')
		FROM oauth_client c WHERE c.tpp_id = t.id))
	    ORDER BY t.name, t.org_id), '[]'), p_page, p_limit)
	FROM (SELECT * FROM tpp
	    WHERE coalesce(p_q, '') = '' OR
		strpos(lower(name), lower(p_q)) > 0 OR
		strpos(lower(org_id), lower(p_q)) > 0
	    ORDER BY name, org_id
	    LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit) t;
$$;

-- result: ok, exists, bad_input
CREATE OR REPLACE FUNCTION staff_tpp_register(p_actor text, p_name text,
    p_org_id text)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF coalesce(p_name, '') = '' OR
	    p_org_id !~ '^PSD[A-Z]{2}-[A-Z]{2,8}-.+$' THEN
		RETURN 'bad_input';
	END IF;
	INSERT INTO tpp (name, org_id) VALUES (p_name, p_org_id)
	ON CONFLICT (org_id) DO NOTHING;
	IF NOT FOUND THEN
		RETURN 'exists';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'tpp.register', jsonb_build_object('org_id',
	    p_org_id, 'name', p_name));
	RETURN 'ok';
END;
$$;

-- A client of a registered TPP; the secret arrives hashed (keyed and
-- salted, src/common/client_secret.h). result: ok, no_tpp, exists,
-- bad_input.
CREATE OR REPLACE FUNCTION staff_client_add(p_actor text, p_org_id text,
    p_client_id text, p_hash bytea, p_salt bytea, p_key_id text,
    p_uris text[], p_pkce boolean, p_ttl integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t tpp%ROWTYPE;
BEGIN
	SELECT * INTO t FROM tpp WHERE org_id = p_org_id;
	IF NOT FOUND THEN
		RETURN 'no_tpp';
	END IF;
	IF p_client_id !~ '^[A-Za-z0-9._-]{1,64}$' OR
	    coalesce(cardinality(p_uris), 0) = 0 OR
	    EXISTS (SELECT 1 FROM unnest(p_uris) u
		WHERE u !~ '^https?://[^[:space:]#]+$') OR
	    p_ttl IS NULL OR p_ttl < 1 OR p_ttl > 86400 THEN
		RETURN 'bad_input';
	END IF;
	INSERT INTO oauth_client (client_id, tpp_id, secret_hash,
	    redirect_uris, pkce_required, access_ttl, secret_salt,
	    secret_key_id)
	VALUES (p_client_id, t.id, p_hash, p_uris, p_pkce, p_ttl, p_salt,
	    p_key_id)
	ON CONFLICT (client_id) DO NOTHING;
	IF NOT FOUND THEN
		RETURN 'exists';
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'tpp.client_add', jsonb_build_object('org_id',
	    p_org_id, 'client_id', p_client_id, 'redirect_uris',
	    to_jsonb(p_uris), 'pkce_required', p_pkce, 'access_ttl', p_ttl));
	RETURN 'ok';
END;
$$;

-- Suspends (every token of the TPP stops at once) or reactivates.
-- result: ok, no_tpp.
CREATE OR REPLACE FUNCTION staff_tpp_status(p_actor text, p_org_id text,
    p_status text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n integer := 0;
BEGIN
	UPDATE tpp SET status = p_status WHERE org_id = p_org_id;
	IF NOT FOUND THEN
		RETURN 'no_tpp';
	END IF;
	IF p_status = 'suspended' THEN
		UPDATE token SET revoked_at = now()
		WHERE revoked_at IS NULL AND client_id IN (SELECT c.client_id
		    FROM oauth_client c JOIN tpp t ON t.id = c.tpp_id
		    WHERE t.org_id = p_org_id);
		GET DIAGNOSTICS n = ROW_COUNT;
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, CASE p_status WHEN 'suspended' THEN 'tpp.suspend'
	    ELSE 'tpp.activate' END, jsonb_build_object('org_id', p_org_id,
	    'tokens_revoked', n));
	RETURN 'ok';
END;
$$;

-- ---- The audit log page ------------------------------------
-- Newest first, p_limit rows with id < p_before (NULL: from the newest),
-- filtered by actor and action prefix (NULL or '': any). "older" is the
-- p_before of the next page, NULL on the last one.
CREATE OR REPLACE FUNCTION staff_audit_json(p_actor text, p_action text,
    p_before bigint, p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	WITH r AS (
		SELECT a.id, c.seq, a.at, a.actor, a.action, a.detail
		FROM audit_log a LEFT JOIN audit_chain c ON c.id = a.id
		WHERE (coalesce(p_actor, '') = '' OR a.actor = p_actor)
		    AND (coalesce(p_action, '') = '' OR
			starts_with(a.action, p_action))
		    AND (p_before IS NULL OR a.id < p_before)
		ORDER BY a.id DESC LIMIT p_limit + 1
	)
	SELECT jsonb_build_object(
	    'rows', coalesce((SELECT jsonb_agg(jsonb_build_object('id', id,
		'seq', seq, 'sealed', seq IS NOT NULL, 'actor', actor,
		'action', action, 'fields', staff_detail_fields(detail),
		'at', to_char(at AT TIME ZONE 'UTC',
		    'YYYY-MM-DD HH24:MI:SS "UTC"')) ORDER BY id DESC)
		FROM (SELECT * FROM r ORDER BY id DESC LIMIT p_limit) x), '[]'),
	    'older', CASE WHEN (SELECT count(*) FROM r) > p_limit
		THEN (SELECT min(id) FROM (SELECT id FROM r ORDER BY id DESC
		    LIMIT p_limit) y) END);
$$;

-- ---- Consents (every staff member reads) ----------------------
-- The consents of both surfaces for /staff/consents, newest first,
-- p_limit a page (p_page from 0), filtered by PSU username, TPP
-- organizationIdentifier and the status now (bg_consent_status).
CREATE OR REPLACE FUNCTION staff_consents_json(p_psu text, p_tpp text,
    p_status text, p_page integer, p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	WITH r AS (
		SELECT c.id, c.surface, c.access_kind, c.scopes, c.recurring,
		    bg_consent_status(c.status, c.valid_until, c.created_at)
			AS status_now,
		    c.valid_until, c.frequency_per_day, c.last_used_at,
		    c.created_at, p.username, t.name AS tpp_name, t.org_id
		FROM consent c
		JOIN oauth_client oc ON oc.client_id = c.client_id
		JOIN tpp t ON t.id = oc.tpp_id
		LEFT JOIN psu p ON p.id = c.psu_id
		WHERE (coalesce(p_psu, '') = '' OR p.username = p_psu)
		    AND (coalesce(p_tpp, '') = '' OR t.org_id = p_tpp)
		    AND (coalesce(p_status, '') = '' OR bg_consent_status(
			c.status, c.valid_until, c.created_at) = p_status)
		ORDER BY c.created_at DESC, c.id
		LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit
	)
	SELECT staff_list_page('rows', coalesce(jsonb_agg(jsonb_build_object(
	    'id', r.id, 'bg', r.surface = 'bg', 'kind', r.access_kind,
	    'scopes', array_to_string(r.scopes, ' '),
	    'status', r.status_now, 'psu', r.username,
	    'tpp', r.tpp_name, 'org', r.org_id,
	    'valid_until', to_char(r.valid_until, 'YYYY-MM-DD'),
	    'frequency', r.frequency_per_day, 'recurring', r.recurring,
	    'last_used', to_char(r.last_used_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'created', to_char(r.created_at AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24:MI "UTC"'),
	    'accounts', coalesce((SELECT jsonb_agg(jsonb_build_object(
		'iban', a.iban, 'balances', ca.balances,
		'transactions', ca.transactions) ORDER BY a.iban)
		FROM consent_account ca JOIN account a
		    ON a.id = ca.account_id
		WHERE ca.consent_id = r.id), '[]'))
	    ORDER BY r.created_at DESC, r.id), '[]'), p_page, p_limit)
	FROM r;
$$;

-- ---- Staff accounts (admin only) ----------------------------
-- Adding a member stays with psd2ctl staff add (the password is hashed
-- there); the pages change roles, disable, enable and unlock.

-- The staff members, p_limit a page (p_page from 0), p_q part of the
-- username or name, or NULL.
CREATE OR REPLACE FUNCTION staff_members_json(p_q text, p_page integer,
    p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT staff_list_page('members', coalesce(jsonb_agg(
	    jsonb_build_object('username', username,
	    'name', display_name, 'role', role, 'status', status,
	    'admin', role = 'admin', 'disabled', status = 'disabled',
	    'locked', coalesce(locked_until > now(), false))
	    ORDER BY username), '[]'), p_page, p_limit)
	FROM (SELECT * FROM staff
	    WHERE coalesce(p_q, '') = '' OR
		strpos(lower(username), lower(p_q)) > 0 OR
		strpos(lower(display_name), lower(p_q)) > 0
	    ORDER BY username
	    LIMIT p_limit + 1 OFFSET p_page::bigint * p_limit) m;
$$;

-- p_op: make_admin, make_operator, disable, enable, unlock. An admin
-- does not disable or demote themselves (someone must stay able to
-- administer). result: ok, no_staff, self, bad_op. Disabling ends the
-- member's sessions at once.
CREATE OR REPLACE FUNCTION staff_member_action(p_actor text,
    p_actor_id bigint, p_op text, p_username text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s staff%ROWTYPE;
BEGIN
	SELECT * INTO s FROM staff WHERE username = p_username FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'no_staff';
	END IF;
	IF s.id = p_actor_id AND p_op IN ('make_operator', 'disable') THEN
		RETURN 'self';
	END IF;
	CASE p_op
	WHEN 'make_admin' THEN
		UPDATE staff SET role = 'admin' WHERE id = s.id;
	WHEN 'make_operator' THEN
		UPDATE staff SET role = 'operator' WHERE id = s.id;
	WHEN 'disable' THEN
		UPDATE staff SET status = 'disabled' WHERE id = s.id;
		DELETE FROM web_session
		WHERE subject_kind = 'staff' AND subject_id = s.id;
	WHEN 'enable' THEN
		UPDATE staff SET status = 'active' WHERE id = s.id;
	WHEN 'unlock' THEN
		UPDATE staff SET failed_logins = 0, locked_until = NULL
		WHERE id = s.id;
	ELSE
		RETURN 'bad_op';
	END CASE;
	INSERT INTO audit_log (actor, action, detail)
	VALUES (p_actor, 'staff.' || p_op,
	    jsonb_build_object('username', p_username));
	RETURN 'ok';
END;
$$;
