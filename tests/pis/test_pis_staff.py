"""Staff take a PSU's authenticator out of service while a decoupled
payment waits on it: blocking it on the staff pages
(over HTTP, as a browser without JavaScript: the device list's action,
its confirmation page, its form), unassigning or retiring it fails the
challenge in the staff action's own transaction, and the decider (woken
by device_challenge_done) ends the payment RJCT at once. The TPP sees
RJCT and scaStatus failed through GET with a general psuMessage; the
reason 'device blocked' is kept for the PSU and staff, and the staff
page of the PSU shows the payment's SCA outcome (its audit row).

The staff listener runs on a second instance of this suite's
configuration (same database; both instances decide, exactly once). Its
pages are not TPP-facing: they are requested as localhost, a host the
OpenAPI response checker leaves alone."""

import os
import secrets
import time

import pytest

import psd2lib
import psd2_fixtures
from conftest import (PAY, instance_conf, payment_row, sql, sql1, wait_for,
                      wait_shown)
from psd2lib import Page, fresh_totp, psd2ctl, random_base32, unique


STAFF_PORT = psd2lib.test_port("PSD2_TEST_STAFF_PORT", psd2lib.free_port())
STAFF_URL = "http://localhost:%d" % STAFF_PORT


@pytest.fixture(scope="module")
def staff_server(service_setup):
    port = psd2lib.free_port((STAFF_PORT,))
    path = instance_conf("psd2gate-pis-staff", port)
    with open(path) as f:
        text = f.read()
    marker = "include %s" % os.path.join(psd2lib.TOP, "conf", "common.conf")
    assert marker in text, text
    text = text.replace(marker, (
        "server staff {\n\tbind 127.0.0.1 %d\n\ttls no\n}\n%s\n"
        "domain * {\n\tattach staff\n\tinclude %s\n}\n"
        % (STAFF_PORT, marker,
           os.path.join(psd2lib.TOP, "conf", "staff.conf"))))
    with open(path, "w") as f:
        f.write(text)
    srv = psd2_fixtures._start(path, port, "psd2gate-pis-staff", None)
    yield srv
    psd2_fixtures._stop(srv)


def form_post(sess, page, form_id, fields=None):
    form = page.form(form_id)
    assert form is not None, "no form %s" % form_id
    data = dict(form.hidden())
    data.update(fields or {})
    return sess.post(STAFF_URL + form.action, data=data,
                     allow_redirects=False)


def staff_login(role="operator"):
    username = unique("st")
    password = "pw-" + secrets.token_urlsafe(12)
    secret = random_base32()
    psd2ctl("staff", "add", username, "--password", password,
            "--totp-secret", secret, "--name", "Staff " + username[-6:],
            "--role", role)
    sess = psd2lib.http_session()
    r = sess.get(STAFF_URL + "/staff")
    assert r.status_code == 200, r.text
    r = form_post(sess, Page(r.text), "staff-login-form",
                  {"username": username, "password": password})
    assert r.status_code == 200, r.text
    r = form_post(sess, Page(r.text), "staff-otp-form",
                  {"otp": fresh_totp("staff:" + username, secret)})
    assert r.status_code == 303, (r.status_code, r.text)
    return username, sess


def staff_act(sess, serial, action):
    """The device list's action link, its confirmation page, its form."""
    r = sess.get(STAFF_URL + "/staff/devices", params={"q": serial})
    assert r.status_code == 200, r.text
    assert ("device-%s" % serial) in r.text
    r = sess.get(STAFF_URL + "/staff/devices/confirm", params={
        "serial": serial, "action": action, "q": ""})
    assert r.status_code == 200, r.text
    assert serial in Page(r.text).by_id["confirm-serial"].text
    return form_post(sess, Page(r.text), "confirm-form")


def tpp_sees(api, payer, pid):
    base = "%s/sepa-credit-transfers/%s" % (PAY, pid)
    st = api.get(base + "/status", payer.token)
    assert st.status_code == 200, st.text
    auth = api.get(base + "/authorisations", payer.token).json()
    sca = api.get(base + "/authorisations/" + auth["authorisationIds"][0],
                  payer.token)
    assert sca.status_code == 200, sca.text
    return st.json(), sca.json()


def sca_audit(db, pid):
    return sql(db, """SELECT actor, detail FROM audit_log WHERE action =
        'payment.sca' AND detail->>'payment' = %s ORDER BY id""", pid)


@pytest.mark.parametrize("action, detail", [
    ("block", "device blocked"),
    ("unassign", "device unassigned"),
    ("retire", "device retired")])
def test_staff_action_rejects_the_waiting_payment_at_once(
        staff_server, api, db, emulator, payer, action, detail):
    _, sess = staff_login()
    r = api.initiate(payer)
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    assert tpp_sees(api, payer, pid)[0] == {"transactionStatus": "RCVD"}

    t0 = time.time()
    r = staff_act(sess, payer.serial, action)
    assert r.status_code == 200, r.text
    assert ("staff_done_" + action) in r.text
    # The TPP, polling, sees the decision at once: RJCT, scaStatus
    # failed, a general message that names no element (RTS Art. 4(3)(a)).
    st, sca = wait_for(
        lambda: (lambda s: s[0]["transactionStatus"] == "RJCT" and s)(
            tpp_sees(api, payer, pid)),
        timeout=5, interval=0.05, what="RJCT seen by the TPP")
    assert time.time() - t0 < 2, "not at once"
    assert set(st) == {"transactionStatus", "psuMessage"}
    assert sca["scaStatus"] == "failed"
    assert "block" not in st["psuMessage"].lower()
    assert "device" not in st["psuMessage"].lower()
    # Kept for the PSU and staff.
    assert payment_row(db, pid) == ("RJCT", "device blocked", "failed")
    assert sql1(db, "SELECT reject_detail FROM payment WHERE id = %s",
                pid) == detail
    # The device's display clears; a press now changes nothing.
    wait_for(lambda: "PAY" not in emulator.show(payer.serial), timeout=10,
             what="the display cleared")
    emulator.cmd("press", payer.serial, check=False)
    time.sleep(0.5)
    assert payment_row(db, pid)[0] == "RJCT"
    # One SCA outcome row, on the staff page of the PSU.
    rows = sca_audit(db, pid)
    assert len(rows) == 1
    assert rows[0][0] == "psu:" + payer.psu.username
    assert rows[0][1]["outcome"] == "failed"
    assert rows[0][1]["reason"] == "device blocked"
    assert rows[0][1]["device"] == payer.serial
    r = sess.get(STAFF_URL + "/staff/psu",
                 params={"username": payer.psu.username})
    assert r.status_code == 200, r.text
    events = Page(r.text).by_id["psu-events"].text
    assert "payment.sca" in events and pid in events
    assert "device blocked" in events
    assert ("device." + action) in events


def test_tpp_name_keeps_the_text_rule(staff_server, db):
    """PSUs read a TPP's name when they consent: the staff page refuses a
    name that breaks the rule for such text (400, nothing stored; the
    form's validator already keeps it to printable ASCII, the rule adds
    the spacing) and stores a good one."""
    _, sess = staff_login("admin")
    org = "PSDDE-BAFIN-%d" % secrets.randbelow(10 ** 9)
    for bad in ("Good Bank \u202eKNAB LIVE", "Good  Bank", " Good Bank",
                "Good Bank "):
        page = Page(sess.get(STAFF_URL + "/staff/tpps").text)
        r = form_post(sess, page, "tpp-register",
                      {"name": bad, "org_id": org})
        assert r.status_code == 400, (bad, r.status_code)
        assert sql1(db, "SELECT count(*) FROM tpp WHERE org_id = %s",
                    org) == 0
    page = Page(sess.get(STAFF_URL + "/staff/tpps").text)
    r = form_post(sess, page, "tpp-register",
                  {"name": "Good Bank", "org_id": org})
    assert r.status_code == 200, (r.status_code, r.text[-1500:])
    assert sql1(db, "SELECT name FROM tpp WHERE org_id = %s",
                org) == "Good Bank"
