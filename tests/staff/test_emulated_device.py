"""A new emulated authenticator: plugged in with psd2-emu add
while psd2-deviced runs as the daemon's database role (psd2_daemon), it
shows as not enrolled on the staff page with the fingerprint psd2ctl
prints at enrolment; enrolled (psd2ctl as the operator's role: the
attestation is verified there; test_enrol_pages.py enrols on the pages),
assigned on the pages with four eyes, it confirms a challenge on
its keypad (PIN, then confirm)."""

import os
import secrets
import signal
import subprocess
import time

import pytest

import psd2lib
from psd2lib import Page
from staff_lib import STAFF_URL, form_post, http_login, make_staff

TOP = psd2lib.TOP
BIN = psd2lib.bin_dir()


def emu(state, *args):
    env = dict(os.environ, PSD2_EMU_SOCKET=os.path.join(state, "emu.sock"))
    return subprocess.run([os.path.join(BIN, "psd2-emu")] + list(args),
                          cwd=TOP, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=30)


def device_conf(path, user):
    with open(path, "w") as f:
        f.write("psd2_db host=127.0.0.1 port=%s dbname=psd2gate user=%s "
                "sslmode=disable gssencmode=disable\n"
                "psd2_device_vidpid 1209:0001\n"
                "psd2_device_manufacturer_ca %s\n"
                "psd2_device_host staff-test\n"
                "psd2_device_lease_seconds 30\n"
                "psd2_device_busy_retry_ms 2000\n" % (
                    os.environ["PGPORT"], user,
                    os.path.join(TOP, "device", "testkeys",
                                 "manufacturer-test-ca.pem")))
    return path


@pytest.fixture
def emulator(tmp_path):
    state = str(tmp_path)
    conf = device_conf(os.path.join(state, "deviced.conf"), "psd2_daemon")
    first = "STF" + secrets.token_hex(3).upper()
    log = open(os.path.join(state, "emu.log"), "wb")
    env = psd2lib.umockdev_env()
    proc = subprocess.Popen(
        [os.path.join(BIN, "psd2-emuhost"), "--state", state, "--socket",
         os.path.join(state, "emu.sock"), "--manufacturer-key",
         os.path.join(TOP, "device", "testkeys",
                      "manufacturer-test-key.pem"), first, "--",
         os.path.join(BIN, "psd2-deviced"), "--foreground", "--conf", conf],
        cwd=TOP, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    deadline = time.time() + 20
    while not os.path.exists(os.path.join(state, "emu.sock")):
        assert proc.poll() is None and time.time() < deadline, \
            open(os.path.join(state, "emu.log")).read()
        time.sleep(0.1)
    yield state
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    log.close()


def wait_row(db, sql, params, timeout=20):
    cur = db.cursor()
    deadline = time.time() + timeout
    while True:
        cur.execute(sql, params)
        row = cur.fetchone()
        if row is not None or time.time() > deadline:
            return row
        time.sleep(0.2)


def test_new_device_enrolled_assigned_and_confirming(emulator, db,
                                                     psu_factory):
    serial = "NEW" + secrets.token_hex(3).upper()
    p = emu(emulator, "add", serial)
    assert p.returncode == 0, p.stdout + p.stderr
    row = wait_row(db, "SELECT status, host, attestation_ok FROM device "
                   "WHERE serial = %s", (serial,))
    assert row == ("not_enrolled", "staff-test", True), row
    a = make_staff("operator")
    b = make_staff("operator")
    sa = http_login(a)
    page = sa.get(STAFF_URL + "/staff/devices",
                  params={"status": "not_enrolled", "q": serial}).text
    assert 'id="device-%s"' % serial in page
    # enrolment: psd2ctl verifies the manufacturer's attestation and
    # prints the fingerprint staff compare with the page and the label
    ctl_conf = device_conf(os.path.join(emulator, "ctl.conf"),
                           "psd2_operator")
    out = psd2lib.psd2ctl("device", "enrol", serial, conf=ctl_conf).stdout
    fpr = [ln.split("key fingerprint ", 1)[1] for ln in out.splitlines()
           if ln.startswith("key fingerprint ")][0]
    assert fpr in page
    psu = psu_factory()
    r = sa.get(STAFF_URL + "/staff/devices/confirm", params={
        "serial": serial, "action": "assign_request", "q": psu.username})
    form = [f for f in Page(r.text).forms
            if f.hidden().get("psu") == psu.username][0]
    r = sa.post(STAFF_URL + form.action, data=form.hidden(),
                allow_redirects=False)
    assert r.status_code == 200, r.text
    sb = http_login(b)
    r = sb.get(STAFF_URL + "/staff/devices/confirm", params={
        "serial": serial, "action": "assign_approve"})
    r = form_post(sb, Page(r.text), "confirm-form", {})
    assert r.status_code == 200, r.text
    # a challenge as the service writes it; the PSU confirms on the device
    cur = db.cursor()
    cur.execute("INSERT INTO device_challenge (device_serial, psu_id, nonce, "
                "amount_minor, currency, payee_name, payee_iban, deadline) "
                "SELECT %s, id, decode(md5(random()::text) || "
                "md5(random()::text), 'hex'), 4200, 'EUR', 'Creditor GmbH', "
                "'DE89370400440532013000', now() + interval '60 s' "
                "FROM psu WHERE username = %s RETURNING id",
                (serial, psu.username))
    cid = cur.fetchone()[0]
    assert wait_row(db, "SELECT 1 FROM device_challenge WHERE id = %s AND "
                    "status = 'claimed'", (cid,)) is not None
    deadline = time.time() + 20
    while "42" not in emu(emulator, "show", serial).stdout:
        assert time.time() < deadline, emu(emulator, "show", serial).stdout
        time.sleep(0.2)
    assert emu(emulator, "pin", serial, "1234").returncode == 0
    assert emu(emulator, "press", serial).returncode == 0
    row = wait_row(db, "SELECT status, outcome FROM device_challenge "
                   "WHERE id = %s AND status <> 'claimed'", (cid,))
    assert row == ("done", "approved"), row
