# Payment figures of make bench, sourced by
# tests/bench/bench.sh after the other figures (the signed initiation
# against pgbench is bench.sh's own section), with the "gate" instance
# running (gate_base, gate_pid) in the bench cluster.
#
# 1. Press to decided: tests/bench/pis_press.py (50 emulated devices).
# 2. Audit appends under concurrent confirmations: pgbench runs the
#    decider's own statement (pis_decide, which sets ACTC and inserts the
#    audit row of the outcome) on prepared outcomes, with the audit row
#    (and a sealer chaining rows every 2 s with the statement of the
#    sandbox's timer, audit_seal(10000))
#    and without it (pis_audit_sca and pis_audit_confirmed replaced by
#    no-ops in this throwaway
#    database), alternating on, off three times; cost = 1 - median(on) /
#    median(off). Target: at most 10%. The signature check before
#    pis_decide is the same C work either way, so it is left out of both.

# The first bench PSUs' accounts and consents, for prepared outcomes (their
# authenticators are bench.sh's stand-ins, BENCH00001 ...); and no payment
# of an earlier section left to reach its deadline during these runs.
pis_setup() {
	pis_clear
	$PSQL <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_pis;
CREATE TABLE bench_pis AS
SELECT row_number() OVER (ORDER BY a.resource_id) - 1 AS c, a.iban,
    ca.consent_id
FROM consent_account ca JOIN account a ON a.id = ca.account_id
WHERE a.resource_id LIKE 'bench-acc-%';
ALTER TABLE bench_pis ADD PRIMARY KEY (c);
SQL
}

# The payments of a scenario, gone before the next (their deadlines would
# otherwise end them during later runs).
pis_clear() {
	$PSQL <<'SQL'
DELETE FROM payment_authorisation;
DELETE FROM device_challenge;
DELETE FROM payment;
SQL
}

# Prepared outcomes for pis_decide: per pgbench client c, n payments of
# bench PSU c + 1 on its device, each with a challenge 'done' (approved,
# counter k, increasing in the order client c decides them).
pis_outcomes() {
	$PSQL -v clients="$1" -v n="$2" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_confirm;
CREATE TABLE bench_confirm (k bigint PRIMARY KEY, c bigint,
    payment_id uuid, challenge_id uuid);
INSERT INTO bench_confirm
SELECT c * :n + i, c, gen_random_uuid(), gen_random_uuid()
FROM generate_series(0, :clients - 1) c, generate_series(1, :n) i;
INSERT INTO payment (id, product, psu_id, consent_id, client_id, tpp_id,
    debtor_account_id, debtor_iban, creditor_iban, creditor_name,
    amount_minor, currency)
SELECT b.payment_id, 'sepa-credit-transfers', a.psu_id, bp.consent_id,
    'sandbox-tpp', oc.tpp_id, a.id, a.iban, 'DE89370400440532013000',
    'Bench Creditor GmbH', 100, 'EUR'
FROM bench_confirm b
JOIN bench_pis bp ON bp.c = b.c
JOIN account a ON a.iban = bp.iban
JOIN oauth_client oc ON oc.client_id = 'sandbox-tpp';
INSERT INTO device_challenge (id, device_serial, psu_id, nonce,
    amount_minor, currency, payee_name, payee_iban, deadline, status,
    outcome, counter, signature, finished_at)
SELECT b.challenge_id, d.serial, p.psu_id, sha256(int8send(b.k)), 100,
    'EUR', 'Bench Creditor GmbH', 'DE89370400440532013000',
    now() + interval '1 hour', 'done', 'approved', b.k, '\x30'::bytea, now()
FROM bench_confirm b JOIN payment p ON p.id = b.payment_id
JOIN device d ON d.psu_id = p.psu_id;
INSERT INTO payment_authorisation (id, payment_id, approach, method,
    sca_status, challenge_id, deadline)
SELECT gen_random_uuid(), b.payment_id, 'decoupled', 'device', 'started', b.challenge_id,
    now() + interval '1 hour'
FROM bench_confirm b;
UPDATE device SET last_counter = 0 WHERE serial LIKE 'BENCH%';
ANALYZE payment, device_challenge, payment_authorisation, bench_confirm;
SQL
}

# pis_pg_ticks: CPU clock ticks the bench cluster has used so far: its
# backends that ended (the postmaster's cutime + cstime, it reaps them)
# and those alive. Per confirmation, this is the audit rows' cost on
# cores shared with other work, where the rate alone swings by 30%+.
pis_pg_ticks() {
	pm=$(head -n 1 "${PSD2_PGDIR:-var/pg-bench}/data/postmaster.pid" 2>/dev/null) ||
	    { echo 0; return; }
	t=$(awk '{ print $16 + $17 }' "/proc/$pm/stat")
	for c in $(pgrep -P "$pm"); do
		t=$(( t + $(awk '{ print $14 + $15 }' "/proc/$c/stat" 2>/dev/null || echo 0) ))
	done
	echo "$t"
}

# pis_waits LABEL: samples the active backends' wait events every 10 ms
# for the run's seconds, appends the counts to $OUT/waits-LABEL.txt
# (make bench-audit with BENCH_AUDIT_WAITS=1).
pis_waits() {
	$PSQL -v n=$(( SECS * 100 )) >> "$OUT/waits-$1.txt" <<'SQL'
CREATE TEMP TABLE w (t text);
SELECT set_config('bench.n', :'n', false) \g /dev/null
DO $$
BEGIN
	FOR i IN 1 .. current_setting('bench.n')::integer LOOP
		PERFORM pg_stat_clear_snapshot();
		INSERT INTO w SELECT coalesce(wait_event_type || ':' ||
		    wait_event, 'CPU') FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND state = 'active'
		    AND pid <> pg_backend_pid();
		PERFORM pg_sleep(0.01);
	END LOOP;
END
$$;
SELECT count(*) || E'	' || t FROM w GROUP BY t ORDER BY count(*) DESC;
SELECT '--';
SQL
}

# pis_confirm_run LABEL: one pgbench run of pis_decide; sets CONFIRM_RATE
# and CONFIRM_CPU (the cluster's CPU microseconds per confirmation, the
# sealer's included).
pis_confirm_run() {
	n=$(( SECS * 300 + 1500 ))
	pis_outcomes 16 "$n"
	# Each run from the same state: the previous run's payments vacuumed
	# away (same table sizes in both arms), a checkpoint (each run pays
	# the same full-page images after it), then 2 s of warm-up on the
	# first outcomes (connections, plans, caches), not counted.
	psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d psd2gate \
	    -c "VACUUM ANALYZE payment, payment_authorisation, device_challenge, device" \
	    -c "CHECKPOINT"
	sealer=
	if [ "$1" = on ]; then
		# The service timer's own statement (psd2ctl audit seal looks
		# at every row, for cron; the timer looks back 10,000 ids).
		( while :; do $PSQL -c "SELECT sealed FROM audit_seal(10000)" \
		    >/dev/null 2>&1; sleep 2; done ) &
		sealer=$!
		BENCH_HELPERS="$BENCH_HELPERS $sealer"
	fi
	/usr/lib/postgresql/*/bin/pgbench -n -h 127.0.0.1 -p "$PGPORT" -U psd2gate \
	    -c 16 -j 2 -T 2 -D i=0 -D n="$n" \
	    -f tests/bench/pgbench-confirm.sql psd2gate > "$OUT/pgbench-warm.out" 2>&1 ||
	    bench_fail "pgbench: confirmations warm-up, audit $1 (see $OUT/pgbench-warm.out)"
	rows=$($PSQL -c "SELECT count(*) FROM audit_log")
	waits=
	if [ -n "${BENCH_AUDIT_WAITS:-}" ]; then
		pis_waits "$1" &
		waits=$!
	fi
	t0=$(pis_pg_ticks)
	if /usr/lib/postgresql/*/bin/pgbench -n -h 127.0.0.1 -p "$PGPORT" -U psd2gate \
	    -c 16 -j 2 -T "$SECS" -D i=1000 -D n="$n" \
	    -f tests/bench/pgbench-confirm.sql psd2gate \
	    > "$OUT/pgbench-confirm.out" 2>&1; then
		CONFIRM_RATE=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$OUT/pgbench-confirm.out" | head -n 1)
	else
		tail -n 5 "$OUT/pgbench-confirm.out" >&2
		bench_fail "pgbench: confirmations, audit $1 (see $OUT/pgbench-confirm.out)"
		CONFIRM_RATE=0
	fi
	[ -z "$sealer" ] || bench_stop "$sealer"
	[ -z "$waits" ] || wait "$waits" || true
	sleep 0.5
	done=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' \
	    "$OUT/pgbench-confirm.out")
	CONFIRM_CPU=$(awk -v t=$(( $(pis_pg_ticks) - t0 )) -v n="${done:-0}" \
	    -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", n ? t / hz * 1e6 / n : 0 }')
	printf '%-34s %6s conns %10.0f tx/s   (audit rows written: %s; PostgreSQL CPU %s us/tx)\n' \
	    "pgbench: confirmations, audit $1" 16 "$CONFIRM_RATE" \
	    "$(( $($PSQL -c "SELECT count(*) FROM audit_log") - rows ))" \
	    "$CONFIRM_CPU"
	pis_clear
}

pis_audit_cost() {
	failed_before=$BENCH_FAILED
	audit_fn=$($PSQL -c "SELECT pg_get_functiondef('pis_audit_sca(uuid,text,text)'::regprocedure) || E';\n' || pg_get_functiondef('pis_audit_confirmed(uuid,text,text,text,bigint)'::regprocedure)")
	on= off= con= coff=
	for _ in 1 2 3; do
		pis_confirm_run on
		on="$on $CONFIRM_RATE" con="$con $CONFIRM_CPU"
		$PSQL -c "CREATE OR REPLACE FUNCTION pis_audit_sca(p_id uuid, p_reason text, p_detail text) RETURNS void LANGUAGE sql AS 'SELECT'" \
		    -c "CREATE OR REPLACE FUNCTION pis_audit_confirmed(p_id uuid, p_product text, p_method text, p_device text, p_psu_id bigint) RETURNS void LANGUAGE sql AS 'SELECT'"
		pis_confirm_run off
		off="$off $CONFIRM_RATE" coff="$coff $CONFIRM_CPU"
		printf '%s;\n' "$audit_fn" | $PSQL
	done
	if [ "$BENCH_FAILED" != "$failed_before" ]; then
		echo "audit cost: not measured (a run above failed)"
		return
	fi
	# Medians of the alternating runs: the cores are shared with whatever
	# else runs, so a single pair says little.
	med_on=$(echo $on | tr ' ' '\n' | sort -n | sed -n 2p)
	med_off=$(echo $off | tr ' ' '\n' | sort -n | sed -n 2p)
	cost=$(awk -v a="$med_on" -v o="$med_off" \
	    'BEGIN { printf "%.1f", 100 * (1 - a / o) }')
	# The same in CPU (what the rate follows on saturated cores), for the
	# reader: the pass or fail stays the rate's.
	cpu_on=$(echo $con | tr ' ' '\n' | sort -n | sed -n 2p)
	cpu_off=$(echo $coff | tr ' ' '\n' | sort -n | sed -n 2p)
	echo "audit cost in PostgreSQL CPU: median $cpu_on vs $cpu_off us per confirmation" \
	    "($(awk -v a="$cpu_on" -v o="$cpu_off" 'BEGIN { printf "%.1f", o ? 100 * (1 - o / a) : 0 }')% of the rate on saturated cores)"
	# The noise: every run, and the cost of each on/off pair.
	echo "audit cost runs: on$on tx/s; off$off tx/s; pairs:" \
	    "$(awk -v a="$on" -v o="$off" 'BEGIN { n = split(a, x, " ");
		split(o, y, " "); for (i = 1; i <= n; i++)
		    printf "%s%.1f%%", (i > 1 ? " " : ""), 100 * (1 - x[i] / y[i]) }')" \
	    "(2 cores shared with whatever else runs: load $(cut -d' ' -f1-3 /proc/loadavg))"
	if awk -v c="$cost" 'BEGIN { exit !(c <= 10) }'; then
		echo "audit cost: confirmations $cost% slower with audit rows (median $med_on vs $med_off tx/s; target <= 10%): ok"
	else
		echo "audit cost: confirmations $cost% slower with audit rows (median $med_on vs $med_off tx/s; target <= 10%): OVER TARGET"
		bench_fail "audit rows cost $cost% of the confirmation rate (target <= 10%)"
	fi
}

# Press to decided with 50 emulated authenticators (tests/bench/pis_press.py).
pis_press() {
	if PGPORT=$PGPORT /usr/bin/python3 tests/bench/pis_press.py "$gate_base" \
	    "$(pwd)/$OUT/emu" 50 3 > "$OUT/pis-press.out" 2>&1; then
		line=$(grep '^press ->' "$OUT/pis-press.out")
		echo "$line"
		p99=$(echo "$line" | sed -n 's/.*p99 \([0-9.]*\) ms,.*/\1/p')
		if ! awk -v v="$p99" 'BEGIN { exit !(v <= 100) }'; then
			bench_fail "press -> decided p99 $p99 ms beyond the 100 ms target"
		fi
	else
		tail -n 20 "$OUT/pis-press.out" >&2
		bench_fail "press -> decided (see $OUT/pis-press.out)"
	fi
	pis_clear
}
