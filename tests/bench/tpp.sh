#!/bin/sh
# TPP identity benchmark (issue 4): the account list with and without the
# request signature, side by side on the same instance, token and data.
# Both kinds come from pools prepared before their run and are sent by the
# same wrk script (tests/bench/tpp.lua), so wrk costs the same on both
# sides: unsigned ones with a fresh x-request-id each, signed ones
# pre-signed with the RSA-2048 QSealC of the sandbox (draft-cavage
# rsa-sha256 over digest, x-request-id and date). The difference is what
# the service spends on verification: parsing, digest, the certificate
# (cached by fingerprint) and one RSA signature check. Order: unsigned, signed, unsigned again; the
# cost is 1 - signed / mean(unsigned). Target: at most 20%.
#
# Runs its own instance of conf/sandbox.conf on 127.0.0.1:18089 (signing
# optional, so both kinds are served); BENCH_SECONDS (default 10) per run,
# BENCH_CONNS (default 64) connections, 2 wrk threads.
set -eu
cd "$(dirname "$0")/../.."
BIN=${PSD2_BIN_DIR:-build/bin}
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS:-64}
OUT=var/bench
PORT=18089
BASE=http://127.0.0.1:$PORT
CONF=conf/bench-tpp.conf
POOL=var/bench/tpp-pool.txt
UPOOL=var/bench/tpp-pool-unsigned.txt
PSQL="psql -X -qAt -h 127.0.0.1 -p 54329 -U psd2gate -d psd2gate"
. tests/bench/lib.sh
LIST=/auth/v1/psd2/account/account-list
mkdir -p "$OUT"

gate=
if [ -n "${BENCH_BASE:-}" ]; then
	BASE=$BENCH_BASE
	trap 'rm -f "$POOL" "$UPOOL"' EXIT INT TERM
else
	trap 'kill $gate 2>/dev/null; wait $gate 2>/dev/null; rm -f "$CONF" "$POOL" "$UPOOL"' \
	    EXIT INT TERM
	bench_instance "$PORT" "$CONF" "$OUT/tpp-server.log"
fi

# anna's consent with SCA "now" (PSU present: no unattended limit) and a
# token of the sandbox TPP, stored as its SHA-256 like the service does.
CONSENT=00000000-0000-4000-8000-0000000a1544
TOKEN=$(bench_access_token "$CONSENT")
export AIS_TOKEN="$TOKEN" AIS_PATH="$LIST" TPP_POOL="$POOL" TPP_THREADS=2

presign() {	# count [unsigned]
	/usr/bin/python3 - "$1" "${2:+$UPOOL}" "$POOL" <<'PY'
import base64, email.utils, hashlib, multiprocessing, sys, uuid
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

crt = open("var/sandbox/tpp.crt", "rb").read()
key = serialization.load_pem_private_key(
    open("var/sandbox/tpp.key", "rb").read(), None)
cert = x509.load_pem_x509_certificate(crt)
cert_b64 = base64.b64encode(cert.public_bytes(
    serialization.Encoding.DER)).decode()
key_id = "SN=%x,CA=%s" % (cert.serial_number, cert.issuer.rfc4514_string())
digest = "SHA-256=" + base64.b64encode(hashlib.sha256(b"").digest()).decode()

def unsigned(_):
    return "X-Request-ID: " + str(uuid.uuid4())

def one(_):
    rid = str(uuid.uuid4())
    date = email.utils.formatdate(usegmt=True)
    s = "digest: %s\nx-request-id: %s\ndate: %s" % (digest, rid, date)
    sig = base64.b64encode(key.sign(s.encode(), padding.PKCS1v15(),
                                    hashes.SHA256())).decode()
    return "\t".join((
        "Digest: " + digest, "X-Request-ID: " + rid, "Date: " + date,
        "TPP-Signing-Certificate: " + cert_b64,
        'Signature: keyId="%s",algorithm="rsa-sha256",headers="digest '
        'x-request-id date",signature="%s"' % (key_id, sig)))

n = int(sys.argv[1])
fn, path = (unsigned, sys.argv[2]) if sys.argv[2] else (one, sys.argv[3])
with multiprocessing.Pool() as p, open(path, "w") as f:
    for line in p.imap(fn, range(n), chunksize=500):
        f.write(line + "\n")
PY
}

check() {	# expect 200 from a signed and an unsigned call
	presign 1
	code=$(curl -s -o /dev/null -w '%{http_code}' \
	    -H "Authorization: Bearer $TOKEN" "$BASE$LIST")
	[ "$code" = 200 ] || { echo "tpp bench: unsigned answered $code" >&2; exit 1; }
	set --
	while IFS= read -r field; do
		set -- "$@" -H "$field"
	done <<EOF2
$(tr '\t' '\n' < "$POOL")
EOF2
	code=$(curl -s -o /dev/null -w '%{http_code}' "$@" \
	    -H "Authorization: Bearer $TOKEN" "$BASE$LIST")
	[ "$code" = 200 ] || { echo "tpp bench: signed answered $code" >&2; exit 1; }
}

RES=
run() {
	name=$1; shift
	wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$@" > "$OUT/tpp-wrk.out" 2>&1 || true
	grep '^non-200' "$OUT/tpp-wrk.out" >&2 || true
	line=$(grep '^RESULT' "$OUT/tpp-wrk.out" || echo "RESULT 0 0 -1")
	set -- $line
	RES=$2
	printf '%-34s %6s conns %10s req/s %9s ms p99 %6s errors\n' "$name" \
	    "$CONNS" "$2" "$3" "$4"
}

check
echo "TPP verification ($SECS s per run, 2 wrk threads, $(nproc) cores" \
    "shared with the server and PostgreSQL)"
# Warm-up (connections, caches, PostgreSQL plans), not counted.
run "account-list unsigned (warm-up)" -s tests/bench/ais.lua "$BASE"
w=$RES
# Enough requests for each whole run, even well above the warm-up rate (a
# pool that runs out would replay, answered 400).
n=$(awk -v r="$w" -v s="$SECS" 'BEGIN { printf "%d", r * s * 3 + 5000 }')
start=$(date +%s)
presign "$n" unsigned
presign "$n"
echo "prepared 2 x $n requests in $(( $(date +%s) - start )) s"
TPP_POOL=$UPOOL run "account-list unsigned" -s tests/bench/tpp.lua "$BASE"
u1=$RES
TPP_POOL=$POOL run "account-list signed (rsa-sha256)" -s tests/bench/tpp.lua \
    "$BASE"
s1=$RES
presign "$n" unsigned
TPP_POOL=$UPOOL run "account-list unsigned (again)" -s tests/bench/tpp.lua \
    "$BASE"
u2=$RES
awk -v a="$u1" -v b="$u2" -v s="$s1" 'BEGIN {
	u = (a + b) / 2
	if (u <= 0) { print "tpp bench: no unsigned throughput"; exit 1 }
	cost = 100 * (1 - s / u)
	printf "verification cost: %.1f%% of unsigned throughput (target <= 20%%): %s\n",
	    cost, cost <= 20 ? "ok" : "OVER TARGET"
}'
