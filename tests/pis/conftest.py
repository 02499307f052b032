"""Payment initiation suite: the TPP's payment endpoints, the
decision on the authenticator's signed outcome and the booking, against
the real parts: psd2gate (its own instance of conf/test.conf with short
SCA deadlines), PostgreSQL, psd2-deviced driving emulated authenticators
under umockdev (psd2-emuhost), psd2-emu for the PSU's keypad and buttons,
and signed requests (httpsig, tests/lib/psd2lib.py).

Each test that needs an authenticator gets a fresh PSU (psd2ctl psu add,
one EUR account with a balance) and a fresh emulated device (psd2-emu add,
then psd2ctl device enrol and assign), so no test sees another's queue,
counter or PIN state. The sandbox's EMU0001 is plugged in too and
assigned to anna, as `make run` does.

psd2-deviced runs under a small supervisor inside the testbed, so that a
test can kill it (SIGKILL, as a crash) and let it start again.
"""

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402

import psd2lib  # noqa: E402
import psd2_fixtures  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403
from psd2lib import (MAIN_URL, db_connect, exchange_code,  # noqa: E402
                     make_client, make_psu, psd2ctl, run_code_flow)

API = "/auth/v1/psd2"
PAY = API + "/payments"
SCT = PAY + "/sepa-credit-transfers"
INST = PAY + "/instant-sepa-credit-transfers"
REDIRECT = "https://tpp.example/callback"
NOK_REDIRECT = "https://tpp.example/nok"
CREDITOR = "DE89370400440532013000"
# The SCA deadline of this suite's instance (psd2_pis_sca_seconds).
SCA_SECONDS = 15
# The redirect SCA deadline of this suite's instance (a test of expiry
# starts an instance of its own with a few seconds).
REDIRECT_SECONDS = 120
# psd2-deviced's lease here: a killed daemon's claim is retaken after it.
LEASE_SECONDS = 4

SANDBOX_DIR = os.path.join(psd2lib.TOP, "var", "sandbox")
PKI_DIR = os.path.join(psd2lib.TOP, "var", "test-pki")
MINT = os.path.join(psd2lib.TOP, "tests", "pki", "mint.sh")

# The test certificates (tests/tpp does the same), before any server.
subprocess.run(["sh", MINT, "sandbox", SANDBOX_DIR], check=True,
               stdout=subprocess.DEVNULL)
subprocess.run(["sh", MINT, "test", PKI_DIR, os.path.join(SANDBOX_DIR, "ca")],
               check=True, stdout=subprocess.DEVNULL)


def instance_conf(name, port, redirect_seconds=REDIRECT_SECONDS):
    conf = psd2lib.derived_conf("conf/test.conf", port, name)
    with open(conf, "a") as f:
        f.write("psd2_pis_sca_seconds %d\n" % SCA_SECONDS)
        f.write("psd2_pis_redirect_seconds %d\n" % redirect_seconds)
        f.write("psd2_pis_sweep_ms 500\n")
        f.write("psd2_trust_dir %s\n" % os.path.join(SANDBOX_DIR, "trust"))
        f.write("psd2_crl_dir %s\n" % os.path.join(SANDBOX_DIR, "crl"))
    return conf


@pytest.fixture(scope="session")
def server(service_setup):
    srv = psd2_fixtures._start(instance_conf("psd2gate-pis",
                                             psd2lib.MAIN_PORT),
                               psd2lib.MAIN_PORT, "psd2gate-pis", None)
    yield srv
    psd2_fixtures._stop(srv)


@pytest.fixture(autouse=True)
def _running_service(server, emulator):
    return server


@pytest.fixture(scope="session")
def db(dbinfo):
    c = db_connect(dbinfo)
    yield c
    c.close()


def sql(db, query, *args):
    cur = db.cursor()
    cur.execute(query, args)
    try:
        return cur.fetchall()
    except Exception:
        return None


def sql1(db, query, *args):
    rows = sql(db, query, *args)
    assert rows is not None and len(rows) == 1, (query, rows)
    return rows[0][0] if len(rows[0]) == 1 else rows[0]


@contextlib.contextmanager
def changed_at_sca(db, pid, table, change):
    """Within: the row of payment pid in table (payment or
    payment_authorisation) is changed by `change` (a PL/pgSQL assignment
    to NEW) in the very UPDATE that records its SCA (ACTC; finalised), as
    a tampering writer would between SCA and booking. Deterministic: the
    booking, however soon it runs, only ever sees the changed row."""
    name = "test_tamper_%s" % pid.replace("-", "")
    key = "payment_id" if table == "payment_authorisation" else "id"
    status = "sca_status = 'finalised'" if key == "payment_id" else \
        "transaction_status = 'ACTC'"
    sql(db, """CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN %s; RETURN NEW; END $$""" % (name, change))
    sql(db, """CREATE TRIGGER %s BEFORE UPDATE ON %s FOR EACH ROW
        WHEN (NEW.%s = '%s' AND NEW.%s AND NOT OLD.%s)
        EXECUTE FUNCTION %s()""" % (name, table, key, pid, status, status,
                                    name))
    try:
        yield
    finally:
        sql(db, "DROP TRIGGER %s ON %s" % (name, table))
        sql(db, "DROP FUNCTION %s()" % name)


# --------------------------------------------------------------------------
# The emulated authenticators and psd2-deviced

class Emulator:
    """psd2-emuhost with psd2-deviced (under a supervisor) in its testbed."""

    def __init__(self, dbinfo):
        self.dir = os.path.join(psd2lib.LOG_DIR, "%s-emu" %
                                psd2lib.suite_label())
        self.sock = os.path.join(self.dir, "emu.sock")
        self.conf = os.path.join(self.dir, "psd2-deviced.conf")
        self.hold = os.path.join(self.dir, "hold")
        self.log_path = os.path.join(self.dir, "emu.log")
        self.proc = None
        self.lock = threading.Lock()
        self.counter = 0

    def start(self):
        # The state files (keys, counters, PINs) stay from run to run: the
        # database remembers each serial's public key, and a daemon does
        # not use a device that presents another one.
        os.makedirs(self.dir, exist_ok=True)
        for f in ("emu.sock", "hold"):
            if os.path.exists(os.path.join(self.dir, f)):
                os.unlink(os.path.join(self.dir, f))
        with open(self.conf, "w") as f:
            f.write("psd2_db host=127.0.0.1 dbname=psd2gate user=psd2_daemon "
                    "sslmode=disable gssencmode=disable\n")
            f.write("psd2_device_vidpid 1209:0001\n")
            f.write("psd2_device_manufacturer_ca %s\n" % os.path.join(
                psd2lib.TOP, "device", "testkeys",
                "manufacturer-test-ca.pem"))
            f.write("psd2_device_host pis-test\n")
            f.write("psd2_device_lease_seconds %d\n" % LEASE_SECONDS)
            f.write("psd2_device_busy_retry_ms 300\n")
        b = psd2lib.bin_dir()
        # The supervisor: runs the daemon again when it dies, unless the
        # hold file exists; SIGTERM (from the harness) stops both.
        sup = ("trap 'kill -TERM $pid 2>/dev/null; wait $pid; exit 0' TERM; "
               "while :; do if [ ! -e '%s' ]; then "
               "'%s' --foreground --conf '%s' & pid=$!; "
               "echo $pid > '%s/deviced.pid'; wait $pid; fi; "
               "sleep 0.2; done") % (self.hold,
                                    os.path.join(b, "psd2-deviced"),
                                    self.conf, self.dir)
        env = psd2lib.umockdev_env()
        env["G_DEBUG"] = ""
        self.logf = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [os.path.join(b, "psd2-emuhost"), "--state", self.dir,
             "--socket", self.sock, "--manufacturer-key",
             os.path.join(psd2lib.TOP, "device", "testkeys",
                          "manufacturer-test-key.pem"),
             "--verbose", "EMU0001", "--", "sh", "-c", sup],
            cwd=psd2lib.TOP, env=env, stdout=self.logf,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.time() + 30
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("psd2-emuhost did not start:\n" +
                                   self.tail())
            time.sleep(0.1)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None
        self.logf.close()

    def tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode("utf-8", "replace")
                                 .splitlines()[-n:])
        except OSError:
            return ""

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def cmd(self, *args, check=True):
        env = dict(os.environ)
        env["PSD2_EMU_SOCKET"] = self.sock
        p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2-emu")] +
                           list(args), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=20)
        if check:
            assert p.returncode == 0, (args, p.stdout)
        return p.stdout.strip()

    def show(self, serial):
        return self.cmd("show", serial)

    def new_serial(self):
        with self.lock:
            self.counter += 1
            return "PIS%04d%s" % (self.counter, uuid.uuid4().hex[:6].upper())

    def daemon_pid(self):
        """The supervisor rewrites the file (truncate, then write): an
        empty read is a restart in progress, so read again."""
        path = os.path.join(self.dir, "deviced.pid")
        for _ in range(100):
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
            time.sleep(0.02)
        raise AssertionError("%s stayed empty" % path)


def wait_for(fn, timeout=20, interval=0.1, what="condition"):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def enrol(db, emu, serial, username):
    wait_for(lambda: sql(db, "SELECT 1 FROM device WHERE serial = %s",
                         serial), what="device %s recorded" % serial)
    psd2ctl("device", "enrol", serial)
    psd2ctl("device", "break-glass-assign", serial, username, "--reason",
            "test setup")


def _emu0001_key(db, emu):
    """The test database may remember EMU0001 with the key of an earlier
    emulator state (a deleted var/test-logs): re-issue the row for the
    state in use, as replacing a device's key would, and replug it so the
    daemon records it again."""
    from cryptography.hazmat.primitives import serialization
    path = os.path.join(emu.dir, "EMU0001.state")
    wait_for(lambda: os.path.exists(path), what="EMU0001.state")
    with open(path) as f:
        text = f.read()
    key = serialization.load_pem_private_key(
        text[text.index("-----BEGIN"):].encode(), None)
    pub = key.public_key().public_bytes(
        serialization.Encoding.X962,
        serialization.PublicFormat.UncompressedPoint)
    counter = int(text.split("counter ", 1)[1].split()[0])
    row = sql(db, "SELECT public_key FROM device WHERE serial = 'EMU0001'")
    if row and bytes(row[0][0]) != pub:
        sql(db, "UPDATE device SET public_key = %s, last_counter = %s "
            "WHERE serial = 'EMU0001'", pub, counter)
        emu.cmd("unplug", "EMU0001")
        emu.cmd("plug", "EMU0001")


@pytest.fixture(scope="session")
def emulator(service_setup, dbinfo, db):
    emu = Emulator(dbinfo)
    emu.start()
    try:
        _emu0001_key(db, emu)
        # The sandbox's authenticator, as device/sandbox-up.sh sets it up.
        st = sql(db, "SELECT status FROM device WHERE serial = 'EMU0001'")
        if not st or st[0][0] != "active":
            wait_for(lambda: sql(db, "SELECT 1 FROM device WHERE serial = "
                                 "'EMU0001'"), what="EMU0001 recorded")
            if sql(db, "SELECT status FROM device WHERE serial = "
                   "'EMU0001'")[0][0] == "not_enrolled":
                psd2ctl("device", "enrol", "EMU0001")
        if not sql(db, "SELECT 1 FROM device d JOIN psu p ON p.id = "
                   "d.psu_id WHERE d.serial = 'EMU0001' AND "
                   "p.username = 'anna'"):
            psd2ctl("device", "break-glass-assign", "EMU0001", "anna",
                    "--reason", "test setup")
        yield emu
    finally:
        emu.stop()
    found = [m for m in psd2lib.SANITIZER_MARKERS if m in emu.log_text()]
    if found:
        pytest.fail("sanitizer report in %s (%s)" % (emu.log_path,
                                                    ", ".join(found)),
                    pytrace=False)


# --------------------------------------------------------------------------
# PSUs, devices, tokens, signed calls

class Payer:
    """A PSU with one EUR account (balance set), a TPP client, a token with
    PAYMENT_INITIATION over that account, and (optionally) an emulated
    authenticator of their own."""

    def __init__(self, psu, client, token, iban, serial):
        self.psu = psu
        self.client = client
        self.token = token
        self.iban = iban
        self.serial = serial


def get_token(client, psu, scope, ibans):
    code, _, _, _ = run_code_flow(client, psu, scope, accounts=ibans)
    r = exchange_code(client, code)
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def set_balance(db, iban, minor):
    sql(db, """INSERT INTO balance (account_id, amount_minor, last_change_at,
               reference_date) SELECT id, %s, now(), current_date
               FROM account WHERE iban = %s ON CONFLICT (account_id)
               DO UPDATE SET amount_minor = EXCLUDED.amount_minor""",
        minor, iban)


@pytest.fixture
def payer_factory(db, emulator):
    added = []

    def make(device=True, balance=100000, scope="PAYMENT_INITIATION",
             client=None):
        psu = make_psu(n_accounts=1)
        iban = psu.accounts[0][0]
        set_balance(db, iban, balance)
        serial = None
        if device:
            serial = emulator.new_serial()
            emulator.cmd("add", serial)
            added.append(serial)
            enrol(db, emulator, serial, psu.username)
        client = client or make_client(redirect_uris=(REDIRECT, NOK_REDIRECT))
        token = get_token(client, psu, scope, [iban])
        return Payer(psu, client, token, iban, serial)
    yield make
    # A test's devices leave with it: umockdev's preload tracks at most 50
    # open device files in a process, and psd2-deviced holds one for every
    # device plugged in (at 50 it aborts in fd_map_add()).
    for serial in added:
        emulator.cmd("unplug", serial, check=False)


@pytest.fixture
def payer(payer_factory):
    return payer_factory()


class Api:
    """Signed calls with the certificate of the token's TPP."""

    def __init__(self, signer, base=MAIN_URL):
        self.signer = signer
        self.base = base

    def call(self, method, path, token=None, body=None, headers=None,
             raw=None, signer=None, base=None):
        h = {"Content-Type": "application/json"}
        if token is not None:
            h["Authorization"] = "Bearer " + token
        h.update(headers or {})
        data = raw if raw is not None else (
            json.dumps(body).encode() if body is not None else b"")
        s = signer or (self.signer.for_token(token) if token else
                       self.signer)
        return s.request(method, (base or self.base) + path, body=data,
                         headers=h, timeout=30, allow_redirects=False)

    def initiate(self, payer, body=None, product="sepa-credit-transfers",
                 decoupled=True, headers=None, **kw):
        h = {"PSU-IP-Address": "192.0.2.10"}
        if decoupled:
            h["TPP-Decoupled-Preferred"] = "true"
        h.update(headers or {})
        return self.call("POST", PAY + "/" + product, payer.token,
                         body if body is not None else payment_body(payer),
                         headers=h, **kw)

    def get(self, path, token, **kw):
        return self.call("GET", path, token, **kw)

    def status(self, payer, pid, product="sepa-credit-transfers", **kw):
        r = self.get("%s/%s/%s/status" % (PAY, product, pid), payer.token,
                     **kw)
        assert r.status_code == 200, r.text
        return r.json()["transactionStatus"]


@pytest.fixture(scope="session")
def api(signer):
    return Api(signer)


def payment_body(payer, amount="12.34", name="Max Mustermann",
                 creditor=CREDITOR, remittance="Invoice 42"):
    b = {"instructedAmount": {"currency": "EUR", "amount": amount},
         "debtorAccount": {"iban": payer.iban},
         "creditorAccount": {"iban": creditor},
         "creditorName": name}
    if remittance is not None:
        b["remittanceInformationUnstructured"] = remittance
    return b


def payment_as_read(payer, status):
    """GET {product}/{paymentId} of payment_body(payer), on either
    surface."""
    return {"instructedAmount": {"currency": "EUR", "amount": "12.34"},
            "debtorAccount": {"iban": payer.iban},
            "creditorAccount": {"iban": CREDITOR},
            "creditorName": "Max Mustermann",
            "remittanceInformationUnstructured": "Invoice 42",
            "transactionStatus": status}


def initiate_redirect(api, payer, base=None, nok=True, amount="12.34"):
    """A redirect payment (no TPP-Decoupled-Preferred): its id and the
    scaRedirect link, the authorisation received (implicit start)."""
    h = {"TPP-Redirect-URI": REDIRECT}
    if nok:
        h["TPP-Nok-Redirect-URI"] = NOK_REDIRECT
    r = api.initiate(payer, decoupled=False, headers=h,
                     body=payment_body(payer, amount=amount), base=base)
    assert r.status_code == 201, r.text
    b = r.json()
    assert "scaRedirect" in b["_links"] and b["scaStatus"] == "received"
    return b["paymentId"], b["_links"]["scaRedirect"]["href"]


@pytest.fixture
def browser():
    """browser(lang): a Chromium for this test, quit at its end."""
    made = []

    def make(lang="en-US"):
        d = psd2lib.chromium(lang)
        made.append(d)
        return d
    yield make
    for d in made:
        psd2lib.quit_chromium(d)


def tpp_error(r, status, code, path=None):
    assert r.status_code == status, (r.status_code, r.text[:500])
    body = r.json()
    assert list(body) == ["tppMessages"], body
    assert len(body["tppMessages"]) == 1, body
    m = body["tppMessages"][0]
    assert m["category"] == "ERROR"
    assert m["code"] == code, body
    if path is not None:
        assert m.get("path") == path, body
    return m


def payment_row(db, pid):
    return sql1(db, """SELECT p.transaction_status, p.reject_reason,
        a.sca_status FROM payment p JOIN payment_authorisation a
        ON a.payment_id = p.id WHERE p.id = %s""", pid)


def wait_status(db, pid, want, timeout=SCA_SECONDS + 15):
    """Waits until the payment's transaction status is one of want."""
    want = (want,) if isinstance(want, str) else tuple(want)
    return wait_for(lambda: (payment_row(db, pid)[0] in want and
                             payment_row(db, pid)),
                    timeout=timeout, interval=0.05,
                    what="payment %s in %s" % (pid, want))


def wait_shown(emu, serial, timeout=SCA_SECONDS):
    """Waits until the device displays a payment."""
    return wait_for(lambda: (lambda s: "PAY" in s and s)(emu.show(serial)),
                    timeout=timeout, what="a payment on %s" % serial)


def balance(db, iban):
    return sql1(db, """SELECT b.amount_minor FROM balance b JOIN account a
        ON a.id = b.account_id WHERE a.iban = %s""", iban)


def token_hash(tok):
    return hashlib.sha256(tok.encode()).digest()
