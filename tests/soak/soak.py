"""make soak (issue 11; not part of make test): one psd2gate on the test
cluster under mixed traffic (whole logins with consent and code
exchange, refresh grants, signed account-list calls) at 80% of the
capacity measured first on this machine, for SOAK_SECONDS (default 600).
Fails on any error answer; prints each worker's resident memory at the
start and the end, and the latency percentiles.

The load generator is this Python program (threads, one request at a
time each, paced): on a 2-core machine it shares the cores with the
service and PostgreSQL, so "capacity" is that of the whole machine with
this client, measured the same way just before (SOAK_MEASURE seconds,
closed loop)."""

import os
import random
import subprocess
import sys
import threading
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, os.path.join(TOP, "tests", "ha"))

import requests  # noqa: E402

import psd2lib  # noqa: E402
from ha_lib import Instance, ha_port, make_grants  # noqa: E402
from psd2lib import (ACCOUNT_LIST, Signer, exchange_code, make_client,  # noqa
                     make_psu, run_code_flow)

SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
MEASURE = int(os.environ.get("SOAK_MEASURE", "20"))
THREADS = int(os.environ.get("SOAK_THREADS", "6"))
SHARE = float(os.environ.get("SOAK_SHARE", "0.8"))


def setup():
    psd2lib.pgcluster_start()
    for step in (("keys-init",), ("migrate",), ("sandbox-seed",)):
        psd2lib.psd2ctl(*step)
    subprocess.run(["sh", os.path.join(TOP, "tests", "pki", "mint.sh"),
                    "sandbox", os.path.join(TOP, "var", "sandbox")],
                   check=True, cwd=TOP, stdout=subprocess.DEVNULL)


def worker_rss(pid):
    """{pid: VmRSS kB} of the processes whose parent is pid."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            with open("/proc/%s/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        out[int(p)] = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return out


class Mix:
    """One request (or one whole login) of the mix at a time per call."""

    def __init__(self, inst, client, grants, psus, signer):
        self.inst = inst
        self.client = client
        self.chains = [dict(g) for g in grants]
        self.psus = psus
        self.psu_next = 0
        self.signer = signer
        self.lock = threading.Lock()
        self.lat = []
        self.errors = []
        self.ok = 0
        self.flows_at = {}

    def _done(self, kind, t0, r):
        with self.lock:
            if r.status_code == 200 or (kind == "login" and r.status_code
                                        in (200, 302, 303)):
                self.ok += 1
                self.lat.append(time.monotonic() - t0)
            else:
                self.errors.append((kind, r.status_code, r.text[:200]))

    def refresh(self, i):
        t0 = time.monotonic()
        with self.lock:
            rt = self.chains[i]["refresh_token"]
        r = requests.post(self.inst.url + "/auth/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": rt},
            auth=(self.client.client_id, self.client.secret), timeout=30)
        if r.status_code == 200:
            psd2lib.register_tokens(r.json(), self.client)
            with self.lock:
                self.chains[i] = r.json()
        self._done("refresh", t0, r)

    def ais(self, i):
        with self.lock:
            tok = self.chains[i]["access_token"]
        h = {"Content-Type": "application/json",
             "PSU-IP-Address": "192.0.2.10", "Authorization": "Bearer " + tok}
        t0 = time.monotonic()
        r = self.signer.for_token(tok).request(
            "GET", self.inst.url + ACCOUNT_LIST, headers=h, timeout=30)
        self._done("ais", t0, r)

    def login(self):
        """A whole login (authorize, password, TOTP, consent, token) of a
        PSU whose last login is over a TOTP step ago."""
        with self.lock:
            for _ in range(len(self.psus)):
                psu = self.psus[self.psu_next]
                self.psu_next = (self.psu_next + 1) % len(self.psus)
                if time.time() - self.flows_at.get(psu.username, 0) > 31:
                    self.flows_at[psu.username] = time.time()
                    break
            else:
                return False
        t0 = time.monotonic()
        try:
            code, _, _, _ = run_code_flow(self.client, psu,
                                          base=self.inst.url)
            r = exchange_code(self.client, code, base=self.inst.url)
        except psd2lib.FlowError as e:
            with self.lock:
                self.errors.append(("login", None, str(e)[:200]))
            return True
        self._done("login", t0, r)
        return True

    def one(self, tid, n):
        """Thread tid's n-th call: 1 in 20 a whole login, then refresh
        and AIS alike (each thread on chains of its own)."""
        i = tid % len(self.chains)
        if n % 20 == 19 and self.login():
            return
        if n % 2:
            self.refresh(i)
        else:
            self.ais(i)


def run(mix, seconds, rate=None):
    """THREADS threads for seconds; paced to rate calls/s in total when
    given, else as fast as they can. Returns calls made."""
    stop = time.monotonic() + seconds
    counts = [0] * THREADS

    def loop(tid):
        n = 0
        t_next = time.monotonic()
        while time.monotonic() < stop:
            if rate:
                t_next += THREADS / rate
                delay = t_next - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            try:
                mix.one(tid, n)
            except requests.RequestException as e:
                with mix.lock:
                    mix.errors.append(("exception", None, repr(e)[:200]))
            n += 1
        counts[tid] = n

    threads = [threading.Thread(target=loop, args=(t,))
               for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def main():
    setup()
    inst = Instance("soak", ha_port(20), ha_port(21))
    inst.start()
    try:
        signer = Signer.load()
        client = make_client()
        grants = make_grants(inst.url, client, THREADS)
        psus = [make_psu(1) for _ in range(40)]
        mix = Mix(inst, client, grants, psus, signer)

        n = run(mix, MEASURE)
        capacity = n / MEASURE
        if mix.errors:
            print("soak: errors while measuring: %s" % mix.errors[:5])
            return 1
        rate = capacity * SHARE
        print("soak: capacity %.0f calls/s (closed loop, %d threads, %d s);"
              " soaking at %.0f/s for %d s" % (capacity, THREADS, MEASURE,
                                               rate, SECONDS), flush=True)
        mix.lat, mix.ok = [], 0
        rss0 = worker_rss(inst.proc.pid)
        t0 = time.monotonic()
        n = run(mix, SECONDS, rate)
        took = time.monotonic() - t0
        rss1 = worker_rss(inst.proc.pid)
    finally:
        inst.stop()
    print("soak: %d calls in %.0f s (%.0f/s), %d errors; latency p50 "
          "%.1f ms, p99 %.1f ms" % (n, took, n / took, len(mix.errors),
                                    pct(mix.lat, 0.5) * 1000,
                                    pct(mix.lat, 0.99) * 1000))
    for pid in sorted(set(rss0) | set(rss1)):
        print("soak: process %d RSS start %s kB, end %s kB" % (
            pid, rss0.get(pid, "-"), rss1.get(pid, "-")))
    if mix.errors:
        print("soak: FAILED, first errors: %s" % mix.errors[:5])
        return 1
    if n < 0.9 * rate * SECONDS:
        print("soak: FAILED, the pace was not held (%d of %.0f calls)" %
              (n, rate * SECONDS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
