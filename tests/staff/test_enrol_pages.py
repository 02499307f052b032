"""Enrolment on the staff pages: a new emulated authenticator
(psd2-emu add while psd2-deviced runs as psd2_daemon) shows as not
enrolled with the fingerprint its display shows; an operator enrols it in
Chromium after the confirmation page asked to compare the fingerprint
(the service verifies the manufacturer's attestation itself); two
operators assign it (four eyes); it confirms a payment the TPP initiated
over the API (decoupled), which ends ACSC. A forged attestation is
refused with a clear message and changes nothing."""

import json
import os
import re
import secrets
import time

import psd2lib
from psd2lib import Page, exchange_code, make_client, run_code_flow
from staff_lib import (STAFF_URL, audit_max_id, browser_login, form_post,
                       http_login, make_staff, wait_for)
from test_emulated_device import emu, emulator, wait_row  # noqa: F401

REDIRECT = "https://tpp.example/callback"
PAY = "/auth/v1/psd2/payments/sepa-credit-transfers"


def display_fingerprint(state, serial):
    """The key fingerprint on the device's display ("READY serial KEY")."""
    shown = emu(state, "show", serial).stdout
    m = re.search(r"KEY ((?:[0-9A-F]{4} ){7}[0-9A-F]{4})", shown)
    assert m, shown
    return m.group(1)


def enrol_rows(db, since, serial):
    cur = db.cursor()
    cur.execute("SELECT actor, action, detail FROM audit_log WHERE id > %s "
                "AND action = 'device.enrol' AND detail->>'serial' = %s "
                "ORDER BY id", (since, serial))
    return cur.fetchall()


def signed_call(signer, method, path, token, body=None, headers=None):
    h = {"Content-Type": "application/json",
         "Authorization": "Bearer " + token,
         "PSU-IP-Address": "192.0.2.10"}
    h.update(headers or {})
    data = json.dumps(body).encode() if body is not None else b""
    return signer.for_token(token).request(
        method, psd2lib.MAIN_URL + path, body=data, headers=h, timeout=30,
        allow_redirects=False)


def test_new_device_enrolled_on_the_pages_confirms_a_payment(
        emulator, db, driver, psu_factory, signer):
    serial = "ENR" + secrets.token_hex(3).upper()
    p = emu(emulator, "add", serial)
    assert p.returncode == 0, p.stdout + p.stderr
    row = wait_row(db, "SELECT status FROM device WHERE serial = %s",
                   (serial,))
    assert row == ("not_enrolled",), row
    shown = display_fingerprint(emulator, serial)
    a = make_staff("operator")
    b = make_staff("operator")
    since = audit_max_id(db)

    # the list: not enrolled, with the fingerprint the display shows
    browser_login(driver, a)
    driver.get(STAFF_URL + "/staff/devices?status=not_enrolled&q=" + serial)
    tr = wait_for(driver, "device-" + serial)
    assert tr.find_element("css selector", ".status").get_attribute(
        "data-status") == "not_enrolled"
    assert tr.find_element("css selector", ".fingerprint").text == shown
    # Enrol -> the confirmation page asks to compare the fingerprint
    tr.find_element("css selector", ".act-enrol").click()
    assert wait_for(driver, "confirm-fingerprint").text == shown
    assert "compare the key fingerprint" in driver.find_element(
        "id", "confirm-question").text
    driver.find_element("id", "confirm-submit").click()
    wait_for(driver, "staff_done_enrol")
    assert wait_row(db, "SELECT status FROM device WHERE serial = %s AND "
                    "enrolled_at IS NOT NULL", (serial,)) == ("active",)
    rows = enrol_rows(db, since, serial)
    assert [(r[0], r[2]["fingerprint"]) for r in rows] == [
        ("staff:" + a.username, shown)]

    # assignment with four eyes: a requests, b approves
    psu = psu_factory(n_accounts=1)
    driver.get(STAFF_URL + "/staff/devices?q=" + serial)
    wait_for(driver, "device-" + serial).find_element(
        "css selector", ".act-assign_request").click()
    wait_for(driver, "q").send_keys(psu.username)
    driver.find_element("id", "psu-search-submit").click()
    wait_for(driver, "assign-" + psu.username).click()
    wait_for(driver, "staff_done_assign_request")
    driver.delete_all_cookies()
    browser_login(driver, b)
    driver.get(STAFF_URL + "/staff/devices?q=" + serial)
    wait_for(driver, "device-" + serial).find_element(
        "css selector", ".act-assign_approve").click()
    wait_for(driver, "confirm-submit").click()
    wait_for(driver, "staff_done_assign_approve")
    cur = db.cursor()
    cur.execute("SELECT p.username FROM device d JOIN psu p ON "
                "p.id = d.psu_id WHERE d.serial = %s", (serial,))
    assert cur.fetchone() == (psu.username,)

    # a real payment: the TPP initiates it (decoupled), the PSU confirms
    # it on the device, it is booked
    iban = psu.accounts[0][0]
    cur.execute("INSERT INTO balance (account_id, amount_minor, "
                "last_change_at, reference_date) SELECT id, 100000, now(), "
                "current_date FROM account WHERE iban = %s ON CONFLICT "
                "(account_id) DO UPDATE SET amount_minor = 100000", (iban,))
    client = make_client(redirect_uris=(REDIRECT,))
    code, _, _, _ = run_code_flow(client, psu, "PAYMENT_INITIATION",
                                  accounts=[iban])
    r = exchange_code(client, code)
    assert r.status_code == 200, r.text
    token = r.json()["access_token"]
    r = signed_call(signer, "POST", PAY, token, body={
        "instructedAmount": {"currency": "EUR", "amount": "42.00"},
        "debtorAccount": {"iban": iban},
        "creditorAccount": {"iban": "DE89370400440532013000"},
        "creditorName": "Creditor GmbH"},
        headers={"TPP-Decoupled-Preferred": "true"})
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    deadline = time.time() + 30
    while "PAY" not in emu(emulator, "show", serial).stdout:
        assert time.time() < deadline, emu(emulator, "show", serial).stdout
        time.sleep(0.2)
    assert "42" in emu(emulator, "show", serial).stdout
    assert emu(emulator, "pin", serial, "1234").returncode == 0
    assert emu(emulator, "press", serial).returncode == 0
    deadline = time.time() + 30
    while True:
        r = signed_call(signer, "GET", "%s/%s/status" % (PAY, pid), token)
        assert r.status_code == 200, r.text
        status = r.json()["transactionStatus"]
        if status == "ACSC" or time.time() > deadline:
            break
        time.sleep(0.2)
    assert status == "ACSC"


def forged_device(db):
    """A not-enrolled row whose attestation no manufacturer key signed
    (psd2-deviced's attestation_ok says true: the service must not trust
    it)."""
    serial = "FRG" + secrets.token_hex(3).upper()
    cur = db.cursor()
    cur.execute("INSERT INTO device (serial, model, firmware, public_key, "
                "attestation, attestation_ok, host) VALUES (%s, 'PSD2-EMU', "
                "'2.0', %s, %s, true, 'test-host')",
                (serial, b"\x04" + os.urandom(64),
                 bytes.fromhex("3006020101020101")))
    return serial


def test_forged_attestation_is_refused_and_changes_nothing(db):
    serial = forged_device(db)
    since = audit_max_id(db)
    sess = http_login(make_staff("operator"))
    r = sess.get(STAFF_URL + "/staff/devices/confirm",
                 params={"serial": serial, "action": "enrol"})
    assert r.status_code == 200, r.text
    r = form_post(sess, Page(r.text), "confirm-form", {})
    assert r.status_code == 409, r.text
    assert 'id="staff_result_attestation_invalid"' in r.text
    assert "does not verify" in r.text
    cur = db.cursor()
    cur.execute("SELECT status, enrolled_at FROM device WHERE serial = %s",
                (serial,))
    assert cur.fetchone() == ("not_enrolled", None)
    assert enrol_rows(db, since, serial) == []
    # The attempt itself is on the record, with who made it.
    refused = refused_rows(db, since, serial)
    assert len(refused) == 1, refused
    assert refused[0][0].startswith("staff:"), refused
    assert refused[0][1]["reason"] == "attestation does not verify"


def refused_rows(db, since, serial):
    cur = db.cursor()
    cur.execute("SELECT actor, detail FROM audit_log WHERE id > %s AND "
                "action = 'device.enrol.refused' AND detail->>'serial' = %s "
                "ORDER BY id", (since, serial))
    return cur.fetchall()


def test_psd2ctl_refuses_a_forged_attestation_with_an_audit_row(db):
    serial = forged_device(db)
    since = audit_max_id(db)
    p = psd2lib.psd2ctl("device", "enrol", serial, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "attestation does not verify" in p.stderr
    cur = db.cursor()
    cur.execute("SELECT status FROM device WHERE serial = %s", (serial,))
    assert cur.fetchone() == ("not_enrolled",)
    assert enrol_rows(db, since, serial) == []
    refused = refused_rows(db, since, serial)
    assert len(refused) == 1 and refused[0][0].startswith("operator:"), \
        refused


def test_enrol_of_an_active_device_is_refused(db):
    serial = forged_device(db)
    cur = db.cursor()
    cur.execute("UPDATE device SET status = 'active', enrolled_at = now() "
                "WHERE serial = %s", (serial,))
    sess = http_login(make_staff("operator"))
    r = sess.get(STAFF_URL + "/staff/devices", params={"q": serial})
    assert 'class="act-enrol"' not in r.text
    r = sess.get(STAFF_URL + "/staff/devices/confirm",
                 params={"serial": serial, "action": "enrol"})
    r = form_post(sess, Page(r.text), "confirm-form", {})
    assert r.status_code == 409
    assert 'id="staff_result_bad_status"' in r.text


def test_psd2ctl_enrols_as_the_operator_role_with_the_same_audit_row(
        emulator, db):
    serial = "CTL" + secrets.token_hex(3).upper()
    assert emu(emulator, "add", serial).returncode == 0
    assert wait_row(db, "SELECT 1 FROM device WHERE serial = %s",
                    (serial,)) is not None
    shown = display_fingerprint(emulator, serial)
    since = audit_max_id(db)
    out = psd2lib.psd2ctl("device", "enrol", serial).stdout
    assert ("key fingerprint %s" % shown) in out
    rows = enrol_rows(db, since, serial)
    assert len(rows) == 1 and rows[0][0].startswith("operator:")
    assert rows[0][2] == {"serial": serial, "fingerprint": shown}
