-- The standard interface (src/bg/README.md): the checks every call starts
-- with. The endpoints' functions are in 32_bg_consents.sql and
-- 34_bg_accounts.sql.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).
--
-- Common parameters of the endpoint functions (src/bg/bg.h):
--	p_token_hash	SHA-256 of the bearer token
--	p_x5t		the binding presented (token_binding_cnf, 20_oauth.sql):
--			the TLS client certificate's x5t#S256 (RFC 8705), a
--			verified DPoP proof (RFC 9449), or NULL
--	p_org_id	organizationIdentifier of the verified signing
--			certificate; NULL for an unsigned request (signing off)
--	p_signed_id	X-Request-ID of a verified signed request (the replay
--			mark), or NULL
--	p_psu_ip	PSU-IP-Address (the PSU is present), or NULL
--	p_request_id	X-Request-ID (every request)
--	p_consent_id	Consent-ID, or NULL

-- A consent's status now: a status that changes with time is shown
-- changed at once (the housekeeping writes it, bg_consent_sweep).
CREATE OR REPLACE FUNCTION bg_consent_status(p_status text,
    p_valid_until date, p_created_at timestamptz)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT CASE
	    WHEN p_status = 'valid' AND p_valid_until < current_date
		THEN 'expired'
	    WHEN p_status = 'received'
		AND p_created_at < now() - interval '60 minutes'
		THEN 'rejected'
	    ELSE p_status END;
$$;

-- Writes the statuses that time has changed: consents past validUntil
-- expire, consents and authorisations left unauthorised for 60 minutes
-- are rejected / failed. Called by psd2_purge (housekeeping).
CREATE OR REPLACE FUNCTION bg_consent_sweep() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	n integer;
	m integer;
BEGIN
	UPDATE consent_authorisation a SET sca_status = 'failed',
	    status_at = now()
	WHERE a.sca_status IN ('received', 'started')
	    AND a.created_at < now() - interval '60 minutes';
	UPDATE consent SET status = 'rejected', status_at = now()
	WHERE status = 'received'
	    AND created_at < now() - interval '60 minutes';
	GET DIAGNOSTICS n = ROW_COUNT;
	UPDATE consent SET status = 'expired', status_at = now()
	WHERE status = 'valid' AND valid_until < current_date;
	GET DIAGNOSTICS m = ROW_COUNT;
	RETURN n + m;
END;
$$;

-- The refusal path: the service refused the request before asking the
-- database, but the bearer token is answered first.
CREATE OR REPLACE FUNCTION bg_bearer_only(p_token_hash bytea, p_x5t text)
RETURNS bg_result LANGUAGE sql STABLE AS $$
	SELECT CASE
	    WHEN t.token_hash IS NULL OR t.kind <> 'access'
		OR t.revoked_at IS NOT NULL
		OR NOT token_binding_ok(t.cnf, p_x5t)
		THEN 'token_invalid'
	    WHEN t.expires_at <= now() THEN 'token_expired'
	    ELSE NULL END::bg_refusal, NULL::text, NULL::integer, NULL::text,
	    NULL::text
	FROM (SELECT 1) one
	LEFT JOIN token t ON t.token_hash = p_token_hash;
$$;

-- Bearer token (either kind, src/bg/README.md "The authorisation frame"),
-- the certificate's organisation against the token's TPP, the replay
-- mark, the scope a PSU's token needs (p_scope, NULL: none), then the
-- consent named by Consent-ID: of the token's client, and the token's
-- own one for a PSU's token; else consent_unknown. Without Consent-ID
-- (p_consent_id NULL) the consent columns are NULL.
--
-- status is the consent's status now (bg_consent_status).
CREATE OR REPLACE FUNCTION bg_gate(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_consent_id uuid, p_scope text,
    OUT refusal bg_refusal, OUT detail text, OUT client_id text,
    OUT tpp_id bigint, OUT tpp_org_id text, OUT token_consent uuid,
    OUT consent_id uuid, OUT psu_id bigint, OUT status text,
    OUT sca_at timestamptz, OUT valid_until date, OUT frequency integer,
    OUT surface text, OUT access_kind text, OUT recurring boolean,
    OUT scopes text[])
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
	t record;
BEGIN
	-- One statement: the token, its client and TPP, and the consent
	-- Consent-ID names if it is of that client (judged below, in order).
	SELECT tk.kind, tk.revoked_at, tk.expires_at, tk.cnf,
	    tk.client_id, tk.consent_id, tk.scopes, oc.tpp_id, tp.org_id,
	    oc.status = 'active' AND tp.status = 'active' AS active,
	    c.id AS c_id, c.psu_id AS c_psu_id,
	    bg_consent_status(c.status, c.valid_until, c.created_at)
		AS c_status,
	    c.sca_at AS c_sca_at, c.valid_until AS c_valid_until,
	    c.frequency_per_day AS c_frequency, c.surface AS c_surface,
	    c.access_kind AS c_access_kind, c.recurring AS c_recurring,
	    c.scopes AS c_scopes
	INTO t
	FROM token tk
	JOIN oauth_client oc ON oc.client_id = tk.client_id
	JOIN tpp tp ON tp.id = oc.tpp_id
	LEFT JOIN consent c ON c.id = p_consent_id
	    AND c.client_id = tk.client_id
	WHERE tk.token_hash = p_token_hash;
	IF NOT FOUND OR t.kind <> 'access' OR t.revoked_at IS NOT NULL
	    OR NOT t.active THEN
		refusal := 'token_invalid';
		RETURN;
	END IF;
	-- The binding (token_binding_cnf), and a DPoP proof's jti spent.
	IF (t.cnf IS NOT NULL OR p_x5t IS NOT NULL)
	    AND (NOT token_binding_ok(t.cnf, p_x5t)
		OR NOT dpop_proof_spend(p_x5t)) THEN
		refusal := 'token_invalid';
		RETURN;
	END IF;
	IF t.expires_at <= now() THEN
		refusal := 'token_expired';
		RETURN;
	END IF;
	client_id := t.client_id;
	tpp_id := t.tpp_id;
	tpp_org_id := t.org_id;
	token_consent := t.consent_id;
	IF p_org_id IS NOT NULL AND p_org_id IS DISTINCT FROM t.org_id THEN
		refusal := 'certificate_of_another_tpp';
		RETURN;
	END IF;
	-- The same marks as the contract's paths (ais_gate): one
	-- X-Request-ID per TPP in 24 hours, whichever surface.
	IF p_signed_id IS NOT NULL
	    AND NOT request_replay_mark(t.org_id, p_signed_id) THEN
		refusal := 'request_id_used';
		RETURN;
	END IF;
	IF t.consent_id IS NOT NULL AND p_scope IS NOT NULL
	    AND NOT (p_scope = ANY (t.scopes)) THEN
		refusal := 'consent_invalid';
		detail := 'The consent of this access token does not cover '
		    || p_scope || '.';
		RETURN;
	END IF;
	IF p_consent_id IS NULL THEN
		RETURN;
	END IF;
	IF t.consent_id IS NOT NULL AND t.consent_id <> p_consent_id THEN
		refusal := 'consent_unknown';
		RETURN;
	END IF;
	IF t.c_id IS NULL THEN
		refusal := 'consent_unknown';
		RETURN;
	END IF;
	consent_id := t.c_id;
	psu_id := t.c_psu_id;
	status := t.c_status;
	sca_at := t.c_sca_at;
	valid_until := t.c_valid_until;
	frequency := t.c_frequency;
	surface := t.c_surface;
	access_kind := t.c_access_kind;
	recurring := t.c_recurring;
	scopes := t.c_scopes;
END;
$$;
