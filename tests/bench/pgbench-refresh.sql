-- The write pattern of one refresh grant: spend the old refresh token,
-- insert a new access and refresh token, one durable commit.
\set n random(1, 1000000000)
BEGIN;
UPDATE bench_token SET used_at = now() WHERE token_hash = sha256(int8send(:n));
INSERT INTO bench_token (token_hash, used_at) VALUES
  (sha256(int8send(:n) || '\x01'::bytea), NULL),
  (sha256(int8send(:n) || '\x02'::bytea), NULL)
  ON CONFLICT DO NOTHING;
COMMIT;
