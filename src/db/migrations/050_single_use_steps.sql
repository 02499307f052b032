-- One authorisation request (a "flow": the random id sealed into its
-- login form) gets one TOTP login and one decision (issue 8): a repeated
-- post of the TOTP or consent form finds the first post's outcome here
-- and creates nothing new. Codes and session ids of a flow are derived
-- from the flow id under the form key (src/web/forms.c), so the digests
-- below are all that is stored. Rows live as long as the login form
-- (30 minutes); psd2_purge deletes them after.
CREATE TABLE auth_flow (
	flow_hash	bytea PRIMARY KEY CHECK (length(flow_hash) = 32),
	psu_id		bigint NOT NULL REFERENCES psu(id),
	totp_step	bigint NOT NULL,
	decision	text CHECK (decision IN ('approved', 'denied')),
	consent_id	uuid REFERENCES consent(id),
	code_hash	bytea CHECK (length(code_hash) = 32),
	expires_at	timestamptz NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT now(),
	CHECK ((decision = 'approved') = (consent_id IS NOT NULL AND
	    code_hash IS NOT NULL))
);
CREATE INDEX auth_flow_expires ON auth_flow (expires_at);

-- Replaced by login_totp_flow and consent_decide (src/db/functions).
DROP FUNCTION login_totp(bigint, bigint, integer, integer, bytea, integer);
DROP FUNCTION consent_approve(bytea, integer, bigint, text, text[], text[],
    integer, text, text, bytea, integer, uuid, uuid);
