-- The Berlin Group consent resource of the standard interface
-- (src/bg/README.md). A consent may now exist before a PSU authorises it:
-- POST /xs2a/v1/consents stores it as 'received', without a PSU, with the
-- access the TPP asked for; an authorisation sub-resource (redirect or
-- integrated OAuth) lets the PSU give it. The consents of the contract's
-- OAuth flow are unchanged: consent_decide creates them 'valid', with
-- every right on every account the PSU ticked.

-- What a consent covers, per account: the list and details always; its
-- balances and its transactions only where given. Contract consents give
-- both (the defaults).
ALTER TABLE consent_account
    ADD COLUMN balances boolean NOT NULL DEFAULT true,
    ADD COLUMN transactions boolean NOT NULL DEFAULT true;

ALTER TABLE consent
    ALTER COLUMN psu_id DROP NOT NULL,
    ALTER COLUMN sca_at DROP NOT NULL,
    -- where the consent was asked for: the contract's authorisation
    -- request ('oauth') or POST /xs2a/v1/consents ('bg')
    ADD COLUMN surface text NOT NULL DEFAULT 'oauth'
	CHECK (surface IN ('oauth', 'bg')),
    -- the Berlin Group kind of access (bg only): dedicated (IBANs named),
    -- bankOffered (empty lists: the PSU picks on the bank's page),
    -- availableAccounts, availableAccountsWithBalance, allPsd2
    ADD COLUMN access_kind text CHECK (access_kind IN ('dedicated',
	'bankOffered', 'availableAccounts', 'availableAccountsWithBalance',
	'allPsd2')),
    -- the access object as requested, normalised (bg only)
    ADD COLUMN access_request jsonb,
    ADD COLUMN recurring boolean NOT NULL DEFAULT true,
    ADD COLUMN tpp_redirect_uri text,
    ADD COLUMN tpp_nok_redirect_uri text,
    ADD COLUMN psu_ip_address inet,
    ADD COLUMN request_id uuid,
    ADD CONSTRAINT consent_bg_kind CHECK ((surface = 'bg') =
	(access_kind IS NOT NULL AND access_request IS NOT NULL)),
    -- a consent that a PSU gave has its PSU and the time of its SCA
    ADD CONSTRAINT consent_given_by_psu CHECK (status IN ('received',
	'rejected', 'terminatedByTpp') OR (psu_id IS NOT NULL
	AND sca_at IS NOT NULL));

-- The TPP's consents, for the status sweep and the staff pages.
CREATE INDEX consent_client ON consent (client_id, created_at);
-- Consents still waiting for their PSU (few at any time).
CREATE INDEX consent_received ON consent (created_at)
    WHERE status = 'received';

-- The authorisation sub-resources of a consent
-- (/xs2a/v1/consents/{consentId}/authorisations/{authorisationId}).
-- approach: REDIRECT (the bank's page, then TPP-Redirect-URI) or OAUTH
-- (the authorisation endpoint with scope AIS:{consentId}).
-- sca_status: received -> started (the PSU opened the page or the
-- authorisation request) -> finalised (consent given) | failed (denied,
-- or not finished in time).
CREATE TABLE consent_authorisation (
	id		uuid PRIMARY KEY,
	consent_id	uuid NOT NULL REFERENCES consent(id) ON DELETE CASCADE,
	approach	text NOT NULL CHECK (approach IN ('REDIRECT', 'OAUTH')),
	sca_status	text NOT NULL DEFAULT 'received'
			CHECK (sca_status IN ('received', 'started',
			    'finalised', 'failed')),
	psu_id		bigint REFERENCES psu(id),
	tpp_redirect_uri text,
	tpp_nok_redirect_uri text,
	request_id	uuid,
	created_at	timestamptz NOT NULL DEFAULT now(),
	status_at	timestamptz NOT NULL DEFAULT now(),
	CHECK (approach <> 'REDIRECT' OR tpp_redirect_uri IS NOT NULL),
	CHECK (sca_status <> 'finalised' OR psu_id IS NOT NULL)
);
CREATE INDEX consent_authorisation_consent
    ON consent_authorisation (consent_id, created_at);

-- The TPP's own access token (client credentials grant, scope 'xs2a'):
-- no consent, never a refresh token. With it the TPP creates consents
-- and reads them by Consent-ID; a token issued by a PSU's authorisation
-- keeps its one consent.
ALTER TABLE token
    ALTER COLUMN consent_id DROP NOT NULL,
    ADD CONSTRAINT token_consent_or_tpp CHECK (consent_id IS NOT NULL
	OR (kind = 'access' AND scopes = '{xs2a}'));

-- The named refusals of the standard interface's functions
-- (src/db/functions/32_bg_consents.sql, 34_bg_accounts.sql) and how the
-- service answers each (src/bg/bg_call.c).
CREATE TYPE bg_refusal AS ENUM (
	'token_invalid',		-- 401 TOKEN_INVALID
	'token_expired',		-- 401 TOKEN_EXPIRED
	'certificate_of_another_tpp',	-- 401 CERTIFICATE_INVALID
	'request_id_used',		-- 400 FORMAT_ERROR X-Request-ID
	'format_error',			-- 400 FORMAT_ERROR (detail: text)
	'redirect_uri_unknown',		-- 400 FORMAT_ERROR TPP-Redirect-URI
	'parameter_not_supported',	-- 400 PARAMETER_NOT_SUPPORTED
	'period_invalid',		-- 400 PERIOD_INVALID
	'consent_unknown',		-- 403 CONSENT_UNKNOWN
	'consent_invalid',		-- 401 CONSENT_INVALID
	'consent_expired',		-- 401 CONSENT_EXPIRED
	'service_blocked',		-- 403 SERVICE_BLOCKED (scope)
	'resource_not_covered',		-- 403 RESOURCE_UNKNOWN
	'resource_unknown',		-- 404 RESOURCE_UNKNOWN
	'authorisation_unknown',	-- 403 RESOURCE_UNKNOWN authorisationId
	'status_invalid',		-- 409 STATUS_INVALID
	'access_exceeded'		-- 429 ACCESS_EXCEEDED
);

-- An answer of the standard interface: a refusal (detail: its variable
-- text), or the status (200, 201, 204) and the finished JSON body (NULL
-- with 204); location: the Location header of a 201.
CREATE TYPE bg_result AS (
	refusal		bg_refusal,
	detail		text,
	status		integer,
	body		text,
	location	text
);
