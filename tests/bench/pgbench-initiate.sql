-- What one signed payment initiation does to the database (the service's
-- own statement, src/pis/payments.c sql_initiate): the token and the
-- replay mark (x-request-id), the debtor account of the consent, the
-- PSU's authenticator, and the payment, its authorisation and its device
-- challenge inserted, one durable commit. Client c initiates from the
-- account of bench PSU c + 1 with its token (tests/bench/pis.sh makes
-- bench_pis); anything but 201 divides by zero and fails the run.
SELECT 1 / (r.status = 201)::integer
FROM bench_pis b, LATERAL pis_initiate(b.token_hash, NULL, b.org_id,
    gen_random_uuid(), '192.0.2.1'::inet, 'sepa-credit-transfers',
    jsonb_build_object('debtor', b.iban, 'creditor',
	'DE89370400440532013000', 'name', 'Bench Payee GmbH', 'remittance',
	'Bench', 'amount', '100', 'currency', 'EUR'),
    sha256(uuid_send(gen_random_uuid())), true, NULL, NULL, 120) r
WHERE b.c = :client_id;
