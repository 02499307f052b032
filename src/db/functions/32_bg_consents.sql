-- The standard interface's consent resource (src/bg/README.md "Consents"
-- and "SCA of a consent"): one function per call, each returning the
-- finished answer or one named refusal (bg_result). The common
-- parameters $1 to $7 are those of 31_bg_gate.sql.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- A refusal as the answer of a call.
CREATE OR REPLACE FUNCTION bg_refused(p_refusal bg_refusal, p_detail text)
RETURNS bg_result LANGUAGE sql IMMUTABLE AS $$
	SELECT ROW(p_refusal, p_detail, NULL, NULL, NULL)::bg_result;
$$;

-- bg_gate for a call on the consent named in the path (p_consent_id:
-- NULL when the segment is no UUID): no consent, or one that gives no
-- account information (a payment's or a funds confirmation's consent
-- of the contract), is consent_unknown.
CREATE OR REPLACE FUNCTION bg_consent_gate(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_consent_id uuid,
    OUT refusal bg_refusal, OUT detail text, OUT client_id text,
    OUT tpp_org_id text, OUT consent_id uuid, OUT status text)
LANGUAGE sql AS $$
	SELECT CASE WHEN g.refusal IS NULL AND (g.consent_id IS NULL
		OR NOT ('ACCOUNT_INFORMATION' = ANY (g.scopes)))
		THEN 'consent_unknown' ELSE g.refusal END,
	    g.detail, g.client_id, g.tpp_org_id, g.consent_id, g.status
	FROM bg_gate(p_token_hash, p_x5t, p_org_id, p_signed_id,
	    p_consent_id, NULL) g;
$$;

-- The hrefs of a consent resource (relative, under /xs2a/v1).
CREATE OR REPLACE FUNCTION bg_consent_href(p_consent_id uuid)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT '/xs2a/v1/consents/' || p_consent_id;
$$;

-- The links of a started authorisation: where the PSU goes (scaRedirect,
-- the bank's page; or scaOAuth, the RFC 8414 metadata of the integrated
-- OAuth approach) and its scaStatus.
CREATE OR REPLACE FUNCTION bg_authorisation_links(p_consent_id uuid,
    p_authorisation_id uuid, p_approach text, p_base_url text)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN p_approach = 'REDIRECT' THEN jsonb_build_object(
		'scaRedirect', jsonb_build_object('href', p_base_url ||
		    '/auth/consents/' || p_consent_id || '/authorisations/' ||
		    p_authorisation_id))
	    ELSE jsonb_build_object('scaOAuth', jsonb_build_object('href',
		p_base_url || '/.well-known/oauth-authorization-server')) END
	    || jsonb_build_object('scaStatus', jsonb_build_object('href',
		bg_consent_href(p_consent_id) || '/authorisations/' ||
		p_authorisation_id));
$$;

-- TPP-Redirect-URI and TPP-Nok-Redirect-URI must be registered redirect
-- URIs of the client. NULL when they are (or absent), else the header
-- that is not.
CREATE OR REPLACE FUNCTION bg_redirect_unknown(p_client_id text,
    p_ok text, p_nok text)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT CASE
	    WHEN p_ok IS NOT NULL AND NOT (p_ok = ANY (c.redirect_uris))
		THEN 'TPP-Redirect-URI'
	    WHEN p_nok IS NOT NULL AND NOT (p_nok = ANY (c.redirect_uris))
		THEN 'TPP-Nok-Redirect-URI'
	    END
	FROM oauth_client c WHERE c.client_id = p_client_id;
$$;

-- A new authorisation sub-resource of a received consent: REDIRECT
-- with TPP-Redirect-URI, else OAUTH. Returns its id.
CREATE OR REPLACE FUNCTION bg_authorisation_new(p_consent_id uuid,
    p_ok text, p_nok text, p_request_id uuid)
RETURNS uuid LANGUAGE sql AS $$
	INSERT INTO consent_authorisation (id, consent_id, approach,
	    tpp_redirect_uri, tpp_nok_redirect_uri, request_id)
	VALUES (gen_random_uuid(), p_consent_id,
	    CASE WHEN p_ok IS NOT NULL THEN 'REDIRECT' ELSE 'OAUTH' END,
	    p_ok, p_nok, p_request_id)
	RETURNING id;
$$;

-- POST /xs2a/v1/consents. The service checked the body (src/bg/
-- consent_input.c): p_access is the access object as requested,
-- normalised, of kind p_kind. validUntil is lowered to p_max_days after
-- today, frequencyPerDay to p_limit (psd2_consent_max_days,
-- psd2_unattended_limit). Without p_explicit the authorisation starts
-- at once. Only the TPP's own token creates consents.
CREATE OR REPLACE FUNCTION bg_consent_create(p_token_hash bytea,
    p_x5t text, p_org_id text, p_signed_id uuid, p_psu_ip inet,
    p_request_id uuid, p_consent_header uuid, p_kind text, p_access jsonb,
    p_recurring boolean, p_valid_until date, p_frequency integer,
    p_ok text, p_nok text, p_explicit boolean, p_max_days integer,
    p_limit integer, p_base_url text)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	g record;
	v_id uuid := gen_random_uuid();
	v_auth uuid;
	v_bad text;
	v_links jsonb;
BEGIN
	SELECT * INTO g FROM bg_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, NULL, NULL);
	IF g.refusal IS NOT NULL THEN
		RETURN bg_refused(g.refusal, g.detail);
	END IF;
	IF g.token_consent IS NOT NULL THEN
		RETURN bg_refused('service_blocked', 'Consents are created '
		    || 'with the TPP''s own access token (grant_type '
		    || 'client_credentials, scope xs2a).');
	END IF;
	v_bad := bg_redirect_unknown(g.client_id, p_ok, p_nok);
	IF v_bad IS NOT NULL THEN
		RETURN bg_refused('redirect_uri_unknown', v_bad);
	END IF;
	INSERT INTO consent (id, psu_id, client_id, scopes, status,
	    valid_until, frequency_per_day, sca_at, surface, access_kind,
	    access_request, recurring, tpp_redirect_uri, tpp_nok_redirect_uri,
	    psu_ip_address, request_id)
	VALUES (v_id, NULL, g.client_id, '{ACCOUNT_INFORMATION}', 'received',
	    LEAST(p_valid_until, current_date + p_max_days),
	    LEAST(p_frequency, p_limit), NULL, 'bg', p_kind, p_access,
	    p_recurring, p_ok, p_nok, p_psu_ip, p_request_id);
	v_links := jsonb_build_object(
	    'self', jsonb_build_object('href', bg_consent_href(v_id)),
	    'status', jsonb_build_object('href',
		bg_consent_href(v_id) || '/status'));
	IF p_explicit THEN
		v_links := v_links || jsonb_build_object('startAuthorisation',
		    jsonb_build_object('href',
			bg_consent_href(v_id) || '/authorisations'));
	ELSE
		v_auth := bg_authorisation_new(v_id, p_ok, p_nok,
		    p_request_id);
		v_links := v_links || bg_authorisation_links(v_id, v_auth,
		    CASE WHEN p_ok IS NOT NULL THEN 'REDIRECT' ELSE 'OAUTH'
		    END, p_base_url);
	END IF;
	INSERT INTO audit_log (actor, action, detail)
	VALUES ('tpp:' || g.tpp_org_id, 'consent.created',
	    jsonb_build_object('consent', v_id, 'client_id', g.client_id,
		'access', p_kind, 'authorisation', v_auth));
	RETURN ROW(NULL, NULL, 201, jsonb_build_object(
	    'consentStatus', 'received', 'consentId', v_id,
	    '_links', v_links)::text, bg_consent_href(v_id))::bg_result;
END;
$$;

-- The access object of a consent: as requested until the PSU gives it,
-- then the accounts it covers, by right (lists that would be empty are
-- left out). A contract consent covers its accounts with every right.
CREATE OR REPLACE FUNCTION bg_consent_access(p_consent_id uuid)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN c.sca_at IS NULL THEN c.access_request
	    ELSE (SELECT jsonb_strip_nulls(jsonb_build_object(
		'accounts', coalesce(jsonb_agg(r.ref ORDER BY r.id),
		    '[]'::jsonb),
		'balances', jsonb_agg(r.ref ORDER BY r.id)
		    FILTER (WHERE r.balances),
		'transactions', jsonb_agg(r.ref ORDER BY r.id)
		    FILTER (WHERE r.transactions)))
		FROM (SELECT a.id, ca.balances, ca.transactions,
		    jsonb_build_object('iban', a.iban, 'currency',
			a.currency) AS ref
		    FROM consent_account ca
		    JOIN account a ON a.id = ca.account_id
		    WHERE ca.consent_id = c.id) r) END
	FROM consent c WHERE c.id = p_consent_id;
$$;

-- GET /xs2a/v1/consents/{consentId} (p_what 'consent') and .../status
-- ('status'). A PSU's token reads only its own consent (bg_gate).
CREATE OR REPLACE FUNCTION bg_consent_get(p_token_hash bytea, p_x5t text,
    p_org_id text, p_signed_id uuid, p_psu_ip inet, p_request_id uuid,
    p_consent_header uuid, p_consent_id uuid, p_what text,
    p_limit integer)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	g record;
BEGIN
	SELECT * INTO g FROM bg_consent_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_consent_id);
	IF g.refusal IS NOT NULL THEN
		RETURN bg_refused(g.refusal, g.detail);
	END IF;
	IF p_what = 'status' THEN
		RETURN ROW(NULL, NULL, 200, jsonb_build_object(
		    'consentStatus', g.status)::text, NULL)::bg_result;
	END IF;
	RETURN (SELECT ROW(NULL, NULL, 200, jsonb_build_object(
	    'access', bg_consent_access(c.id),
	    'recurringIndicator', c.recurring,
	    'validUntil', to_char(c.valid_until, 'YYYY-MM-DD'),
	    'frequencyPerDay', LEAST(c.frequency_per_day, p_limit),
	    'lastActionDate', to_char(GREATEST(c.status_at,
		c.last_used_at), 'YYYY-MM-DD'),
	    'consentStatus', g.status,
	    '_links', jsonb_build_object('account',
		jsonb_build_object('href', '/xs2a/v1/accounts')))::text,
	    NULL)::bg_result
	    FROM consent c WHERE c.id = g.consent_id);
END;
$$;

-- DELETE /xs2a/v1/consents/{consentId}: a received or valid consent
-- becomes terminatedByTpp, its tokens stop working at once and its open
-- authorisations fail (durable commit). Deleting it again changes
-- nothing; any other final status is status_invalid.
CREATE OR REPLACE FUNCTION bg_consent_delete(p_token_hash bytea,
    p_x5t text, p_org_id text, p_signed_id uuid, p_psu_ip inet,
    p_request_id uuid, p_consent_header uuid, p_consent_id uuid)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	g record;
	n integer;
BEGIN
	SELECT * INTO g FROM bg_consent_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_consent_id);
	IF g.refusal IS NOT NULL THEN
		RETURN bg_refused(g.refusal, g.detail);
	END IF;
	IF g.status = 'terminatedByTpp' THEN
		RETURN ROW(NULL, NULL, 204, NULL, NULL)::bg_result;
	END IF;
	-- The status now, not as read: a concurrent end wins once.
	UPDATE consent SET status = 'terminatedByTpp', status_at = now()
	WHERE id = g.consent_id AND status IN ('received', 'valid')
	    AND bg_consent_status(status, valid_until, created_at)
		IN ('received', 'valid');
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n = 0 THEN
		RETURN bg_refused('status_invalid', 'The consent is '
		    || (SELECT bg_consent_status(status, valid_until,
			created_at) FROM consent WHERE id = g.consent_id)
		    || ': it can no longer be deleted.');
	END IF;
	UPDATE token SET revoked_at = now()
	WHERE consent_id = g.consent_id AND revoked_at IS NULL;
	UPDATE consent_authorisation SET sca_status = 'failed',
	    status_at = now()
	WHERE consent_id = g.consent_id
	    AND sca_status IN ('received', 'started');
	INSERT INTO audit_log (actor, action, detail)
	VALUES ('tpp:' || g.tpp_org_id, 'consent.terminated',
	    jsonb_build_object('consent', g.consent_id));
	RETURN ROW(NULL, NULL, 204, NULL, NULL)::bg_result;
END;
$$;

-- An authorisation's status now: one left unfinished for 60 minutes is
-- shown failed at once (bg_consent_sweep writes it).
CREATE OR REPLACE FUNCTION bg_sca_status(p_status text,
    p_created_at timestamptz)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN p_status IN ('received', 'started')
		AND p_created_at < now() - interval '60 minutes'
		THEN 'failed' ELSE p_status END;
$$;

-- POST /xs2a/v1/consents/{consentId}/authorisations: a received consent
-- takes a new authorisation (the approach follows TPP-Redirect-URI).
CREATE OR REPLACE FUNCTION bg_consent_authorisation_start(
    p_token_hash bytea, p_x5t text, p_org_id text, p_signed_id uuid,
    p_psu_ip inet, p_request_id uuid, p_consent_header uuid,
    p_consent_id uuid, p_ok text, p_nok text, p_base_url text)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	g record;
	v_auth uuid;
	v_bad text;
	v_status text;
BEGIN
	SELECT * INTO g FROM bg_consent_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_consent_id);
	IF g.refusal IS NOT NULL THEN
		RETURN bg_refused(g.refusal, g.detail);
	END IF;
	v_bad := bg_redirect_unknown(g.client_id, p_ok, p_nok);
	IF v_bad IS NOT NULL THEN
		RETURN bg_refused('redirect_uri_unknown', v_bad);
	END IF;
	-- Serialised on the consent: a concurrent end or approval wins.
	SELECT bg_consent_status(status, valid_until, created_at)
	INTO v_status FROM consent WHERE id = g.consent_id FOR UPDATE;
	IF v_status <> 'received' THEN
		RETURN bg_refused('status_invalid', 'The consent is '
		    || v_status || ': it takes no new authorisation.');
	END IF;
	v_auth := bg_authorisation_new(g.consent_id, p_ok, p_nok,
	    p_request_id);
	RETURN ROW(NULL, NULL, 201, jsonb_build_object(
	    'scaStatus', 'received', 'authorisationId', v_auth,
	    '_links', bg_authorisation_links(g.consent_id, v_auth,
		CASE WHEN p_ok IS NOT NULL THEN 'REDIRECT' ELSE 'OAUTH' END,
		p_base_url))::text, NULL)::bg_result;
END;
$$;

-- GET /xs2a/v1/consents/{consentId}/authorisations (p_authorisation_id
-- NULL and p_one false: the list, oldest first) and
-- .../authorisations/{authorisationId} (p_one: its scaStatus; an id
-- that is no UUID comes as NULL and is unknown).
CREATE OR REPLACE FUNCTION bg_consent_authorisations(p_token_hash bytea,
    p_x5t text, p_org_id text, p_signed_id uuid, p_psu_ip inet,
    p_request_id uuid, p_consent_header uuid, p_consent_id uuid,
    p_one boolean, p_authorisation_id uuid)
RETURNS bg_result LANGUAGE plpgsql AS $$
DECLARE
	g record;
	v_status text;
BEGIN
	SELECT * INTO g FROM bg_consent_gate(p_token_hash, p_x5t, p_org_id,
	    p_signed_id, p_consent_id);
	IF g.refusal IS NOT NULL THEN
		RETURN bg_refused(g.refusal, g.detail);
	END IF;
	IF NOT p_one THEN
		RETURN ROW(NULL, NULL, 200, jsonb_build_object(
		    'authorisationIds', coalesce((SELECT jsonb_agg(a.id
			ORDER BY a.created_at, a.id)
			FROM consent_authorisation a
			WHERE a.consent_id = g.consent_id), '[]'::jsonb))::text,
		    NULL)::bg_result;
	END IF;
	SELECT bg_sca_status(a.sca_status, a.created_at) INTO v_status
	FROM consent_authorisation a
	WHERE a.id = p_authorisation_id AND a.consent_id = g.consent_id;
	IF v_status IS NULL THEN
		RETURN bg_refused('authorisation_unknown', NULL);
	END IF;
	RETURN ROW(NULL, NULL, 200, jsonb_build_object('scaStatus',
	    v_status)::text, NULL)::bg_result;
END;
$$;
