-- A payment confirmation as the decider commits it (src/pis/decide.c,
-- after the device's signature verified): pis_decide() locks the payment
-- and challenge, raises the device's counter, sets ACTC and finalised,
-- and inserts the outcome's audit row (unless tests/bench/pis.sh replaced
-- pis_audit_sca with a no-op for the comparison). Client c decides its
-- own prepared outcomes k = c * n + 1, + 2, ... (bench_confirm), counters
-- increasing on its own device; anything but ACTC fails the run.
\set i :i + 1
\set k :client_id * :n + :i
SELECT 1 / (pis_decide(b.payment_id, b.challenge_id, p.xmin::text,
    c.xmin::text, NULL, NULL, :k) = 'ACTC')::integer
FROM bench_confirm b
JOIN payment p ON p.id = b.payment_id
JOIN device_challenge c ON c.id = b.challenge_id
WHERE b.k = :k;
