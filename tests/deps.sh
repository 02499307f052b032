#!/bin/sh
# Installs the Debian packages psd2gate needs to build, run and test.
# As root it installs what is missing; otherwise it names what is missing.
set -eu
PKGS="kore prometheus haproxy build-essential pkg-config patch postgresql libpq-dev libssl-dev
libjansson-dev libargon2-dev libcmocka-dev libusb-1.0-0-dev umockdev
libumockdev-dev libglib2.0-dev clang libclang-rt-14-dev
python3-pytest python3-authlib python3-httpsig python3-selenium
python3-psycopg2 python3-cryptography python3-requests python3-jsonschema
chromium chromium-driver wrk openssl ca-certificates systemd"

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
