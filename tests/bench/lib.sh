# Shared by the bench scripts (sourced). The bench runs inside its own
# PostgreSQL cluster (var/pg-bench, `tests/pgcluster.sh run`, PGPORT set).

PSQL="psql -X -qAt -h 127.0.0.1 -p $PGPORT -U psd2gate -d psd2gate"
BENCH_FAILED=

# Everything a bench started that must not outlive it: psd2gate parents
# (each stops its workers on TERM), HAProxies, helper loops (the sealer
# loop of tests/bench/pis.sh). bench.sh's traps call bench_cleanup however
# the run ends; a section that stops its own calls bench_stop.
BENCH_GATES=
BENCH_PROXIES=
BENCH_HELPERS=

# bench_stop PID...: stops each (TERM, then waits for it) and forgets it.
# Never fails: under set -e a kill of a process that is already gone
# (status 1) or a wait answering 143 would end the whole bench.
bench_stop() {
	for p in "$@"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		BENCH_GATES=$(bench_without "$p" $BENCH_GATES)
		BENCH_PROXIES=$(bench_without "$p" $BENCH_PROXIES)
		BENCH_HELPERS=$(bench_without "$p" $BENCH_HELPERS)
	done
}

# bench_without PID LIST...: LIST without PID.
bench_without() {
	drop=$1
	shift
	for q in "$@"; do
		[ "$q" = "$drop" ] || printf '%s ' "$q"
	done
}

# bench_cleanup: stops whatever is still running (helpers first, then the
# proxies, then the instances) and removes the bench's configurations.
bench_cleanup() {
	trap '' TERM INT
	bench_stop $BENCH_HELPERS $BENCH_PROXIES $BENCH_GATES
	rm -f conf/bench-gate.conf conf/bench-whole.conf conf/bench-half1.conf \
	    conf/bench-half2.conf conf/bench-plain.conf \
	    conf/bench-wholeplain.conf conf/bench-nokpi.conf
}

# bench_fail WHAT: notes a failed measurement; bench.sh exits 1 at the end.
bench_fail() {
	echo "FAILED: $1" >&2
	BENCH_FAILED="$BENCH_FAILED
  $1"
}

# bench_conf FILE PORT SIGNING [WORKERS]: the sandbox configuration on PORT and the
# bench cluster, no login rate limit, signatures required unless SIGNING
# is "no"; then unsigned requests hold the AIS role only (they hold none
# unless a configuration names it). WORKERS also unpins the workers.
bench_conf() {
	# No staff listener (conf/staff.conf): two instances would both bind it.
	# The metrics listener (conf/metrics.conf) on a free port of its own,
	# 100 above: never one of BENCH_PORTS, which the instances and the
	# HAProxies of the full run need all of (six instances, two proxies).
	mport=$(sh tests/port.sh free $(( $2 + 100 )) $(( $2 + 120 )))
	sed -e '/^server staff {/,/^}/d' \
	    -e '/^domain \* {$/{N;/attach[[:space:]]*staff/{N;N;d;};}' \
	    -e "s/127.0.0.1 8080/127.0.0.1 $2/" \
	    -e "s/127.0.0.1 9464/127.0.0.1 $mport/" \
	    -e "s/port=54329/port=$PGPORT/" \
	    -e 's/^psd2_login_rate_per_minute.*/psd2_login_rate_per_minute	0/' \
	    -e "s/^psd2_signing_required.*/psd2_signing_required	$3/" \
	    conf/sandbox.conf > "$1"
	if grep -v '^#' "$1" | grep -Eq 'staff[ {]|staff\.conf'; then
		echo "bench_conf: the staff listener is still in $1" >&2
		return 1
	fi
	grep -q "^psd2_signing_required	$3" "$1" ||
	    printf 'psd2_signing_required\t%s\n' "$3" >> "$1"
	[ "$3" = no ] && printf 'psd2_unsigned_roles\tPSP_AI\n' >> "$1"
	# Extra psd2_ lines of one instance (BENCH_ONLY=kpi: recording off).
	[ -n "${BENCH_CONF_EXTRA:-}" ] && printf '%s\n' "$BENCH_CONF_EXTRA" >> "$1"
	if [ -n "${4:-}" ]; then
		sed -i "s/^workers[[:space:]].*/workers\t\t$4/" "$1"
		# Instances that share a machine: Kore pins worker N of every
		# instance to the same core (worker 1 of two one-worker
		# instances both on core 1), so these float instead.
		printf 'worker_set_affinity\t0\n' >> "$1"
	fi
	return 0
}

# bench_instance NAME SIGNING [WORKERS]: starts a sandbox psd2gate for load on a
# free port of BENCH_PORTS (no login rate limit; request signatures
# required unless SIGNING is "no"; the bench cluster's port), its
# configuration in conf/bench-NAME.conf (conf/, for the relative
# includes). Sets NAME_pid and NAME_base; waits for /health.
bench_instance() {
	name=$1
	port=$(sh tests/port.sh free ${BENCH_PORTS:-18088 18099})
	conf=conf/bench-$name.conf
	bench_conf "$conf" "$port" "$2" "${3:-}"
	# Instances on one host: each its own name in the KPI minutes.
	printf 'psd2_instance\tbench-%s\n' "$name" >> "$conf"
	"$BIN/psd2gate" -c "$conf" -f -n -r -q > "$OUT/server-$name.log" 2>&1 &
	eval "${name}_pid=$!; ${name}_base=http://127.0.0.1:$port"
	BENCH_GATES="$BENCH_GATES $!"
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "bench: psd2gate $name on port $port did not start (see $OUT/server-$name.log)" >&2
	return 1
}

# bench_pss NAME: each worker's proportional set size (PSS, from
# /proc/PID/smaps_rollup) of instance NAME; workers above 20 MB fail the
# run (the target once a burst is over).
bench_pss() {
	eval "pid=\$${1}_pid"
	line=""
	for w in $(pgrep -P "$pid"); do
		kb=$(sed -n 's/^Pss: *\([0-9]*\) kB/\1/p' "/proc/$w/smaps_rollup" 2>/dev/null)
		[ -n "$kb" ] || continue
		line="$line $(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')"
		[ "$kb" -gt 20480 ] && bench_fail "$1 worker $w holds $kb kB PSS (target < 20 MB)"
	done
	printf '%-34s %s\n' "  PSS of $1's workers (MB):" "${line:- none found}"
}

# bench_row NAME CONNS RESULT-LINE: prints one row; a run with any non-2xx
# answer or socket error is a failed measurement.
bench_row() {
	set -- "$1" "$2" $3
	printf '%-34s %6s conns %10s req/s %9s ms p99 %6s non-2xx %4s sock-err\n' \
	    "$1" "$2" "$4" "$5" "$6" "$7"
	if [ "$4" = 0 ] || [ "$6" != 0 ] || [ "$7" != 0 ]; then
		bench_fail "$1: $4 ok req/s, $6 non-2xx answers, $7 socket errors"
	fi
}

# bench_wrk NAME CONNS wrk-args...: one wrk run; sets RES to its 2xx rate.
bench_wrk() {
	name=$1 conns=$2
	shift 2
	# A slow answer is latency (p99 shows it), not a socket error.
	wrk -t"$WRK_THREADS" -c"$conns" -d"${SECS}s" --timeout 10s --latency "$@" \
	    > "$OUT/wrk.out" 2>&1
	sed -n '/^first non-2xx/p; /Socket errors/p' "$OUT/wrk.out" >&2
	res=$(grep '^RESULT' "$OUT/wrk.out" || echo "RESULT 0 0 0 0")
	RES=$(echo "$res" | cut -d' ' -f2)
	bench_row "$name" "$conns" "$res"
}

# bench_database PSUS TXN: a new psd2gate database in the bench cluster:
# the test certificates, conf/bench-gate.conf, keys, migrations, the
# sandbox seed, the template PSU (password BENCH_PW) and
# tests/bench/data.sql with PSUS PSUs and TXN transactions per account.
BENCH_PW=bench-password-1
bench_database() {
	psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
	    -c "DROP DATABASE IF EXISTS psd2gate WITH (FORCE)" \
	    -c "CREATE DATABASE psd2gate OWNER psd2gate"
	sh tests/pki/mint.sh sandbox var/sandbox >/dev/null
	bench_conf conf/bench-gate.conf 8080 yes
	for step in keys-init migrate sandbox-seed; do
		"$BIN/psd2ctl" -c conf/bench-gate.conf "$step" >/dev/null \
		    2>"$OUT/ctl.err" || { cat "$OUT/ctl.err" >&2; return 1; }
	done
	"$BIN/psd2ctl" -c conf/bench-gate.conf psu add bench-template \
	    --password "$BENCH_PW" --totp-secret JBSWY3DPEHPK3PXP \
	    --name "Bench Template" >/dev/null
	$PSQL -v psus="$1" -v txn="$2" -f tests/bench/data.sql
}

# bench_devices: an active authenticator for every bench PSU (no daemon
# drives them: the challenges made for them wait for their deadline).
bench_devices() {
	$PSQL <<'SQL'
INSERT INTO device (serial, model, firmware, public_key, attestation,
    attestation_ok, host, status, psu_id, enrolled_at)
SELECT 'BENCH' || substr(p.username, 11), 'bench', '1',
    '\x04'::bytea || sha256(convert_to(p.username, 'UTF8'))
	|| sha256(convert_to(p.username || '.', 'UTF8')),
    '\x00'::bytea, true, 'bench', 'active', p.id, now()
FROM psu p WHERE p.username LIKE 'bench-psu-%'
ON CONFLICT (serial) DO NOTHING;
SQL
}

# bench_access_tokens FILE [JKT]: a fresh access token for each bench
# consent, "token<TAB>account resource id<TAB>consent id" per line
# (stored as SHA-256, as the service does); with JKT bound to that DPoP
# key (token.cnf "jkt:JKT") and the others kept, else replacing the bench
# consents' live access tokens.
bench_access_tokens() {
	if [ -n "${2:-}" ]; then
		cnf="'jkt:$2'"
		purge=
	else
		cnf=NULL
		purge="DELETE FROM token t USING consent c WHERE t.consent_id = c.id
    AND t.kind = 'access' AND t.expires_at > now()
    AND c.psu_id IN (SELECT id FROM psu WHERE username LIKE 'bench-psu-%');"
	fi
	$PSQL > "$1" <<SQL
$purge
CREATE TEMP TABLE t AS
SELECT gen_random_uuid()::text AS tok, ca.consent_id, a.resource_id
FROM consent_account ca JOIN account a ON a.id = ca.account_id
WHERE a.resource_id LIKE 'bench-acc-%';
INSERT INTO token (token_hash, kind, family, client_id, consent_id, scopes,
    expires_at, cnf)
SELECT sha256(convert_to(tok, 'UTF8')), 'access', gen_random_uuid(),
    'sandbox-tpp', consent_id, '{ACCOUNT_INFORMATION}',
    now() + interval '1 hour', $cnf FROM t;
SELECT tok || E'\t' || resource_id || E'\t' || consent_id FROM t;
SQL
}

# bench_pool SIGNED|UNSIGNED KIND COUNT: presigns COUNT requests into
# $OUT/pool; remembers when (signed ones must be sent within the clock
# skew of that moment).
bench_pool() {
	POOL_AT=$(date +%s)
	/usr/bin/python3 tests/bench/presign.py "$1" "$2" "$OUT/tokens-ais" \
	    "$3" "$OUT/pool"
}

# bench_fresh: the signed pool of the last bench_pool must still be
# within the service's clock skew (psd2_clock_skew) when a run ends.
bench_fresh() {
	age=$(( $(date +%s) - POOL_AT ))
	if [ "$age" -ge "$SKEW" ]; then
		bench_fail "$1: the pool was $age s old at the end, beyond the $SKEW s clock skew"
	fi
}

# bench_surfaces KIND: the account information KIND (list, transactions)
# on both surfaces, same wrk settings, accounts, consents and tokens
# ($OUT/tokens-ais: a contract consent's token with its id as Consent-ID
# works on /xs2a too); then the standard interface's cost per request
# over the contract's, target at most 10% more (the interface is a second
# face of the same calls: its cost is the driver, the other JSON and the
# consent's extra checks, never a second round trip). In the order
# contract, standard, standard, contract, each surface's rate the mean of
# its two runs: every run adds access records and replay marks, so a
# later run meets bigger tables, and a single pair would charge that to
# whichever surface ran second.
bench_surfaces() {
	failed_before=$BENCH_FAILED
	bench_surface_run "AIS $1 (signed)" "$1"
	c1=$RES
	bench_surface_run "xs2a $1 (signed)" "xs2a-$1"
	s1=$RES
	bench_surface_run "xs2a $1 (signed, again)" "xs2a-$1"
	s2=$RES
	bench_surface_run "AIS $1 (signed, again)" "$1"
	c2=$RES
	if [ "$BENCH_FAILED" != "$failed_before" ]; then
		echo "xs2a $1: overhead not measured (a run above failed)"
		return 0
	fi
	more=$(awk -v c1="$c1" -v c2="$c2" -v s1="$s1" -v s2="$s2" \
	    'BEGIN { printf "%.1f", 100 * ((c1 + c2) / (s1 + s2) - 1) }')
	if awk -v m="$more" 'BEGIN { exit !(m <= 10) }'; then
		echo "xs2a $1: $more% more per request than the contract's (target <= 10%): ok"
	else
		echo "xs2a $1: $more% more per request than the contract's (target <= 10%): OVER TARGET"
		bench_fail "xs2a $1: $more% more per request than the contract's (target <= 10%)"
	fi
}

# bench_surface_run LABEL POOLKIND: one signed run from a fresh pool; its
# rate in RES.
bench_surface_run() {
	bench_pool signed "$2" "$POOLN"
	POOL=$OUT/pool bench_wrk "$1" "$CONNS" -s tests/bench/pool.lua "$gate_base"
	bench_fresh "$1"
	bench_pss gate
}

# bench_end: the closing line; exits 1 if any measurement failed.
bench_end() {
	if [ -n "$BENCH_FAILED" ]; then
		echo "bench: FAILED measurements:$BENCH_FAILED" >&2
		exit 1
	fi
	echo "bench: every measurement clean"
}

# --- the reference: node oidc-provider, in memory ---------------------------
# tests/bench/oidc-provider: its package.json and package-lock.json (npm
# installs exactly those versions) and server.mjs (one confidential client,
# refresh tokens not rotated, no ID token on refresh, tokens seeded at
# start-up). Installed by npm ci into var/bench/oidc-provider, again only
# when the lock changes. A bench without its reference measures nothing
# to compare: an install that fails fails the bench.
OIDC_SRC=tests/bench/oidc-provider
OIDC_DIR=var/bench/oidc-provider
OIDC_BASIC=$(printf 'bench-tpp:bench-secret' | base64)
# The default in-memory adapter is an LRU of 1000 entries in two
# generations (oidc-provider's lib/adapters/memory_adapter.js, helpers/
# lru.js): an entry not read again within 1000 to 2000 insertions is
# forgotten. A refresh grant inserts up to four (the new access token, and
# the grant's member list, the refresh token and the grant moved back to
# the young generation), so a refresh token must come back within about
# 250 grants, with wrk's two threads going round their halves of the pool
# at their own speeds. 200 accounts lost one refresh token in a run (196
# answers 400); 100 keep a margin of two.
OIDC_ACCOUNTS=${BENCH_OIDC_ACCOUNTS:-100}

# oidc_install: node and npm present, the locked packages in OIDC_DIR.
oidc_install() {
	for t in node npm; do
		command -v "$t" >/dev/null 2>&1 && continue
		echo "bench: $t not found: the oidc-provider reference rows need Node.js 20 or later and npm (Debian: nodejs npm)" >&2
		return 1
	done
	mkdir -p "$OIDC_DIR"
	cp "$OIDC_SRC/server.mjs" "$OIDC_DIR/"
	if cmp -s "$OIDC_SRC/package-lock.json" "$OIDC_DIR/.installed" &&
	    [ -f "$OIDC_DIR/node_modules/oidc-provider/package.json" ]; then
		return 0
	fi
	rm -f "$OIDC_DIR/.installed"
	cp "$OIDC_SRC/package.json" "$OIDC_SRC/package-lock.json" "$OIDC_DIR/"
	if ! (cd "$OIDC_DIR" && npm ci --no-audit --no-fund --ignore-scripts) \
	    > "$OUT/npm.log" 2>&1; then
		tail -n 20 "$OUT/npm.log" >&2
		echo "bench: npm ci of the oidc-provider reference failed (see $OUT/npm.log); no reference, no measurement" >&2
		return 1
	fi
	cp "$OIDC_SRC/package-lock.json" "$OIDC_DIR/.installed"
	echo "oidc-provider $(node -p 'require(process.argv[1]).version' \
	    "$PWD/$OIDC_DIR/node_modules/oidc-provider/package.json") installed in $OIDC_DIR (node $(node --version))"
}

# oidc_start: a fresh reference process on a free port of BENCH_PORTS, its
# tokens seeded into $OUT/oidc-refresh-tokens and $OUT/oidc-access-tokens;
# sets oidc_pid and oidc_base; then one refresh grant and one userinfo
# call must answer 200 in the expected shape (an access token, the same
# refresh token, no ID token; the account's sub). A process per row: a
# refresh run's writes push the seeded access tokens out of the LRU.
oidc_start() {
	port=$(sh tests/port.sh free ${BENCH_PORTS:-18088 18099})
	NODE_ENV=production node "$OIDC_DIR/server.mjs" "$port" "$OUT" \
	    "$OIDC_ACCOUNTS" > "$OUT/oidc-provider.log" 2>&1 &
	oidc_pid=$!
	oidc_base=http://127.0.0.1:$port
	BENCH_HELPERS="$BENCH_HELPERS $oidc_pid"
	for _ in $(seq 100); do
		grep -qx ready "$OUT/oidc-provider.log" && break
		kill -0 "$oidc_pid" 2>/dev/null || break
		sleep 0.2
	done
	if ! grep -qx ready "$OUT/oidc-provider.log"; then
		cat "$OUT/oidc-provider.log" >&2
		echo "bench: oidc-provider on port $port did not start (see $OUT/oidc-provider.log)" >&2
		return 1
	fi
	rt=$(head -n 1 "$OUT/oidc-refresh-tokens")
	at=$(head -n 1 "$OUT/oidc-access-tokens")
	code=$(curl -s -o "$OUT/oidc-check.json" -w '%{http_code}' \
	    -H "Authorization: Basic $OIDC_BASIC" \
	    -d grant_type=refresh_token -d "refresh_token=$rt" "$oidc_base/token") || true
	if [ "$code" != 200 ] || ! /usr/bin/python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
sys.exit(not (b.get("access_token") and b.get("token_type") == "Bearer"
    and b.get("refresh_token") == sys.argv[2] and "id_token" not in b))
' "$OUT/oidc-check.json" "$rt"; then
		echo "bench: oidc-provider's refresh grant answered $code: $(head -c 300 "$OUT/oidc-check.json")" >&2
		echo "  (expected 200, an access token, the same refresh token, no id_token)" >&2
		return 1
	fi
	code=$(curl -s -o "$OUT/oidc-check.json" -w '%{http_code}' \
	    -H "Authorization: Bearer $at" "$oidc_base/me") || true
	if [ "$code" != 200 ] || ! /usr/bin/python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1])).get("sub") != "bench-psu-00001")
' "$OUT/oidc-check.json"; then
		echo "bench: oidc-provider's userinfo answered $code: $(head -c 300 "$OUT/oidc-check.json")" >&2
		echo "  (expected 200 and the first account's sub)" >&2
		return 1
	fi
}

# oidc_warm CONNS wrk-args...: 3 s of the same load, not counted: a fresh
# node process compiles its hot paths during its first seconds (without
# this, the userinfo row's p99 was 205 ms, mostly the first second).
oidc_warm() {
	conns=$1
	shift
	wrk -t"$WRK_THREADS" -c"$conns" -d3s --timeout 10s "$@" \
	    > "$OUT/wrk-warm.out" 2>&1
}

# oidc_rss: the reference process's resident set (no workers: one process).
oidc_rss() {
	kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$oidc_pid/status" 2>/dev/null)
	if [ -z "$kb" ]; then
		bench_fail "oidc-provider (pid $oidc_pid) gone before its RSS was read"
		return 0
	fi
	printf '%-34s %s\n' "  RSS of oidc-provider (MB):" \
	    "$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')"
}

# bench_oidc_refresh: the reference's refresh grant, psd2gate's refresh
# row's settings (32 connections, tests/bench/refresh.lua); its refresh
# tokens are not rotated, so each thread goes round its share of them.
bench_oidc_refresh() {
	oidc_start
	TOKENS=$OUT/oidc-refresh-tokens REUSE=1 TOKEN_PATH=/token BASIC=$OIDC_BASIC \
	    oidc_warm 32 -s tests/bench/refresh.lua "$oidc_base"
	TOKENS=$OUT/oidc-refresh-tokens REUSE=1 TOKEN_PATH=/token BASIC=$OIDC_BASIC \
	    bench_wrk "oidc-provider refresh, not rotated" 32 \
	    -s tests/bench/refresh.lua "$oidc_base"
	oidc_rss
	bench_stop "$oidc_pid"
}

# bench_oidc_userinfo: the reference's userinfo (GET /me, a bearer access
# token, round robin over the seeded ones), the signed account list's
# settings (CONNS connections, tests/bench/pool.lua).
bench_oidc_userinfo() {
	oidc_start
	sed 's|^|/me	Authorization: Bearer |' "$OUT/oidc-access-tokens" \
	    > "$OUT/pool-oidc"
	POOL=$OUT/pool-oidc oidc_warm "$CONNS" -s tests/bench/pool.lua "$oidc_base"
	POOL=$OUT/pool-oidc bench_wrk "oidc-provider userinfo (in memory)" \
	    "$CONNS" -s tests/bench/pool.lua "$oidc_base"
	oidc_rss
	bench_stop "$oidc_pid"
}
