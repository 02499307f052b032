-- What one refresh grant does to the database, on the bench's tables of
-- realistic size (tests/bench/data.sql): the service's own statement
-- (src/oauth/token.c sql_refresh), so the same rows are read (the
-- client, the consent), updated (the spent refresh token) and inserted
-- (new access and refresh token), one durable commit.
-- Client c spends the pool's tokens c*:per_client + 1, + 2, ... (made by
-- tests/bench/bench.sh as sha256 of the 8-byte number); anything but
-- 'ok' (an exhausted or reused token) divides by zero, which aborts the
-- client and fails the run.
\set i :i + 1
\set k :client_id * :per_client + :i
SELECT 1 / (g.result = 'ok')::integer
FROM oauth_refresh_grant_bound(sha256(int8send(:k)), 'sandbox-tpp',
    sha256(int8send(:k) || '\x01'::bytea),
    sha256(int8send(:k) || '\x02'::bytea), 900, NULL) g;
