"""Press to decided (make bench, tests/bench/pis.sh): 50 emulated
authenticators (psd2-emuhost under umockdev, ten devices per host, each
host with its psd2-deviced on the bench database), enrolled with psd2ctl and assigned to the last 50 bench
PSUs. Each round: a signed decoupled payment initiated for every PSU
through the gate instance, shown on every device, the PIN entered; then
every PSU presses confirm at a random moment within a second, and a TPP
polls that payment's status (signed GET, every 5 ms, requests signed
before the round) until it is decided (ACTC, or ACSC once booked). The
figure is the time from the press (just before psd2-emu press runs) to
the first answer showing the decision: the device, the daemon, the
commit, the notification, the service's signature check and decision,
and the poll. Prints one line; exits 1 when a payment is not decided.

usage: pis_press.py GATE_URL STATE_DIR [DEVICES ROUNDS]
Environment: PGPORT (the bench cluster).
"""

import base64
import email.utils
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import psycopg2
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(TOP, os.environ.get("PSD2_BIN_DIR", "build/bin"))
PAY = "/auth/v1/psd2/payments/sepa-credit-transfers"
POLL_MS = 5
PER_HOST = 10           # devices per psd2-emuhost and psd2-deviced
POLLS = 60              # status requests per payment signed before a round

gate, state = sys.argv[1], sys.argv[2]
ndev = int(sys.argv[3]) if len(sys.argv) > 3 else 50
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
KEY = serialization.load_pem_private_key(
    open(os.path.join(TOP, "var/sandbox/tpp.key"), "rb").read(), None)
CERT = x509.load_pem_x509_certificate(
    open(os.path.join(TOP, "var/sandbox/tpp.crt"), "rb").read())
CERT_B64 = base64.b64encode(CERT.public_bytes(
    serialization.Encoding.DER)).decode()
KEY_ID = "SN=%x,CA=%s" % (CERT.serial_number, CERT.issuer.rfc4514_string())
DB = "host=127.0.0.1 port=%s dbname=psd2gate user=psd2gate" % \
    os.environ["PGPORT"]
# psd2-deviced and psd2ctl connect as their own roles (migration 083).
DAEMON_DB = DB.replace("user=psd2gate", "user=psd2_daemon")
OPERATOR_DB = DB.replace("user=psd2gate", "user=psd2_operator")


def signed(token, body=b""):
    rid = str(uuid.uuid4())
    digest = "SHA-256=" + base64.b64encode(
        hashlib.sha256(body).digest()).decode()
    date = email.utils.formatdate(usegmt=True)
    s = "digest: %s\nx-request-id: %s\ndate: %s" % (digest, rid, date)
    sig = base64.b64encode(KEY.sign(s.encode(), padding.PKCS1v15(),
                                    hashes.SHA256())).decode()
    return {"Authorization": "Bearer " + token, "X-Request-ID": rid,
            "Digest": digest, "Date": date, "PSU-IP-Address": "192.0.2.7",
            "TPP-Signing-Certificate": CERT_B64,
            "Signature": 'keyId="%s",algorithm="rsa-sha256",headers="digest '
                         'x-request-id date",signature="%s"' % (KEY_ID, sig)}


def sql(q, *args):
    with psycopg2.connect(DB) as c, c.cursor() as cur:
        cur.execute(q, args)
        return cur.fetchall() if cur.description else None


SOCKET = {}             # serial: the socket of its psd2-emuhost


def emu(*args, check=True):
    for _ in range(100):
        p = subprocess.run([os.path.join(BIN, "psd2-emu")] + list(args),
                           env=dict(os.environ,
                                    PSD2_EMU_SOCKET=SOCKET[args[1]]),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
        # A harness just started may not listen yet.
        if "no emulator harness" not in p.stdout:
            break
        time.sleep(0.1)
    if check and p.returncode != 0:
        raise RuntimeError("psd2-emu %s: %s" % (" ".join(args), p.stdout))
    return p.stdout


def wait(fn, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if fn():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


def start_host(serials, n):
    """One psd2-emuhost with its psd2-deviced (device host bench-N) and
    the given devices: umockdev's preload maps a limited number of file
    descriptors, so 50 devices are spread over a few hosts, as a bank
    spreads its authenticators over device hosts."""
    d = os.path.join(state, "host%d" % n)
    os.makedirs(d)
    sock = os.path.join(d, "emu.sock")
    for s in serials:
        SOCKET[s] = sock
    conf = os.path.join(d, "deviced.conf")
    with open(conf, "w") as f:
        f.write("psd2_db %s sslmode=disable gssencmode=disable\n"
                "psd2_device_vidpid 1209:0001\n"
                "psd2_device_manufacturer_ca %s\n"
                "psd2_device_host bench-%d\n" % (DAEMON_DB, os.path.join(
                    TOP, "device/testkeys/manufacturer-test-ca.pem"), n))
    log = open(os.path.join(d, "emu.log"), "wb")
    proc = subprocess.Popen(
        [os.path.join(BIN, "psd2-emuhost"), "--state", d, "--socket", sock,
         "--manufacturer-key",
         os.path.join(TOP, "device/testkeys/manufacturer-test-key.pem"),
         serials[0], "--", os.path.join(BIN, "psd2-deviced"),
         "--foreground", "--conf", conf],
        cwd=TOP, env=dict(os.environ, LD_PRELOAD="libumockdev-preload.so.0"),
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait(lambda: os.path.exists(sock), "psd2-emuhost")
        # One plug at a time, each recorded by the daemon before the
        # next (umockdev's preload loses plugs that overlap under load).
        for s in serials[1:]:
            emu("add", s)
            wait(lambda: sql("SELECT 1 FROM device WHERE serial = %s", s),
                 "device %s recorded" % s, timeout=20)
    except Exception:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(20)
        raise
    return proc, conf


def start_devices(serials, procs):
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    for n, i in enumerate(range(0, len(serials), PER_HOST)):
        group = serials[i:i + PER_HOST]
        try:
            procs.append(start_host(group, n))
        except RuntimeError as e:
            # Once more from scratch (the devices it recorded stay known).
            print("bench: host %d: %s; starting it again" % (n, e),
                  file=sys.stderr)
            shutil.rmtree(os.path.join(state, "host%d" % n))
            sql("DELETE FROM device WHERE serial = ANY(%s)", group)
            procs.append(start_host(group, n))
    wait(lambda: sql("SELECT count(*) FROM device WHERE serial = ANY(%s)",
                     serials)[0][0] == len(serials), "devices recorded")


def main():
    serials = ["BEMU%04d" % i for i in range(ndev)]
    psus = [r[0] for r in sql(
        "SELECT username FROM psu WHERE username LIKE 'bench-psu-%%' "
        "ORDER BY username DESC LIMIT %s", ndev)]
    assert len(psus) == ndev
    procs = []
    try:
        start_devices(serials, procs)
        conf = os.path.join(os.path.dirname(os.path.dirname(procs[0][1])),
                            "psd2ctl.conf")
        with open(conf, "w") as f:
            f.write("psd2_db %s sslmode=disable gssencmode=disable\n"
                    "psd2_device_manufacturer_ca %s\n" % (
                        OPERATOR_DB, os.path.join(
                            TOP, "device/testkeys/manufacturer-test-ca.pem")))
        # The bench's stand-in authenticators of these PSUs give way.
        sql("DELETE FROM device WHERE serial LIKE 'BENCH%%' AND psu_id IN "
            "(SELECT id FROM psu WHERE username = ANY(%s))", psus)
        for s, u in zip(serials, psus):
            for step in (("enrol", s), ("break-glass-assign", s, u,
                                        "--reason", "bench setup")):
                subprocess.run([os.path.join(BIN, "psd2ctl"), "-c", conf,
                                "device"] + list(step), check=True,
                               stdout=subprocess.DEVNULL)
        tokens = {}
        for u in psus:
            tok = str(uuid.uuid4())
            iban = sql("SELECT a.iban FROM account a JOIN psu p ON "
                       "p.id = a.psu_id WHERE p.username = %s", u)[0][0]
            sql("""INSERT INTO token (token_hash, kind, family, client_id,
                consent_id, scopes, expires_at)
                SELECT sha256(convert_to(%s, 'UTF8')), 'access',
                gen_random_uuid(), 'sandbox-tpp', ca.consent_id,
                '{PAYMENT_INITIATION}', now() + interval '1 hour'
                FROM consent_account ca JOIN account a ON a.id = ca.account_id
                WHERE a.iban = %s""", tok, iban)
            tokens[u] = (tok, iban)
        lat = []
        for r in range(rounds):
            lat += one_round(serials, psus, tokens, r)
    finally:
        for proc, _ in procs:
            proc.send_signal(signal.SIGTERM)
        for proc, _ in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    lat.sort()
    n = len(lat)
    print("press -> decided status seen by a polling TPP: %d devices, %d "
          "presses spread over 1000 ms, polling every %d ms: p50 %.1f ms, "
          "p99 %.1f ms, max %.1f ms (target p99 <= 100 ms)" % (
              ndev, n, POLL_MS, lat[n // 2], lat[n * 99 // 100], lat[-1]))


def one_round(serials, psus, tokens, r):
    s = requests.Session()
    pids = {}
    for dev, u in zip(serials, psus):
        tok, iban = tokens[u]
        body = json.dumps({
            "instructedAmount": {"currency": "EUR", "amount": "1.%02d" % r},
            "debtorAccount": {"iban": iban},
            "creditorAccount": {"iban": "DE89370400440532013000"},
            "creditorName": "Bench Creditor GmbH"}).encode()
        h = signed(tok, body)
        h.update({"Content-Type": "application/json",
                  "TPP-Decoupled-Preferred": "true"})
        resp = s.post(gate + PAY, data=body, headers=h, timeout=30)
        if resp.status_code != 201 or \
                resp.json()["scaStatus"] != "started":
            raise RuntimeError("initiation: %d %s" % (resp.status_code,
                                                      resp.text))
        pids[dev] = resp.json()["paymentId"]
    for dev in serials:
        wait(lambda: "PAY" in emu("show", dev), "payment shown on " + dev)
        emu("pin", dev, "1234")
    # Every poll signed before the round (the TPP's signing is not the
    # service's latency).
    polls = {dev: [signed(tokens[u][0]) for _ in range(POLLS)]
             for dev, u in zip(serials, psus)}
    out, errors = [], []

    def psu(dev):
        sess = requests.Session()
        url = "%s%s/%s/status" % (gate, PAY, pids[dev])
        tok = tokens[psus[serials.index(dev)]][0]
        time.sleep(random.random())
        t0 = time.monotonic()
        emu("press", dev)
        for i in range(2000):
            h = polls[dev][i] if i < POLLS else signed(tok)
            resp = sess.get(url, headers=h, timeout=30)
            st = resp.json().get("transactionStatus")
            if st in ("ACTC", "ACSC"):
                out.append((time.monotonic() - t0) * 1000)
                return
            if st != "RCVD":
                errors.append("%s: %d %s" % (dev, resp.status_code,
                                             resp.text))
                return
            time.sleep(POLL_MS / 1000)
        errors.append("%s: not decided within 2000 polls" % dev)

    threads = [threading.Thread(target=psu, args=(d,)) for d in serials]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors[:5]))
    return out


if __name__ == "__main__":
    # TERM (bench.sh stopping on a failure) runs main's finally, which
    # stops the emulator hosts and their daemons (own sessions).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
