-- Single payments on the Berlin Group standard's paths
-- (/xs2a/v1/payments/{payment-product}, src/bg/README.md) are served by
-- the contract's payment functions: the endpoint functions take the
-- surface's root (p_root), which their links name; pis_wake returns the
-- authorisation's approach (the standard's ASPSP-SCA-Approach header);
-- and a second authorisation asked for on the standard's surface is
-- refused as STATUS_INVALID. The old forms go; functions/60_pis.sql
-- creates the new ones.
--
-- Run inside the migration runner's transaction (no BEGIN/COMMIT here).
-- The new enum value is used only by functions called after the commit.

ALTER TYPE pis_refusal ADD VALUE IF NOT EXISTS 'status_invalid';

DROP FUNCTION IF EXISTS pis_initiate(bytea, text, text, uuid, inet, text,
    jsonb, bytea, boolean, text, text, integer, integer);
DROP FUNCTION IF EXISTS pis_payment(bytea, text, text, uuid, inet, text,
    uuid, text, uuid);
DROP FUNCTION IF EXISTS pis_authorisation_json(text, uuid, uuid, text,
    text);
DROP FUNCTION IF EXISTS pis_self(text, uuid);
DROP FUNCTION IF EXISTS pis_wake(uuid);
