-- FIDO2 security keys for bank staff (WebAuthn), the staff login's
-- second element beside the TOTP code.
--
-- staff.key_handle: the member's WebAuthn user handle (user.id), random.
--
-- staff_key: one registered key. Unlike a PSU's key it is attested: its
-- attestation certificate chains to a root of psd2_staff_key_roots and
-- its AAGUID (the model) is on psd2_staff_key_aaguids, both checked in C
-- before the row is written. A new key signs nothing until another admin
-- approves it (four eyes: approved_by is never the member). An admin who
-- holds an approved key logs in with it; the TOTP code no longer opens
-- an admin's session. A removed key keeps its row for the audit log.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).

ALTER TABLE staff ADD COLUMN key_handle uuid NOT NULL
    DEFAULT gen_random_uuid() UNIQUE;

CREATE TABLE staff_key (
	id		bigserial PRIMARY KEY,
	staff_id	bigint NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
	credential_id	bytea NOT NULL UNIQUE
	    CHECK (length(credential_id) BETWEEN 16 AND 1023),
	alg		integer NOT NULL CHECK (alg IN (-7, -8, -257)),
	public_key	bytea NOT NULL CHECK (length(public_key) BETWEEN 32 AND 1024),
	sign_count	bigint NOT NULL DEFAULT 0
	    CHECK (sign_count BETWEEN 0 AND 4294967295),
	aaguid		uuid NOT NULL,
	name		text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
	created_at	timestamptz NOT NULL DEFAULT now(),
	approved_by	text,
	approved_at	timestamptz,
	last_used_at	timestamptz,
	removed_at	timestamptz,
	removed_by	text,
	-- refused: the approving admin said no; withdrawn: the member took
	-- back a key not yet approved; removed: an admin removed it (lost);
	-- counter: its signature counter went back (a copy exists).
	removed_why	text CHECK (removed_why IN ('refused', 'withdrawn',
	    'removed', 'counter')),
	CHECK ((approved_by IS NULL) = (approved_at IS NULL)),
	CHECK ((removed_at IS NULL) = (removed_why IS NULL))
);
CREATE INDEX staff_key_staff ON staff_key (staff_id) WHERE removed_at IS NULL;
