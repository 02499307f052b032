-- The PSU's side of the SCA of a Berlin Group consent (src/bg/README.md
-- "SCA of a consent"): the redirect approach's page, the integrated
-- OAuth approach's authorisation request (scope AIS:{consentId}), the
-- consent page and the PSU's decision.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).
--
-- The requested access of a 'bg' consent (consent.access_request) is
-- the access object of POST /xs2a/v1/consents, normalised: for the
-- dedicated and bank-offered kinds an object with the lists that were
-- sent among "accounts", "balances", "transactions", each a list of
-- {"iban"[, "currency"]} (IBANs upper case, without spaces; the lists
-- empty for bank-offered); for the other kinds the one key that was sent
-- ("availableAccounts", "availableAccountsWithBalance", "allPsd2").

-- Every IBAN the access names, once, with its currency if one was given
-- and the rights the lists give it.
CREATE OR REPLACE FUNCTION bg_access_named(p_access jsonb)
RETURNS TABLE (iban text, currency text, balances boolean,
    transactions boolean)
LANGUAGE sql IMMUTABLE AS $$
	SELECT upper(r.ref ->> 'iban'),
	    max(upper(r.ref ->> 'currency')),
	    bool_or(r.list = 'balances'), bool_or(r.list = 'transactions')
	FROM (SELECT l.list, e.ref
	    FROM unnest(ARRAY['accounts', 'balances', 'transactions']) l(list)
	    CROSS JOIN LATERAL jsonb_array_elements(
		CASE WHEN jsonb_typeof(p_access -> l.list) = 'array'
		THEN p_access -> l.list ELSE '[]'::jsonb END) e(ref)) r
	WHERE r.ref ? 'iban'
	GROUP BY upper(r.ref ->> 'iban');
$$;

-- The rights an account gets from a consent of a kind that does not
-- name IBANs (bank-offered: the lists that were sent; the "all
-- accounts" kinds: src/bg/README.md "Consents").
CREATE OR REPLACE FUNCTION bg_access_rights(p_kind text, p_access jsonb,
    OUT balances boolean, OUT transactions boolean)
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE p_kind
		WHEN 'bankOffered' THEN p_access ? 'balances'
		WHEN 'availableAccountsWithBalance' THEN true
		WHEN 'allPsd2' THEN true
		ELSE false END,
	    CASE p_kind
		WHEN 'bankOffered' THEN p_access ? 'transactions'
		WHEN 'allPsd2' THEN true
		ELSE false END;
$$;

-- What the login form carries for a 'bg' consent (sealed, see
-- src/oauth/oauth.h): its TPP and the authorisation.
CREATE OR REPLACE FUNCTION bg_authreq(p_consent_id uuid,
    p_authorisation_id uuid, p_approach text)
RETURNS json LANGUAGE sql STABLE AS $$
	SELECT json_build_object(
	    'client_id', c.client_id,
	    'tpp_name', t.name,
	    'tpp_org', t.org_id,
	    'scope', 'ACCOUNT_INFORMATION',
	    'bg', json_build_object(
		'consent_id', c.id,
		'authorisation_id', a.id,
		'approach', p_approach,
		'ok_uri', a.tpp_redirect_uri,
		'nok_uri', coalesce(a.tpp_nok_redirect_uri,
		    a.tpp_redirect_uri),
		'kind', c.access_kind))
	FROM consent c
	JOIN oauth_client oc ON oc.client_id = c.client_id
	JOIN tpp t ON t.id = oc.tpp_id
	LEFT JOIN consent_authorisation a ON a.id = p_authorisation_id
	WHERE c.id = p_consent_id;
$$;

-- GET /auth/consents/{consentId}/authorisations/{authorisationId}: the
-- redirect approach's page. The authorisation must be of that consent,
-- REDIRECT, received or started and not timed out, the consent received
-- and its TPP active; it moves to started and the login form's request
-- is returned. Otherwise refusal, and nothing changes:
--	unknown	no such authorisation of that consent, or not REDIRECT
--	gone	answered, timed out, or the consent or its TPP no longer
--		waits for it
CREATE OR REPLACE FUNCTION bg_authorise_page(p_consent_id uuid,
    p_authorisation_id uuid, OUT refusal text, OUT request json)
LANGUAGE plpgsql AS $$
DECLARE
	a consent_authorisation%ROWTYPE;
	c consent%ROWTYPE;
BEGIN
	SELECT * INTO a FROM consent_authorisation
	WHERE id = p_authorisation_id AND consent_id = p_consent_id
	FOR UPDATE;
	IF NOT FOUND OR a.approach <> 'REDIRECT' THEN
		refusal := 'unknown';
		RETURN;
	END IF;
	SELECT * INTO c FROM consent WHERE id = p_consent_id;
	IF c.surface <> 'bg'
	    OR bg_consent_status(c.status, c.valid_until, c.created_at)
		<> 'received'
	    OR a.sca_status NOT IN ('received', 'started')
	    OR a.created_at < now() - interval '60 minutes'
	    OR NOT oauth_client_active(c.client_id) THEN
		refusal := 'gone';
		RETURN;
	END IF;
	UPDATE consent_authorisation SET sca_status = 'started',
	    status_at = now()
	WHERE id = a.id AND sca_status = 'received';
	request := bg_authreq(c.id, a.id, 'REDIRECT');
END;
$$;

-- GET /auth/oauth/authorize with scope AIS:{consentId}: the consent must
-- be a received 'bg' consent of that client. Its newest OAUTH
-- authorisation still open (if the TPP made one) moves to started; the
-- login form's request is returned. Otherwise description says why (the
-- invalid_scope redirect), and nothing changes.
CREATE OR REPLACE FUNCTION bg_oauth_authorize(p_client_id text,
    p_consent_id uuid, OUT description text, OUT request json)
LANGUAGE plpgsql AS $$
DECLARE
	c consent%ROWTYPE;
	auth_id uuid;
BEGIN
	SELECT * INTO c FROM consent
	WHERE id = p_consent_id AND client_id = p_client_id
	    AND surface = 'bg'
	FOR UPDATE;
	IF NOT FOUND THEN
		description := 'scope AIS: names no consent of this client '
		    'created on /xs2a/v1/consents';
		RETURN;
	END IF;
	IF bg_consent_status(c.status, c.valid_until, c.created_at)
	    <> 'received' THEN
		description := 'scope AIS: names a consent that is '
		    || bg_consent_status(c.status, c.valid_until,
		    c.created_at) || ', not received';
		RETURN;
	END IF;
	SELECT id INTO auth_id FROM consent_authorisation
	WHERE consent_id = c.id AND approach = 'OAUTH'
	    AND sca_status IN ('received', 'started')
	    AND created_at >= now() - interval '60 minutes'
	ORDER BY created_at DESC, id DESC LIMIT 1
	FOR UPDATE;
	IF FOUND THEN
		UPDATE consent_authorisation SET sca_status = 'started',
		    status_at = now()
		WHERE id = auth_id AND sca_status = 'received';
	END IF;
	request := bg_authreq(c.id, auth_id, 'OAUTH');
END;
$$;

-- The consent page of a 'bg' consent, after the PSU's login: the access
-- asked for and the PSU's accounts. named: the IBANs the consent names
-- (dedicated), each with its rights and, when it is the PSU's, the
-- account's name (mine false: not the PSU's, or another currency: the
-- approval will fail). accounts: the PSU's accounts (bank-offered: the
-- PSU ticks among them). rights: those of every account for the kinds
-- that name none. valid_until: as the consent will be (a one-off
-- consent: today).
CREATE OR REPLACE FUNCTION bg_consent_page(p_consent_id uuid,
    p_psu_id bigint)
RETURNS json LANGUAGE sql STABLE AS $$
	SELECT json_build_object(
	    'kind', c.access_kind,
	    'recurring', c.recurring,
	    'frequency', c.frequency_per_day,
	    'valid_until', to_char(CASE WHEN c.recurring THEN c.valid_until
		ELSE current_date END, 'YYYY-MM-DD'),
	    'balances', r.balances,
	    'transactions', r.transactions,
	    'named', coalesce((SELECT json_agg(json_build_object(
		'iban', n.iban,
		'name', a.name,
		'mine', a.id IS NOT NULL AND (n.currency IS NULL
		    OR n.currency = a.currency),
		'balances', n.balances,
		'transactions', n.transactions) ORDER BY n.iban)
		FROM bg_access_named(c.access_request) n
		LEFT JOIN account a ON a.iban = n.iban
		    AND a.psu_id = p_psu_id
		WHERE c.access_kind = 'dedicated'), '[]'::json),
	    'accounts', coalesce((SELECT json_agg(json_build_object(
		'resource_id', a.resource_id,
		'iban', a.iban,
		'name', a.name,
		'currency', a.currency) ORDER BY a.id)
		FROM account a WHERE a.psu_id = p_psu_id), '[]'::json))
	FROM consent c
	CROSS JOIN LATERAL bg_access_rights(c.access_kind,
	    c.access_request) r
	WHERE c.id = p_consent_id;
$$;

-- Which of the PSU's accounts the consent covers, with their rights; for
-- bank-offered, those of p_accounts (resource ids). NULL when the
-- consent cannot be given: an IBAN it names is not the PSU's, or not in
-- the currency named.
CREATE OR REPLACE FUNCTION bg_consent_cover(c consent, p_psu_id bigint,
    p_accounts text[])
RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE
	r record;
	covered jsonb;
BEGIN
	IF c.access_kind = 'dedicated' THEN
		IF EXISTS (SELECT 1 FROM bg_access_named(c.access_request) n
		    LEFT JOIN account a ON a.iban = n.iban
			AND a.psu_id = p_psu_id
		    WHERE a.id IS NULL OR (n.currency IS NOT NULL
			AND n.currency <> a.currency)) THEN
			RETURN NULL;
		END IF;
		SELECT coalesce(jsonb_agg(jsonb_build_array(a.id, n.balances,
		    n.transactions)), '[]'::jsonb)
		INTO covered
		FROM bg_access_named(c.access_request) n
		JOIN account a ON a.iban = n.iban AND a.psu_id = p_psu_id;
		RETURN covered;
	END IF;
	r := bg_access_rights(c.access_kind, c.access_request);
	SELECT coalesce(jsonb_agg(jsonb_build_array(a.id, r.balances,
	    r.transactions)), '[]'::jsonb)
	INTO covered
	FROM account a
	WHERE a.psu_id = p_psu_id AND (c.access_kind <> 'bankOffered'
	    OR a.resource_id = ANY (p_accounts));
	RETURN covered;
END;
$$;

-- The PSU's decision on a 'bg' consent in one authorisation request
-- (flow), modelled on consent_decide (20_oauth.sql): the first decision
-- is final, a repeated post gets its outcome.
--	p_authorisation_id	the authorisation (REDIRECT: always; OAUTH:
--				the TPP's, or NULL: one is created now)
--	p_accounts		bank-offered: the ticked accounts
--	p_code_hash		the digest of the code derived from the flow
--				(OAUTH: the auth_code; REDIRECT: only the
--				flow's record)
-- Approve: the consent becomes valid for the PSU (one-off: until
-- today), consent_account rows with the rights of its kind, a former
-- valid recurring 'bg' consent of the PSU and client expires (when this
-- one is recurring), the authorisation is finalised; OAUTH: the code.
-- Deny: the consent is rejected, the authorisation failed.
-- result:
--   ok, denied         now
--   repeat_code        (OAUTH) approved before, the code unspent and
--                      unexpired and the session live
--   repeat_ok          (REDIRECT) approved before
--   repeat_denied      denied (or failed) before
--   answered           (OAUTH) approved before, nothing to send again
--   failed_accounts    an IBAN the consent names is not the PSU's (or not
--                      in the currency named): consent rejected,
--                      authorisation failed, recorded as a denial
--   gone               the consent or the authorisation no longer waits
--                      for a decision (timed out, ended, answered in
--                      another flow): nothing stored
--   no_session, client_inactive, bad_account (a ticked account not
--   the PSU's): nothing stored
CREATE OR REPLACE FUNCTION bg_consent_decide(p_flow_hash bytea,
    p_approve boolean, p_session_hash bytea, p_idle integer,
    p_psu_id bigint, p_client_id text, p_consent_id uuid,
    p_authorisation_id uuid, p_approach text, p_accounts text[],
    p_redirect_uri text, p_code_challenge text, p_code_hash bytea,
    p_code_ttl integer, p_family uuid, p_dpop_jkt text, p_par text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c consent%ROWTYPE;
	a consent_authorisation%ROWTYPE;
	covered jsonb;
	auth_id uuid;
	n integer;
	r text;
BEGIN
	r := consent_flow_answered(p_flow_hash, p_psu_id, p_session_hash,
	    p_idle, p_code_hash);
	IF r IN ('repeat_code', 'answered') AND p_approach = 'REDIRECT' THEN
		RETURN 'repeat_ok';
	END IF;
	IF r IS NOT NULL THEN
		RETURN r;
	END IF;
	-- The decision uses up a pushed request (oauth_par_read).
	DELETE FROM pushed_request WHERE uri_hash = decode(p_par, 'hex');
	SELECT * INTO c FROM consent
	WHERE id = p_consent_id AND client_id = p_client_id
	    AND surface = 'bg'
	FOR UPDATE;
	IF NOT FOUND OR bg_consent_status(c.status, c.valid_until,
	    c.created_at) <> 'received' THEN
		RETURN 'gone';
	END IF;
	IF p_authorisation_id IS NOT NULL THEN
		SELECT * INTO a FROM consent_authorisation
		WHERE id = p_authorisation_id AND consent_id = c.id
		    AND approach = p_approach
		FOR UPDATE;
		IF NOT FOUND OR a.sca_status NOT IN ('received', 'started')
		    OR a.created_at < now() - interval '60 minutes' THEN
			RETURN 'gone';
		END IF;
		auth_id := a.id;
	ELSIF p_approach <> 'OAUTH' THEN
		RETURN 'gone';
	END IF;
	IF p_approve THEN
		IF session_psu(p_session_hash, p_idle)
		    IS DISTINCT FROM p_psu_id THEN
			RETURN 'no_session';
		END IF;
		IF NOT oauth_client_active(p_client_id) THEN
			RETURN 'client_inactive';
		END IF;
		IF c.access_kind = 'bankOffered' THEN
			SELECT count(*) INTO n FROM account
			WHERE psu_id = p_psu_id
			    AND resource_id = ANY (p_accounts);
			IF n = 0 OR n <> cardinality(p_accounts) THEN
				RETURN 'bad_account';
			END IF;
		END IF;
		covered := bg_consent_cover(c, p_psu_id, p_accounts);
	END IF;
	IF auth_id IS NULL THEN
		INSERT INTO consent_authorisation (id, consent_id, approach,
		    sca_status)
		VALUES (gen_random_uuid(), c.id, 'OAUTH', 'started')
		RETURNING id INTO auth_id;
	END IF;
	IF NOT p_approve OR covered IS NULL THEN
		UPDATE auth_flow SET decision = 'denied'
		WHERE flow_hash = p_flow_hash;
		UPDATE consent SET status = 'rejected', status_at = now()
		WHERE id = c.id;
		UPDATE consent_authorisation SET sca_status = 'failed',
		    psu_id = p_psu_id, status_at = now()
		WHERE id = auth_id;
		INSERT INTO audit_log (actor, action, detail)
		SELECT 'psu:' || username, 'psu.consent_denied',
		    jsonb_build_object('client_id', p_client_id,
			'consent_id', c.id, 'authorisation_id', auth_id,
			'reason', CASE WHEN p_approve THEN 'accounts'
			    ELSE 'denied' END)
		FROM psu WHERE id = p_psu_id;
		RETURN CASE WHEN p_approve THEN 'failed_accounts'
		    ELSE 'denied' END;
	END IF;
	UPDATE consent SET status = 'valid', psu_id = p_psu_id, sca_at = now(),
	    status_at = now(),
	    valid_until = CASE WHEN c.recurring THEN c.valid_until
		ELSE current_date END
	WHERE id = c.id;
	INSERT INTO consent_account (consent_id, account_id, balances,
	    transactions)
	SELECT c.id, (e ->> 0)::bigint, (e ->> 1)::boolean,
	    (e ->> 2)::boolean
	FROM jsonb_array_elements(covered) e;
	-- A newer recurring consent of the standard interface replaces the
	-- PSU's former one for the same TPP (src/bg/README.md).
	IF c.recurring THEN
		WITH ended AS (
			UPDATE consent SET status = 'expired',
			    status_at = now()
			WHERE psu_id = p_psu_id AND client_id = p_client_id
			    AND surface = 'bg' AND recurring
			    AND status = 'valid' AND id <> c.id
			RETURNING id)
		UPDATE token SET revoked_at = now()
		WHERE consent_id IN (SELECT id FROM ended)
		    AND revoked_at IS NULL;
	END IF;
	UPDATE consent_authorisation SET sca_status = 'finalised',
	    psu_id = p_psu_id, status_at = now()
	WHERE id = auth_id;
	IF p_approach = 'OAUTH' THEN
		INSERT INTO auth_code (code_hash, family, client_id,
		    redirect_uri, consent_id, code_challenge, scopes,
		    expires_at, dpop_jkt)
		VALUES (p_code_hash, p_family, p_client_id, p_redirect_uri,
		    c.id, p_code_challenge, '{ACCOUNT_INFORMATION}',
		    now() + make_interval(secs => p_code_ttl), p_dpop_jkt);
	END IF;
	UPDATE auth_flow SET decision = 'approved', consent_id = c.id,
	    code_hash = p_code_hash
	WHERE flow_hash = p_flow_hash;
	INSERT INTO audit_log (actor, action, detail)
	SELECT 'psu:' || username, 'psu.consent_approved',
	    jsonb_build_object('client_id', p_client_id, 'consent_id',
		c.id, 'authorisation_id', auth_id, 'approach', p_approach,
		'scopes', to_jsonb(c.scopes))
	FROM psu WHERE id = p_psu_id;
	RETURN 'ok';
END;
$$;
