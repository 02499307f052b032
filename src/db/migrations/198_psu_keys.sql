-- Passkeys and FIDO2 security keys (WebAuthn) as a PSU's second element
-- at the login, beside the TOTP code.
--
-- psu.key_handle: the WebAuthn user handle of the PSU (user.id), random,
-- so that an authenticator stores nothing that names the PSU.
--
-- psu_key: one registered credential: its id as the authenticator gave
-- it, the COSE algorithm and public key as libfido2 reads them from the
-- attested credential data (ES256: x and y, 64 bytes; EdDSA: 32 bytes;
-- RS256: modulus and exponent), the signature counter last seen (0: the
-- authenticator keeps none), the AAGUID, and the PSU's name for it. A
-- removed key keeps its row (the audit names it) and never signs again.
-- Staff remove a PSU's lost key with four eyes: one member proposes
-- (with a reason), another confirms.
--
-- webauthn_challenge: each challenge, hashed, spent once, kept until the
-- sealed step it is derived from has expired, then purged.
--
-- payment_authorisation.method gains 'key': a redirect payment
-- authorised with one, over a challenge bound to amount and payee.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE psu ADD COLUMN key_handle uuid NOT NULL
    DEFAULT gen_random_uuid() UNIQUE;

CREATE TABLE psu_key (
	id		bigserial PRIMARY KEY,
	psu_id		bigint NOT NULL REFERENCES psu (id) ON DELETE CASCADE,
	credential_id	bytea NOT NULL UNIQUE
	    CHECK (length(credential_id) BETWEEN 16 AND 1023),
	alg		integer NOT NULL CHECK (alg IN (-7, -8, -257)),
	public_key	bytea NOT NULL CHECK (length(public_key) BETWEEN 32 AND 1024),
	sign_count	bigint NOT NULL DEFAULT 0
	    CHECK (sign_count BETWEEN 0 AND 4294967295),
	aaguid		uuid NOT NULL,
	name		text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
	created_at	timestamptz NOT NULL DEFAULT now(),
	last_used_at	timestamptz,
	removed_at	timestamptz,
	removed_why	text CHECK (removed_why IN ('psu', 'staff', 'counter')),
	-- A lost key's removal by staff, proposed by one member and
	-- confirmed by another (four eyes).
	removal_proposed_by	text,
	removal_proposed_at	timestamptz,
	removal_reason		text
	    CHECK (length(removal_reason) BETWEEN 1 AND 200),
	CHECK ((removal_proposed_by IS NULL) = (removal_proposed_at IS NULL)
	    AND (removal_proposed_by IS NULL) = (removal_reason IS NULL))
);
CREATE INDEX psu_key_psu ON psu_key (psu_id) WHERE removed_at IS NULL;

CREATE TABLE webauthn_challenge (
	challenge_hash	bytea PRIMARY KEY CHECK (length(challenge_hash) = 32),
	expires_at	timestamptz NOT NULL
);
CREATE INDEX webauthn_challenge_expires ON webauthn_challenge (expires_at);

-- login_factor names the factor in its audit rows (a key's failures are
-- not the TOTP code's): functions/20_oauth.sql creates it again with one
-- more parameter.
DROP FUNCTION IF EXISTS login_factor(bigint, boolean, integer, integer,
    boolean);

-- A redirect payment may be authorised with a key (psu_payment_key).
ALTER TABLE payment_authorisation
    DROP CONSTRAINT payment_authorisation_method_check;
ALTER TABLE payment_authorisation ADD CONSTRAINT
    payment_authorisation_method_check
    CHECK (method IN ('device', 'totp', 'key'));

-- A flow whose login used a key has no TOTP step.
ALTER TABLE auth_flow ALTER COLUMN totp_step DROP NOT NULL;
