-- The write pattern of one refresh grant, against a table shaped like
-- token (same columns, checks and indexes; no foreign keys): spend the
-- old refresh token, insert a new access and refresh token, one durable
-- commit.
\set n random(1, 1000000000)
BEGIN;
UPDATE bench_token SET used_at = now() WHERE token_hash = sha256(int8send(:n));
INSERT INTO bench_token (token_hash, kind, family, client_id, consent_id,
    scopes, expires_at) VALUES
  (sha256(int8send(:n) || '\x01'::bytea), 'access',
   '00000000-0000-4000-8000-0000000bec01', 'sandbox-tpp',
   '00000000-0000-4000-8000-0000000bec01', '{ACCOUNT_INFORMATION}',
   now() + interval '15 minutes'),
  (sha256(int8send(:n) || '\x02'::bytea), 'refresh',
   '00000000-0000-4000-8000-0000000bec01', 'sandbox-tpp',
   '00000000-0000-4000-8000-0000000bec01', '{ACCOUNT_INFORMATION}',
   now() + interval '90 days')
  ON CONFLICT DO NOTHING;
COMMIT;
