"""Authenticator pages: list, filter and search,
assignment with four eyes, unassign, block (failing the PSU's waiting
challenge at once), retire, the PSU page, and psd2ctl device
unassign|retire writing the same audit rows. Devices are rows as
psd2-deviced records them (device/PROTOCOL.md 7.2)."""

import getpass
import hashlib
import os
import secrets

import pytest

import psd2lib
from psd2lib import Page
from staff_lib import (STAFF_URL, audit_max_id, browser_login, form_post,
                       http_login, make_staff, wait_for)


def fingerprint(key):
    h = hashlib.sha256(key).hexdigest().upper()[:32]
    return " ".join(h[i:i + 4] for i in range(0, 32, 4))


@pytest.fixture
def new_device(db):
    def make(status="active", psu=None):
        serial = "T" + secrets.token_hex(5).upper()
        key = b"\x04" + os.urandom(64)
        cur = db.cursor()
        cur.execute("INSERT INTO device (serial, model, firmware, public_key, "
                    "attestation, attestation_ok, host, status, psu_id, "
                    "enrolled_at) VALUES (%s, 'PSD2-EMU', '2.0', %s, "
                    "'\\x00', true, 'test-host', %s, (SELECT id FROM psu "
                    "WHERE username = %s), CASE WHEN %s = 'active' THEN "
                    "now() END)", (serial, key, status, psu, status))
        return serial, key
    return make


def device(db, serial):
    cur = db.cursor()
    cur.execute("SELECT d.status, p.username FROM device d LEFT JOIN psu p "
                "ON p.id = d.psu_id WHERE serial = %s", (serial,))
    return cur.fetchone()


def actions_since(db, since, serial):
    cur = db.cursor()
    cur.execute("SELECT actor, action, detail FROM audit_log WHERE id > %s "
                "AND detail->>'serial' = %s ORDER BY id", (since, serial))
    return cur.fetchall()


def act(sess, serial, action, psu=None):
    """The confirmation page, then its form (as a browser without JS)."""
    r = sess.get(STAFF_URL + "/staff/devices/confirm", params={
        "serial": serial, "action": action, "q": psu or ""})
    assert r.status_code == 200, r.text
    page = Page(r.text)
    if action == "assign_request":
        forms = [f for f in page.forms if f.attrs.get("class") ==
                 "assign-form" and f.hidden().get("psu") == psu]
        assert forms, r.text
        data = forms[0].hidden()
        return sess.post(STAFF_URL + forms[0].action, data=data,
                         allow_redirects=False)
    return form_post(sess, page, "confirm-form", {})


def test_list_shows_filters_and_searches(new_device, psu_factory, operator):
    psu = psu_factory()
    s1, k1 = new_device("not_enrolled")
    s2, k2 = new_device("active", psu.username)
    sess = http_login(operator)
    # 50 devices a page (sorted by serial): the suite's own devices may
    # fill the first page, so each is looked up by its serial
    for serial, key in ((s1, k1), (s2, k2)):
        r = sess.get(STAFF_URL + "/staff/devices", params={"q": serial})
        assert r.status_code == 200
        page = Page(r.text)
        assert page.find("tr", id="device-" + serial) is not None
        assert fingerprint(key) in r.text
    r = sess.get(STAFF_URL + "/staff/devices",
                 params={"status": "not_enrolled", "q": s1})
    assert "device-" + s1 in r.text
    r = sess.get(STAFF_URL + "/staff/devices",
                 params={"status": "not_enrolled", "q": s2})
    assert "device-" + s2 not in r.text
    r = sess.get(STAFF_URL + "/staff/devices", params={"q": psu.username})
    assert "device-" + s2 in r.text and "device-" + s1 not in r.text
    r = sess.get(STAFF_URL + "/staff/devices", params={"q": s1.lower()})
    assert "device-" + s1 in r.text and "device-" + s2 not in r.text
    r = sess.get(STAFF_URL + "/staff/devices",
                 params={"q": "<script>x</script>"})
    assert "<script>x" not in r.text and "&lt;script&gt;x" in r.text


def test_assignment_needs_a_second_staff_member(driver, new_device,
                                                psu_factory, db):
    psu = psu_factory()
    serial, key = new_device("active")
    a = make_staff("operator")
    b = make_staff("operator")
    since = audit_max_id(db)
    # a requests in Chromium: the confirmation page searches the PSU
    browser_login(driver, a)
    driver.get(STAFF_URL + "/staff/devices?q=" + serial)
    driver.find_element("css selector", "#device-%s .act-assign_request" %
                        serial).click()
    wait_for(driver, "q").send_keys(psu.name)
    driver.find_element("id", "psu-search-submit").click()
    wait_for(driver, "assign-" + psu.username).click()
    wait_for(driver, "staff_done_assign_request")
    assert device(db, serial) == ("active", None)
    # the requester cannot approve their own request
    sa = http_login(a)
    r = act(sa, serial, "assign_approve")
    assert r.status_code == 409 and "staff_result_same_person" in r.text
    assert device(db, serial) == ("active", None)
    # b approves: now it is the PSU's
    sb = http_login(b)
    r = act(sb, serial, "assign_approve")
    assert r.status_code == 200, r.text
    assert device(db, serial) == ("active", psu.username)
    rows = actions_since(db, since, serial)
    assert [(x[0], x[1]) for x in rows] == [
        ("staff:" + a.username, "device.assign_request"),
        ("staff:" + b.username, "device.assign_approve")]
    assert rows[1][2]["psu"] == psu.username
    # the PSU page shows the history
    r = sb.get(STAFF_URL + "/staff/psu", params={"username": psu.username})
    assert r.status_code == 200
    assert serial in r.text and "device.assign_approve" in r.text
    assert fingerprint(key) in r.text


def test_a_psu_has_at_most_one_active_device(new_device, psu_factory, db):
    psu = psu_factory()
    first, _ = new_device("active", psu.username)
    second, _ = new_device("active")
    sess = http_login(make_staff("operator"))
    r = act(sess, second, "assign_request", psu.username)
    assert r.status_code == 409 and "staff_result_psu_has_device" in r.text
    cur = db.cursor()
    with pytest.raises(Exception) as e:
        cur.execute("UPDATE device SET psu_id = (SELECT id FROM psu WHERE "
                    "username = %s) WHERE serial = %s", (psu.username,
                                                          second))
    assert "device_one_active_per_psu" in str(e.value)


def test_block_fails_the_waiting_challenge_at_once(nojs_driver, new_device,
                                                   psu_factory, db):
    psu = psu_factory()
    serial, _ = new_device("active", psu.username)
    cur = db.cursor()
    cur.execute("INSERT INTO device_challenge (device_serial, psu_id, nonce, "
                "amount_minor, currency, payee_name, payee_iban, deadline) "
                "SELECT %s, id, decode(repeat('ab', 32), 'hex'), 1234, "
                "'EUR', 'Creditor GmbH', 'DE89370400440532013000', now() + "
                "interval '5 min' FROM psu WHERE username = %s RETURNING id",
                (serial, psu.username))
    challenge = cur.fetchone()[0]
    since = audit_max_id(db)
    member = make_staff("operator")
    browser_login(nojs_driver, member)
    nojs_driver.get(STAFF_URL + "/staff/devices?q=" + serial)
    nojs_driver.find_element("css selector", "#device-%s .act-block" %
                             serial).click()
    assert serial in wait_for(nojs_driver, "confirm-serial").text
    assert device(db, serial)[0] == "active"   # nothing before confirming
    nojs_driver.find_element("id", "confirm-submit").click()
    wait_for(nojs_driver, "staff_done_block")
    assert device(db, serial)[0] == "blocked"
    cur.execute("SELECT status, failure_reason FROM device_challenge "
                "WHERE id = %s", (challenge,))
    assert cur.fetchone() == ("failed", "device blocked")
    rows = actions_since(db, since, serial)
    assert rows[0][1] == "device.block"
    assert rows[0][2]["failed_challenges"] == 1


def test_unassign_and_retire(new_device, psu_factory, db):
    psu = psu_factory()
    serial, _ = new_device("active", psu.username)
    sess = http_login(make_staff("operator"))
    assert act(sess, serial, "unassign").status_code == 200
    assert device(db, serial) == ("active", None)
    assert act(sess, serial, "retire").status_code == 200
    assert device(db, serial)[0] == "retired"
    r = act(sess, serial, "retire")
    assert r.status_code == 409 and "staff_result_bad_status" in r.text


def test_action_without_or_with_foreign_csrf_changes_nothing(new_device,
                                                             operator, db):
    serial, _ = new_device("active")
    sess = http_login(operator)
    other = http_login(make_staff("operator"))
    page = Page(other.get(STAFF_URL + "/staff/devices/confirm", params={
        "serial": serial, "action": "block"}).text)
    foreign = page.form("confirm-form").hidden()["csrf"]
    for data in ({"serial": serial, "action": "block"},
                 {"serial": serial, "action": "block", "csrf": foreign}):
        r = sess.post(STAFF_URL + "/staff/devices/action", data=data,
                      allow_redirects=False)
        assert r.status_code == 403
    assert device(db, serial)[0] == "active"
    # and no session at all: back to the login page
    r = psd2lib.http_session().post(
        STAFF_URL + "/staff/devices/action", data={
            "serial": serial, "action": "block", "csrf": foreign},
        allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == "/staff"
    assert device(db, serial)[0] == "active"


def test_device_pages_in_german(new_device, operator):
    serial, _ = new_device("not_enrolled")
    sess = http_login(operator)
    r = sess.get(STAFF_URL + "/staff/devices",
                 params={"q": serial, "lang": "de"})
    assert "Authentifikatoren" in r.text and "nicht registriert" in r.text


def test_psd2ctl_unassign_and_retire_write_audit_rows(new_device,
                                                      psu_factory, db):
    psu = psu_factory()
    serial, _ = new_device("active", psu.username)
    since = audit_max_id(db)
    p = psd2lib.psd2ctl("device", "unassign", serial)
    assert "unassign done" in p.stdout
    p = psd2lib.psd2ctl("device", "retire", serial)
    assert "retire done" in p.stdout
    p = psd2lib.psd2ctl("device", "retire", serial, check=False)
    assert p.returncode == 1
    actor = "operator:" + getpass.getuser()
    assert [(a, x) for a, x, _ in actions_since(db, since, serial)] == [
        (actor, "device.unassign"), (actor, "device.retire")]
    assert device(db, serial) == ("retired", None)


def test_psd2ctl_assign_requests_and_a_second_person_approves(
        new_device, psu_factory, db):
    """psd2ctl keeps four eyes too: assign is a request; its requester
    cannot approve it; a staff member can."""
    psu = psu_factory()
    serial, _ = new_device("active")
    since = audit_max_id(db)
    p = psd2lib.psd2ctl("device", "assign", serial, psu.username)
    assert "requested" in p.stdout
    assert device(db, serial) == ("active", None)
    p = psd2lib.psd2ctl("device", "approve", serial, check=False)
    assert p.returncode == 1 and "request is yours" in p.stderr
    assert device(db, serial) == ("active", None)
    b = make_staff("operator")
    r = act(http_login(b), serial, "assign_approve")
    assert r.status_code == 200, r.text
    assert device(db, serial) == ("active", psu.username)
    actor = "operator:" + getpass.getuser()
    assert [(a, x) for a, x, _ in actions_since(db, since, serial)] == [
        (actor, "device.assign_request"),
        ("staff:" + b.username, "device.assign_approve")]


def test_psd2ctl_approves_or_rejects_a_staff_request(new_device,
                                                     psu_factory, db):
    psu = psu_factory()
    serial, _ = new_device("active")
    sa = http_login(make_staff("operator"))
    assert act(sa, serial, "assign_request", psu.username).status_code == 200
    p = psd2lib.psd2ctl("device", "reject", serial)
    assert "rejected" in p.stdout
    assert device(db, serial) == ("active", None)
    assert act(sa, serial, "assign_request", psu.username).status_code == 200
    p = psd2lib.psd2ctl("device", "approve", serial)
    assert "approved" in p.stdout
    assert device(db, serial) == ("active", psu.username)
    p = psd2lib.psd2ctl("device", "approve", serial, check=False)
    assert p.returncode == 1 and "no assignment" in p.stderr


def test_break_glass_assigns_at_once_with_its_own_audit_row(
        new_device, psu_factory, db):
    psu = psu_factory()
    serial, _ = new_device("active")
    # a pending request by staff is withdrawn by the break-glass
    sa = http_login(make_staff("operator"))
    assert act(sa, serial, "assign_request", psu.username).status_code == 200
    since = audit_max_id(db)
    for args in (("break-glass-assign", serial, psu.username),
                 ("break-glass-assign", serial, psu.username, "--reason")):
        p = psd2lib.psd2ctl("device", *args, check=False)
        assert p.returncode == 2
    p = psd2lib.psd2ctl("device", "break-glass-assign", serial,
                        psu.username, "--reason", " ", check=False)
    assert p.returncode == 1 and "needs a reason" in p.stderr
    assert device(db, serial) == ("active", None)
    p = psd2lib.psd2ctl("device", "break-glass-assign", serial,
                        psu.username, "--reason", "PSU at the branch, "
                        "ticket 4711")
    assert "break-glass" in p.stdout
    assert device(db, serial) == ("active", psu.username)
    rows = actions_since(db, since, serial)
    assert [(a, x) for a, x, _ in rows] == [
        ("operator:" + getpass.getuser(), "device.assign_break_glass")]
    assert rows[0][2] == {"serial": serial, "psu": psu.username,
                          "reason": "PSU at the branch, ticket 4711"}
    cur = db.cursor()
    cur.execute("SELECT status FROM device_assignment WHERE "
                "device_serial = %s", (serial,))
    assert cur.fetchall() == [("withdrawn",)]
