-- What one signed payment initiation does to the database, on the
-- bench's tables: the service's own statement (pis_initiate, as
-- src/pis/payments.c calls it after the signature and the input are
-- checked in C), so the same rows are read (token, consent, account,
-- client, device) and written (the x-request-id mark, the payment, its
-- authorisation and the device challenge), one durable commit, then the
-- daemons' wake-up (pis_wake) as the service sends it. PSU n's
-- token is sha256 of the 8-byte n and a 'p' (made by tests/bench/bench.sh,
-- apart from the refresh pool's sha256 of the bare number); its
-- account's IBAN is computed as tests/bench/data.sql makes it. Anything
-- but a 201 divides by zero, which aborts the client and fails the run.
-- Run with -M prepared (:pid is a parameter; the plans are kept, as the
-- service's PL/pgSQL keeps them).
\set n random(1, :psus)
SELECT substr(r.detail, length(r.detail) - 35) AS pid,
    1 / (r.status = 201 AND r.refusal IS NULL)::integer AS ok
FROM pis_initiate(sha256(int8send(:n) || '\x70'::bytea), NULL,
    'PSDDE-BAFIN-999999', gen_random_uuid(), '192.0.2.1',
    '/auth/v1/psd2/payments/', 'sepa-credit-transfers',
    jsonb_build_object('debtor', bench_iban(:n),
	'creditor', 'DE89370400440532013000', 'name', 'Bench Creditor',
	'remittance', 'Bench', 'amount', '1234', 'currency', 'EUR'),
    decode(md5(random()::text) || md5(random()::text), 'hex'), true,
    NULL, NULL, 120, 600) r
\gset
SELECT pis_wake(:pid::uuid);
