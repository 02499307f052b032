"""Payments in the HA suite: a PSU with an EUR account
and an emulated authenticator driven by a ha_lib.Daemon, decoupled
payments initiated with signed requests, confirmed on the device (PIN,
button) and followed through the TPP's status endpoint, as tests/pis
does against one instance."""

import json
import threading
import time
import uuid

import psycopg2
import requests

from ha_lib import wait_for
from psd2lib import exchange_code, make_client, make_psu, psd2ctl, \
    run_code_flow

SCT = "/auth/v1/psd2/payments/sepa-credit-transfers"
CREDITOR = "DE89370400440532013000"


class Payer:
    def __init__(self, psu, client, token, iban, serial):
        self.psu = psu
        self.client = client
        self.token = token
        self.iban = iban
        self.serial = serial


def set_balance(dsn, iban, minor):
    with psycopg2.connect(dsn) as c, c.cursor() as cur:
        cur.execute("""INSERT INTO balance (account_id, amount_minor,
            last_change_at, reference_date) SELECT id, %s, now(),
            current_date FROM account WHERE iban = %s
            ON CONFLICT (account_id) DO UPDATE
            SET amount_minor = EXCLUDED.amount_minor""", (minor, iban))


def enrol(daemon, serial, username, dsn):
    """The daemon recorded the device: enrol it and assign it to the PSU
    (psd2ctl, on the cluster the environment's PGPORT names)."""
    def recorded():
        with psycopg2.connect(dsn) as c, c.cursor() as cur:
            cur.execute("SELECT 1 FROM device WHERE serial = %s", (serial,))
            return cur.fetchone() is not None
    wait_for(recorded, 20, "device %s recorded" % serial)
    psd2ctl("device", "enrol", serial)
    psd2ctl("device", "break-glass-assign", serial, username, "--reason",
            "test setup")


def make_payer(base, daemon, serial, dsn, scope="PAYMENT_INITIATION",
               psu=None):
    """A fresh PSU (unless given) with serial (one of the daemon's) as
    their authenticator and a token of a fresh TPP for scope over the
    first account."""
    psu = psu or make_psu(1)
    iban = psu.accounts[0][0]
    set_balance(dsn, iban, 10 ** 9)
    enrol(daemon, serial, psu.username, dsn)
    client = make_client()
    code, _, _, _ = run_code_flow(client, psu, scope, base=base,
                                  accounts=[iban])
    r = exchange_code(client, code, base=base)
    assert r.status_code == 200, r.text
    return Payer(psu, client, r.json()["access_token"], iban, serial)


def payment_body(payer, amount):
    return {"instructedAmount": {"currency": "EUR", "amount": amount},
            "debtorAccount": {"iban": payer.iban},
            "creditorAccount": {"iban": CREDITOR},
            "creditorName": "HA Creditor",
            "remittanceInformationUnstructured": "HA test"}


def call(signer, method, url, token, body=None, headers=None, timeout=30):
    h = {"Content-Type": "application/json", "PSU-IP-Address": "192.0.2.10",
         "Authorization": "Bearer " + token}
    h.update(headers or {})
    data = json.dumps(body).encode() if body is not None else b""
    return signer.for_token(token).request(method, url, body=data, headers=h,
                                           timeout=timeout,
                                           allow_redirects=False)


def initiate(signer, base, payer, amount="12.34", request_id=None,
             extra=None):
    """POST a decoupled SEPA credit transfer; the response."""
    h = {"TPP-Decoupled-Preferred": "true"}
    if request_id:
        h["X-Request-ID"] = request_id
    h.update(extra or {})
    return call(signer, "POST", base + SCT, payer.token,
                payment_body(payer, amount), h)


def status(signer, base, payer, pid, extra=None):
    return call(signer, "GET", "%s%s/%s/status" % (base, SCT, pid),
                payer.token, headers=extra)


def confirm_on_device(daemon, serial, amount, timeout=30):
    """Waits until the device shows the payment of amount ("12.34"), then
    the PIN and the button."""
    wait_for(lambda: "PAY" in daemon.emu("show", serial).stdout and
             amount in daemon.emu("show", serial).stdout, timeout,
             "the payment of %s on %s" % (amount, serial), step=0.1)
    p = daemon.emu("pin", serial, "1234")
    assert p.returncode == 0, p.stdout + p.stderr
    p = daemon.emu("press", serial)
    assert p.returncode == 0, p.stdout + p.stderr


def wait_decided(signer, base, payer, pid, timeout=30, extra=None):
    """Polls the status endpoint until ACSC or RJCT; the last answer."""
    deadline = time.time() + timeout
    while True:
        try:
            r = status(signer, base, payer, pid, extra=extra)
            if r.status_code == 200 and \
                    r.json()["transactionStatus"] in ("ACSC", "RJCT"):
                return r
        except requests.RequestException:
            r = None
        assert time.time() < deadline, (pid, r is not None and
                                        (r.status_code, r.text[:300]))
        time.sleep(0.1)


def pay(signer, daemon, payer, base, status_base=None, amount="12.34"):
    """One decoupled payment start to end: initiated through base,
    confirmed on the device, ACSC seen through status_base. Its id."""
    r = initiate(signer, base, payer, amount)
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    confirm_on_device(daemon, payer.serial, amount)
    r = wait_decided(signer, status_base or base, payer, pid)
    assert r.json()["transactionStatus"] == "ACSC", r.text
    return pid


class PaymentLoad:
    """Payment confirmations in a thread, one after the other: initiate
    (a 503 is retried, the statement did not run), confirm on the device,
    poll the status. seen[pid] is what the client last saw: 'RCVD' once
    the 201 came back (committed), 'ACSC'/'RJCT' once the status said so.
    An initiation answered otherwise (500, no answer) may or may not have
    committed and is not recorded; errors lists every answer that was
    neither 2xx nor the documented 500/503 error body."""

    def __init__(self, base, signer, daemon, payer):
        self.base = base        # a callable: the URL to use now
        self.signer = signer
        self.daemon = daemon
        self.payer = payer
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.seen = {}
        self.log = []           # (t, what, pid, status or exception)
        self.n = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _note(self, what, pid, st):
        with self.lock:
            self.log.append((time.monotonic(), what, pid, st))

    def _amount(self):
        self.n += 1
        return "%d.%02d" % (30 + self.n, self.n % 100)

    def _run(self):
        while not self.stop.is_set():
            amount = self._amount()
            try:
                r = initiate(self.signer, self.base(), self.payer, amount,
                             request_id=str(uuid.uuid4()), extra={
                                 "Connection": "close"})
            except requests.RequestException as e:
                self._note("initiate", None, repr(e))
                time.sleep(0.2)
                continue
            self._note("initiate", None, r.status_code)
            if r.status_code != 201:
                time.sleep(0.2)
                continue
            pid = r.json()["paymentId"]
            with self.lock:
                self.seen[pid] = "RCVD"
            try:
                confirm_on_device(self.daemon, self.payer.serial, amount,
                                  timeout=40)
                r = wait_decided(self.signer, self.base(), self.payer, pid,
                                 timeout=40)
            except AssertionError as e:
                self._note("undecided", pid, str(e)[:200])
                return
            st = r.json()["transactionStatus"]
            self._note("decided", pid, st)
            with self.lock:
                self.seen[pid] = st

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(90)
        assert not self.thread.is_alive(), "the payment load hangs"

    def decided_between(self, t0, t1):
        """Payments whose decided status the client saw in [t0, t1)."""
        with self.lock:
            return {pid: st for (when, what, pid, st) in self.log
                    if what == "decided" and t0 <= when < t1}

    def undecided(self):
        with self.lock:
            return [x for x in self.log if x[1] == "undecided"]


def missing_payments(dsn, seen):
    """{pid: (seen, in the database)} for every payment whose state the
    client saw that the database does not have (RCVD: the row exists;
    ACSC/RJCT: that transaction status)."""
    with psycopg2.connect(dsn) as c, c.cursor() as cur:
        cur.execute("SELECT id::text, transaction_status FROM payment "
                    "WHERE id = ANY(%s::uuid[])", (list(seen),))
        have = dict(cur.fetchall())
    return {pid: (st, have.get(pid)) for pid, st in seen.items()
            if pid not in have or (st != "RCVD" and have[pid] != st)}
