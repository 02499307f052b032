-- The bench's bank: :psus PSUs (bench-psu-00001 ...), each with one
-- account (bench-acc-00001 ..., :txn transactions, a balance) and one
-- consent of the sandbox TPP for it with SCA now; and, once, a token
-- table of realistic size (40 spent or expired tokens per consent, as
-- months of refresh grants leave). Password and TOTP seed come from the
-- PSU bench-template (made with psd2ctl, so hashed as the service does).
-- tests/bench/bench.sh runs it on a new database; a second run would only
-- renew the consents.
\set ON_ERROR_STOP 1
INSERT INTO psu (username, display_name, password_hash, totp_box)
SELECT format('bench-psu-%s', lpad(n::text, 5, '0')), 'Bench ' || n,
    t.password_hash, t.totp_box
FROM generate_series(1, :psus) n, psu t WHERE t.username = 'bench-template'
ON CONFLICT (username) DO NOTHING;

-- PSU n's IBAN: a valid German one (MOD 97-10), which payment initiation
-- requires of the debtor account (tests/bench/pgbench-pis.sql computes it).
CREATE OR REPLACE FUNCTION bench_iban(n integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT 'DE' || lpad((98 - mod(('37040044' || lpad(n::text, 10, '0')
	    || '131400')::numeric, 97))::text, 2, '0') || '37040044'
	    || lpad(n::text, 10, '0');
$$;

INSERT INTO account (resource_id, psu_id, iban, name, holder_name, currency)
SELECT 'bench-acc-' || substr(p.username, 11), p.id,
    bench_iban(substr(p.username, 11)::integer), 'Giro',
    p.display_name, 'EUR'
FROM psu p WHERE p.username LIKE 'bench-psu-%'
ON CONFLICT (resource_id) DO NOTHING;

INSERT INTO balance (account_id, amount_minor)
SELECT a.id, 100000 FROM account a WHERE a.resource_id LIKE 'bench-acc-%'
ON CONFLICT (account_id) DO NOTHING;

INSERT INTO account_transaction (account_id, transaction_id, booking_date,
    value_date, amount_minor, currency, explanation)
SELECT a.id, a.resource_id || '-tx-' || m, current_date - m / 3,
    current_date - m / 3, (m * 731 % 20000) - 10000, 'EUR', 'Bench ' || m
FROM account a, generate_series(1, :txn) m
WHERE a.resource_id LIKE 'bench-acc-%'
ON CONFLICT (transaction_id) DO NOTHING;

INSERT INTO consent (id, psu_id, client_id, scopes, valid_until, sca_at)
SELECT md5('bench-consent-' || a.resource_id)::uuid, a.psu_id, 'sandbox-tpp',
    '{ACCOUNT_INFORMATION}', current_date + 90, now()
FROM account a WHERE a.resource_id LIKE 'bench-acc-%'
ON CONFLICT (id) DO UPDATE SET status = 'valid', sca_at = now(),
    valid_until = current_date + 90;

INSERT INTO consent_account (consent_id, account_id)
SELECT md5('bench-consent-' || a.resource_id)::uuid, a.id
FROM account a WHERE a.resource_id LIKE 'bench-acc-%'
ON CONFLICT DO NOTHING;

-- Spent history, once: 20 families per consent, each an access and a
-- used refresh token, expired.
INSERT INTO token (token_hash, kind, family, client_id, consent_id, scopes,
    expires_at, used_at)
SELECT sha256(convert_to(c.id::text || '-' || f || k, 'UTF8')), k, fam,
    'sandbox-tpp', c.id, '{ACCOUNT_INFORMATION}', now() - interval '1 day',
    CASE k WHEN 'refresh' THEN now() - interval '1 day' END
FROM consent c, generate_series(1, 20) f,
    LATERAL (SELECT md5(c.id::text || f)::uuid AS fam) x,
    unnest('{access,refresh}'::text[]) k
WHERE c.client_id = 'sandbox-tpp' AND c.psu_id IN
    (SELECT id FROM psu WHERE username LIKE 'bench-psu-%')
    AND NOT EXISTS (SELECT 1 FROM token h WHERE h.family = md5(c.id::text || '1')::uuid)
ON CONFLICT (token_hash) DO NOTHING;
ANALYZE psu, account, balance, account_transaction, consent, consent_account, token;
