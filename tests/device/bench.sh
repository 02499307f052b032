#!/bin/sh
# make bench-device: figures of psd2-deviced with 50 emulated devices (not
# a test; prints them). Uses its own database psd2gate_devbench. Two runs:
# presses spread over a second (PSUs press at their own moments), and all
# 50 at the same instant (the worst case: the emulator presses them back
# to back; its line after says how long that took).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
BUILD=${BUILD:-build}
export PSD2_DEV_TESTKEYS="$top/device/testkeys"
export PSD2_DEVICED="$top/$BUILD/bin/psd2-deviced"
export PSD2_DEVTEST_DB="$(sh tests/device/testdb.sh psd2gate_devbench 2>/dev/null)"
LD_PRELOAD=libumockdev-preload.so.0 BENCH_SPREAD_MS=${BENCH_SPREAD_MS:-1000} \
    "$BUILD/device/tests/bench_device"
LD_PRELOAD=libumockdev-preload.so.0 BENCH_SPREAD_MS=0 BENCH_IDLE_SECONDS=1 \
    "$BUILD/device/tests/bench_device" | grep -e 'press ->' -e 'rounds of'
