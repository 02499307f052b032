"""make soak (not part of make test): one psd2gate on the test
cluster under mixed traffic (whole logins with consent and code
exchange, refresh grants, signed account-list calls, decoupled payments)
at 80% of the capacity measured first on this machine, for SOAK_SECONDS
(default 600). Fails on any error answer; prints each worker's resident
memory at the start and the end, and the latency percentiles.

Payments: SOAK_PAYERS PSUs, each with an emulated authenticator of their
own (psd2-deviced under umockdev, tests/ha/ha_pay.py). One call in 10 is
a signed decoupled initiation by a payer with no payment in flight (else
a refresh); a confirmer thread enters the PIN and presses the button on
the device and polls the status until ACSC. A payment not ACSC within
60 s, or any other status, is an error.

The load generator is this Python program (threads, one request at a
time each, paced): on a 2-core machine it shares the cores with the
service and PostgreSQL, so "capacity" is that of the whole machine with
this client, measured the same way just before (SOAK_MEASURE seconds,
closed loop)."""

import os
import queue
import subprocess
import sys
import threading
import time
import uuid

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, os.path.join(TOP, "tests", "ha"))

import requests  # noqa: E402

import psd2lib  # noqa: E402
from ha_lib import Daemon, Instance, ha_port, make_grants  # noqa: E402
from ha_pay import (confirm_on_device, initiate, make_payer,  # noqa: E402
                    wait_decided)
from psd2lib import (ACCOUNT_LIST, Signer, exchange_code, make_client,  # noqa
                     make_psu, run_code_flow)

SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
MEASURE = int(os.environ.get("SOAK_MEASURE", "20"))
THREADS = int(os.environ.get("SOAK_THREADS", "6"))
SHARE = float(os.environ.get("SOAK_SHARE", "0.8"))
PAYERS = int(os.environ.get("SOAK_PAYERS", "4"))


def setup():
    """The test cluster, migrated and seeded; its conninfo."""
    dsn = psd2lib.pgcluster_start()
    for step in (("keys-init",), ("migrate",), ("sandbox-seed",)):
        psd2lib.psd2ctl(*step)
    subprocess.run(["sh", os.path.join(TOP, "tests", "pki", "mint.sh"),
                    "sandbox", os.path.join(TOP, "var", "sandbox")],
                   check=True, cwd=TOP, stdout=subprocess.DEVNULL)
    return dsn


def worker_rss(pid):
    """{pid: (name, VmRSS kB)} of the processes whose parent is pid (Kore
    names them: "[wrk N]", "[keymgr]")."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            with open("/proc/%s/cmdline" % p, "rb") as f:
                name = f.read().split(b"\0")[0].decode("utf-8", "replace")
            with open("/proc/%s/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        out[int(p)] = (name or "process",
                                       int(line.split()[1]))
        except (OSError, ValueError, IndexError):
            pass
    return out


class Mix:
    """One request (or one whole login) of the mix at a time per call."""

    def __init__(self, inst, client, grants, psus, signer, daemon=None,
                 payers=()):
        self.inst = inst
        self.daemon = daemon
        self.free_payers = list(payers)
        self.pending = queue.Queue()
        self.payments = 0
        self.amount_n = 0
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

    def pay(self):
        """A decoupled initiation by a payer with nothing in flight; the
        confirmer thread takes it from there. False when all are busy."""
        with self.lock:
            if not self.free_payers:
                return False
            payer = self.free_payers.pop()
            self.amount_n += 1
            amount = "%d.%02d" % (1 + self.amount_n // 100,
                                  self.amount_n % 100)
        t0 = time.monotonic()
        r = initiate(self.signer, self.inst.url, payer, amount)
        if r.status_code == 201:
            with self.lock:
                self.ok += 1
                self.lat.append(time.monotonic() - t0)
            self.pending.put((payer, r.json()["paymentId"], amount))
        else:
            with self.lock:
                self.errors.append(("payment", r.status_code, r.text[:200]))
                self.free_payers.append(payer)
        return True

    def confirmer(self, stop):
        """PIN and button on each initiated payment's device, then the
        status until decided: ACSC or an error."""
        while not (stop.is_set() and self.pending.empty()):
            try:
                payer, pid, amount = self.pending.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                confirm_on_device(self.daemon, payer.serial, amount,
                                  timeout=60)
                r = wait_decided(self.signer, self.inst.url, payer, pid,
                                 timeout=60)
                st = r.json()["transactionStatus"]
                with self.lock:
                    if st == "ACSC":
                        self.payments += 1
                    else:
                        self.errors.append(("payment", pid, st))
            except (AssertionError, requests.RequestException) as e:
                with self.lock:
                    self.errors.append(("payment", pid, str(e)[:200]))
            with self.lock:
                self.free_payers.append(payer)

    def one(self, tid, n):
        """Thread tid's n-th call: 1 in 20 a whole login, 1 in 10 a
        payment initiation (when a payer is free), then refresh and AIS
        alike (each thread on chains of its own)."""
        i = tid % len(self.chains)
        if n % 20 == 19 and self.login():
            return
        if n % 10 == 4 and self.daemon is not None and self.pay():
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
    done = threading.Event()
    conf = threading.Thread(target=mix.confirmer, args=(done,))
    conf.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    conf.join()
    return sum(counts)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def main():
    dsn = setup()
    inst = Instance("soak", ha_port(20), ha_port(21))
    # Fresh serials: the database may remember earlier runs' devices
    # with keys of emulator states that are gone.
    serials = ["SOAK%s" % uuid.uuid4().hex[:8].upper()
               for _ in range(PAYERS)]
    daemon = Daemon("soak-devd", serials)
    inst.start()
    daemon.start()
    try:
        signer = Signer.load()
        client = make_client()
        grants = make_grants(inst.url, client, THREADS)
        psus = [make_psu(1) for _ in range(40)]
        payers = [make_payer(inst.url, daemon, s, dsn) for s in serials]
        mix = Mix(inst, client, grants, psus, signer, daemon, payers)

        n = run(mix, MEASURE)
        capacity = n / MEASURE
        if mix.errors:
            print("soak: errors while measuring: %s" % mix.errors[:5])
            return 1
        rate = capacity * SHARE
        print("soak: capacity %.0f calls/s (closed loop, %d threads, %d s);"
              " soaking at %.0f/s for %d s" % (capacity, THREADS, MEASURE,
                                               rate, SECONDS), flush=True)
        mix.lat, mix.ok, mix.payments = [], 0, 0
        rss0 = worker_rss(inst.proc.pid)
        t0 = time.monotonic()
        n = run(mix, SECONDS, rate)
        took = time.monotonic() - t0
        rss1 = worker_rss(inst.proc.pid)
    finally:
        daemon.stop()
        inst.stop()
    print("soak: %d calls in %.0f s (%.0f/s), %d errors; latency p50 "
          "%.1f ms, p99 %.1f ms" % (n, took, n / took, len(mix.errors),
                                    pct(mix.lat, 0.5) * 1000,
                                    pct(mix.lat, 0.99) * 1000))
    print("soak: %d payments confirmed on the devices and ACSC" %
          mix.payments)
    for pid in sorted(set(rss0) | set(rss1)):
        print("soak: %s %d RSS start %s kB, end %s kB" % (
            rss0.get(pid, rss1.get(pid, ("?",)))[0], pid,
            rss0.get(pid, ("", "-"))[1], rss1.get(pid, ("", "-"))[1]))
    if mix.errors:
        print("soak: FAILED, first errors: %s" % mix.errors[:5])
        return 1
    if mix.payments == 0:
        print("soak: FAILED, no payment was confirmed")
        return 1
    if n < 0.9 * rate * SECONDS:
        print("soak: FAILED, the pace was not held (%d of %.0f calls)" %
              (n, rate * SECONDS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
