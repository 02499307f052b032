#!/bin/sh
# Installs the Debian packages psd2gate needs, in two sets:
#
#   tests/deps.sh run      what `make all` and `make run` need: compilers,
#                          Kore's source, PostgreSQL, the libraries the
#                          programs link, umockdev for the emulated
#                          authenticator, openssl for the sandbox's keys
#   tests/deps.sh test     the run set and the test tools: cmocka, clang
#                          (libFuzzer), pytest and the Python clients,
#                          Chromium and its driver, wrk, Prometheus,
#                          HAProxy, systemd (its unit checker), Node.js
#                          (npm installs the FAPI 2.0 client test's
#                          openid-client and the bench's reference)
#   tests/deps.sh --list run|test-only
#                          prints a set, one package a line (nothing is
#                          installed; tests/build/check-deps.sh reads it)
#
# As root it installs what is missing; otherwise it names what is missing.
set -eu
RUN_PKGS="kore build-essential pkg-config patch postgresql libpq-dev
libssl-dev libjansson-dev libargon2-dev libfido2-dev libcbor-dev
libusb-1.0-0-dev umockdev
libumockdev-dev libglib2.0-dev openssl ca-certificates"
TEST_PKGS="libcmocka-dev clang libclang-rt-14-dev python3-pytest
python3-authlib python3-httpsig python3-selenium python3-psycopg2
python3-cryptography python3-requests python3-jsonschema python3-yaml chromium
chromium-driver wrk prometheus haproxy systemd nodejs"

usage() {
	echo "usage: $0 run|test | --list run|test-only" >&2
	exit 2
}

if [ "${1:-}" = --list ]; then
	case "${2:-}" in
	run)		printf '%s\n' $RUN_PKGS ;;
	test-only)	printf '%s\n' $TEST_PKGS ;;
	*)		usage ;;
	esac
	exit 0
fi
case "${1:-}" in
run)	PKGS=$RUN_PKGS ;;
test)	PKGS="$RUN_PKGS $TEST_PKGS" ;;
*)	usage ;;
esac

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing" >&2
	echo "install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
