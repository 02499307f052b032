# Sourced by tests/bench/bench.sh after the signed account-list runs (s1
# holds one instance's capacity there), on a database without the open
# payments of the initiation section (their deadlines passing, thousands
# of rejections by the sweeps, fell on whichever setup ran last): the
# same signed account list at a fixed rate of half that capacity (issue
# 11), median of 3 runs each, for one instance alone, one behind HAProxy,
# and two behind HAProxy (target: no more than 10% worse than one behind
# HAProxy, in p50 and p99), and HAProxy's CPU per request.
# The instances are this section's own, started together with the same
# settings and history: "whole" with two workers (alone and behind
# HAProxy), "half1" and "half2" with one each, so that the comparison
# holds the worker count (2, one per core) and shows what sharing the
# database between instances costs; two instances of two workers each on
# 2 cores would measure 4 processes contending for 2 cores instead. None
# is pinned to a core (bench_conf): Kore pins worker 1 of every instance
# to the same core. Each run starts after a checkpoint, and a first round
# that is not counted warms the setups (connection pools, caches). Shown
# besides, not a target: the two one-worker instances without HAProxy
# (a wrk each, at half the rate) against the one instance alone, which
# separates what sharing the database costs from what spreading requests
# over two servers through HAProxy costs.
# wrk paces with tests/bench/paced.lua (Debian has no wrk2); the
# machine's 2 cores are shared by wrk, HAProxy, the instances and
# PostgreSQL, so this compares latency, not throughput.

# bench_haproxy NAME PORT BACKEND-PORT...: HAProxy (round robin) in the
# foreground; sets NAME_hpid.
bench_haproxy() {
	name=$1 port=$2
	shift 2
	cfg=$OUT/haproxy-$name.cfg
	{
		printf 'global\n\tmaxconn 4096\n\ndefaults\n\tmode http\n'
		printf '\ttimeout connect 5s\n\ttimeout client 30s\n'
		printf '\ttimeout server 30s\n\toption http-keep-alive\n\n'
		printf 'frontend fe\n\tbind 127.0.0.1:%s\n\tdefault_backend be\n\n' "$port"
		printf 'backend be\n\tbalance roundrobin\n'
		i=0
		for p in "$@"; do
			i=$((i + 1))
			printf '\tserver s%d 127.0.0.1:%s\n' "$i" "$p"
		done
	} > "$cfg"
	/usr/sbin/haproxy -db -f "$cfg" > "$OUT/haproxy-$name.log" 2>&1 &
	eval "${name}_hpid=$!"
	BENCH_PROXIES="$BENCH_PROXIES $!"
	for _ in $(seq 50); do
		curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	bench_fail "HAProxy $name did not start (see $OUT/haproxy-$name.log)"
	return 1
}

# cpu_ticks PID: user + system clock ticks of PID so far.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# paced_run KEY NAME URL [HAPROXY-PID]: one run at RATE; appends its p50,
# p99 (and HAProxy's CPU per request) to KEY_p50s, KEY_p99s, KEY_cpu
# (KEY "warm": the warm-up round, checked for errors but not kept).
paced_run() {
	key=$1 name=$2 url=$3 hp=${4:-}
	bench_pool signed list $(( RATE * SECS * 12 / 10 + 1000 ))
	psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
	    -c CHECKPOINT
	[ -n "$hp" ] && t0=$(cpu_ticks "$hp")
	POOL=$OUT/pool RATE=$RATE wrk -t"$WRK_THREADS" -c"$PACED_CONNS" \
	    -d"${SECS}s" --timeout 10s -s tests/bench/paced.lua "$url" \
	    > "$OUT/wrk.out" 2>&1
	bench_fresh "$name"
	set -- $(grep '^PACED' "$OUT/wrk.out" || echo "PACED 0 0 0 0 0")
	if [ "$2" = 0 ] || [ "$5" != 0 ] || [ "$6" != 0 ]; then
		sed -n '/^first non-2xx/p' "$OUT/wrk.out" >&2
		bench_fail "$name: $2 ok req/s, $5 non-2xx, $6 socket errors"
	fi
	[ "$key" = warm ] && return 0
	eval "${key}_p50s=\"\$${key}_p50s $3\" ${key}_p99s=\"\$${key}_p99s $4\""
	if [ -n "$hp" ]; then
		ticks=$(( $(cpu_ticks "$hp") - t0 ))
		eval "${key}_cpu=\"\$${key}_cpu $(awk -v t="$ticks" \
		    -v hz="$(getconf CLK_TCK)" -v n="$(( $2 * SECS ))" \
		    'BEGIN { printf "%.0f", n ? t / hz * 1e6 / n : 0 }')\""
	fi
}

# paced_direct KEY: the two one-worker instances without HAProxy, each
# with a wrk of its own (one thread, half the connections) at RATE / 2 on
# its half of one signed pool, at the same time; appends the slower of
# the two p50s and p99s to KEY_p50s, KEY_p99s. Against "one instance
# alone" this shows what sharing the database costs without the load
# balancer's part.
paced_direct() {
	key=$1
	bench_pool signed list $(( RATE * SECS * 12 / 10 + 1000 ))
	awk 'NR % 2 == 1' "$OUT/pool" > "$OUT/pool1"
	awk 'NR % 2 == 0' "$OUT/pool" > "$OUT/pool2"
	psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
	    -c CHECKPOINT
	for i in 1 2; do
		eval "url=\$half${i}_base"
		POOL=$OUT/pool$i RATE=$(( RATE / 2 )) WRK_THREADS=1 wrk -t1 \
		    -c$(( PACED_CONNS / 2 )) -d"${SECS}s" --timeout 10s \
		    -s tests/bench/paced.lua "$url" > "$OUT/wrk$i.out" 2>&1 &
		eval "direct_wrk$i=\$!"
	done
	wait "$direct_wrk1" "$direct_wrk2" || true
	bench_fresh "two direct"
	worst50=0 worst99=0
	for i in 1 2; do
		set -- $(grep '^PACED' "$OUT/wrk$i.out" || echo "PACED 0 0 0 0 0")
		if [ "$2" = 0 ] || [ "$5" != 0 ] || [ "$6" != 0 ]; then
			sed -n '/^first non-2xx/p' "$OUT/wrk$i.out" >&2
			bench_fail "two direct (half$i): $2 ok req/s, $5 non-2xx, $6 socket errors"
		fi
		worst50=$(awk -v a="$worst50" -v b="$3" 'BEGIN { print (b > a ? b : a) }')
		worst99=$(awk -v a="$worst99" -v b="$4" 'BEGIN { print (b > a ? b : a) }')
	done
	[ "$key" = warm ] && return 0
	eval "${key}_p50s=\"\$${key}_p50s $worst50\" ${key}_p99s=\"\$${key}_p99s $worst99\""
}

# paced_report KEY NAME: the medians of KEY's 3 runs; sets P50 and P99.
paced_report() {
	eval "p50s=\$${1}_p50s p99s=\$${1}_p99s cpu_us=\${${1}_cpu:-}"
	P50=$(echo $p50s | tr ' ' '\n' | sort -n | sed -n 2p)
	P99=$(echo $p99s | tr ' ' '\n' | sort -n | sed -n 2p)
	line=$(printf '%-34s %6s req/s  p50 %7s ms  p99 %7s ms' "$2" \
	    "$RATE" "$P50" "$P99")
	if [ -n "$cpu_us" ]; then
		line="$line  HAProxy CPU $(echo $cpu_us | tr ' ' '\n' | sort -n | sed -n 2p) us/req"
	fi
	echo "$line   (median of 3; runs p50:$p50s, p99:$p99s)"
}

RATE=$(( ${s1:-0} / 2 ))
PACED_CONNS=${BENCH_PACED_CONNS:-32}
if [ "$RATE" -lt 10 ]; then
	bench_fail "fixed rate: no capacity measured for the signed account list"
else
	echo "fixed rate: signed account list at $RATE req/s (half of one instance's $s1)"
	bench_instance whole yes 2
	bench_instance half1 yes 1
	bench_instance half2 yes 1
	hp1_port=$(sh tests/port.sh free ${BENCH_PORTS:-18088 18099})
	bench_haproxy one "$hp1_port" "${whole_base##*:}"
	hp2_port=$(sh tests/port.sh free ${BENCH_PORTS:-18088 18099})
	bench_haproxy two "$hp2_port" "${half1_base##*:}" "${half2_base##*:}"
	# The three setups take turns, run by run: background load that
	# drifts (this machine's cores are shared) then falls on all three
	# alike, not on whichever was measured last.
	alone_p50s= alone_p99s= one_p50s= one_p99s= one_cpu= two_p50s= two_p99s= two_cpu=
	direct_p50s= direct_p99s=
	for round in warm 1 2 3; do
		if [ "$round" = warm ]; then a=warm o=warm t=warm d=warm
		else a=alone o=one t=two d=direct; fi
		paced_run $a "one instance alone" "$whole_base"
		paced_direct $d
		paced_run $o "one behind HAProxy" "http://127.0.0.1:$hp1_port" "$one_hpid"
		paced_run $t "two behind HAProxy" "http://127.0.0.1:$hp2_port" "$two_hpid"
	done
	paced_report alone "one instance alone"
	alone50=$P50 alone99=$P99
	paced_report direct "two (1 worker each), no HAProxy"
	awk -v a="$P50" -v b="$alone50" -v c="$P99" -v d="$alone99" \
	    'BEGIN { printf "two instances vs one, without HAProxy (the slower instance): p50 %+.0f%%, p99 %+.0f%% (shown, not a target)\n", 100 * (a / b - 1), 100 * (c / d - 1) }'
	paced_report one "one behind HAProxy"
	one50=$P50 one99=$P99
	paced_report two "two (1 worker each) behind HAProxy"
	if awk -v a="$P50" -v b="$one50" -v c="$P99" -v d="$one99" \
	    'BEGIN { exit !(a <= 1.1 * b && c <= 1.1 * d) }'; then
		echo "two instances vs one, both behind HAProxy: within 10%: ok"
	else
		echo "two instances vs one, both behind HAProxy: MORE THAN 10% WORSE"
		bench_fail "two behind HAProxy: p50 $P50 / p99 $P99 ms vs $one50 / $one99 ms for one"
	fi
	bench_pss whole
	bench_pss half1
	bench_pss half2
	# Stopped here, not only by bench.sh's trap: nothing of this section
	# may outlive it. bench_stop also forgets them: a second kill of a
	# process already gone fails (status 1), and under set -e that ended
	# the whole bench after the press figure.
	bench_stop $one_hpid $two_hpid $whole_pid $half1_pid $half2_pid
fi
