"""Bank staff's FIDO2 security keys (WebAuthn), in headless Chromium with
its virtual authenticator on the staff origin of conf/test.conf
(http://localhost:<staff port>): a member adds a key with a "direct"
attestation (Chromium's batch certificate, whose key conf/
chromium-attestation.pem lists, and its AAGUID on the allow-list);
another admin approves it (four eyes), then the member logs in with it;
an admin holding an approved key cannot log in with the TOTP code; an
admin removes a lost key. Refused: a key without attestation or without
user verification, an admin's step on their own key, a replayed or
cloned key. The chain and AAGUID checks themselves are unit-tested
(tests/unit/test_webauthn_trust.c)."""

import pytest
import requests
from selenium.webdriver.common.by import By

import psd2lib
from psd2lib import Page, click_and_wait
from passkeys import authenticator, capture_key_form, copy_key, fill
from passkeys import wait_id, wait_visible
from staff_lib import STAFF_PORT, audit_rows, form_post, http_login
from staff_lib import make_staff, wait_for

ORIGIN = "http://localhost:%d" % STAFF_PORT
CHROMIUM_AAGUID = "01020304-0506-0708-0102-030405060708"


def password(d, member):
    """A fresh login of member on the staff origin, up to the TOTP page."""
    d.delete_all_cookies()
    d.get(ORIGIN + "/staff")
    wait_for(d, "username").send_keys(member.username)
    d.find_element(By.ID, "password").send_keys(member.password)
    click_and_wait(d, d.find_element(By.ID, "login-submit"))
    wait_id(d, "staff-otp-form")


def totp_login(d, member):
    password(d, member)
    fill(d, "otp", member.totp())
    click_and_wait(d, d.find_element(By.ID, "otp-submit"))
    wait_id(d, "staff-role")


def add_key(d, member, name, offer_patch=None):
    """member adds a key on the keys page; returns the page's status."""
    totp_login(d, member)
    d.get(ORIGIN + "/staff/keys")
    wait_visible(d, "key-add")
    if offer_patch:
        d.execute_script(
            "var f = document.getElementById('key-add'),"
            " o = JSON.parse(f.getAttribute('data-offer'));"
            " Object.assign(o, arguments[0]);"
            " f.setAttribute('data-offer', JSON.stringify(o));",
            offer_patch)
    fill(d, "name", name)
    click_and_wait(d, d.find_element(By.ID, "key-add-submit"))
    return d.execute_script(
        "return performance.getEntriesByType('navigation')[0]"
        ".responseStatus")


def key_rows(db, member):
    cur = db.cursor()
    cur.execute("SELECT k.id, k.name, k.approved_by, k.removed_why, "
                "k.aaguid::text FROM staff_key k JOIN staff s "
                "ON s.id = k.staff_id WHERE s.username = %s ORDER BY k.id",
                (member.username,))
    rows = cur.fetchall()
    db.commit()
    return rows


def act(sess, key_id, action):
    r = sess.get(psd2lib_staff_url("/staff/keys"))
    assert r.status_code == 200, r.text
    return form_post(sess, Page(r.text), "key-%s-%d" % (action, key_id), {})


def psd2lib_staff_url(path):
    return "http://127.0.0.1:%d%s" % (STAFF_PORT, path)


def post_action(sess, key_id, action):
    """A step on a key the page offers no form for, with the session's
    CSRF token."""
    page = Page(sess.get(psd2lib_staff_url("/staff/keys")).text)
    return sess.post(psd2lib_staff_url("/staff/keys/action"), data={
        "csrf": page.form("logout-form").hidden()["csrf"],
        "key_id": str(key_id), "action": action}, allow_redirects=False)


def post_key_form(d, fields):
    """Posts the key step's fields from a fresh client holding only this
    browser's pre-login cookie (the form's CSRF binding)."""
    jar = {c["name"]: c["value"] for c in d.get_cookies()
           if c["name"] == "psd2_pre"}
    return requests.post(ORIGIN + "/staff/login/key", data=fields,
                         cookies=jar, allow_redirects=False, timeout=30)


def key_login(d, member):
    """member logs in with the key in the browser; returns an HTTP
    session holding that session's cookie."""
    password(d, member)
    wait_visible(d, "key-form")
    click_and_wait(d, d.find_element(By.ID, "key-submit"))
    wait_id(d, "staff-role")
    sess = psd2lib.http_session()
    sess.cookies.set("psd2_staff", d.get_cookie("psd2_staff")["value"])
    return sess


@pytest.fixture
def approved(driver, db):
    """An admin whose key (in the browser's authenticator) another admin
    approved."""
    member, other = make_staff("admin"), make_staff("admin")
    authenticator(driver)
    assert add_key(driver, member, "Desk key") == 200
    (key_id, name, by, why, aaguid), = key_rows(db, member)
    assert (name, by, why, aaguid) == ("Desk key", None, None,
                                       CHROMIUM_AAGUID)
    r = act(http_login(other), key_id, "approve")
    assert r.status_code == 303, r.text
    return member, other, key_id


def test_new_key_waits_for_another_admin(driver, db):
    member, other = make_staff("admin"), make_staff("admin")
    authenticator(driver)
    assert add_key(driver, member, "Desk key") == 200
    assert "Desk key" in driver.find_element(By.ID, "keys").text
    (key_id, _, by, _, _), = key_rows(db, member)
    assert by is None
    added = [d for _, a, d in audit_rows(db, "staff:" + member.username)
             if a == "staff.key_added"]
    assert added[-1]["aaguid"] == CHROMIUM_AAGUID
    # Not yet approved: the login offers no key, the code still works.
    password(driver, member)
    assert not driver.find_elements(By.ID, "key-form")
    # The member may not approve their own key (four eyes) ...
    r = post_action(http_login(member), key_id, "approve")
    assert r.status_code == 409 and "Four eyes" in r.text, r.text
    # ... nor may an operator approve it, or withdraw it for the member.
    operator = http_login(make_staff("operator"))
    r = post_action(operator, key_id, "approve")
    assert r.status_code == 409 and "administrator" in r.text, r.text
    r = post_action(operator, key_id, "withdraw")
    assert r.status_code == 409, r.text
    assert key_rows(db, member)[0][2] is None
    # Another admin approves it.
    since = max([i for i, _, _ in audit_rows(db, "staff:" + other.username)]
                or [0])
    r = act(http_login(other), key_id, "approve")
    assert r.status_code == 303 and r.headers["Location"] == "/staff/keys"
    assert key_rows(db, member)[0][2] == "staff:" + other.username
    rows = audit_rows(db, "staff:" + other.username, since)
    assert [(a, d["member"]) for _, a, d in rows
            if a == "staff.key_approved"] == [("staff.key_approved",
                                               member.username)]


def test_admin_with_a_key_logs_in_with_it_only(driver, db, approved):
    member, _, key_id = approved
    password(driver, member)
    wait_visible(driver, "key-form")
    # The code is refused, without counting a failure.
    fill(driver, "otp", member.totp())
    click_and_wait(driver, driver.find_element(By.ID, "otp-submit"))
    wait_id(driver, "staff-otp-form")
    assert "security key" in driver.find_element(
        By.CSS_SELECTOR, "p.error").text
    refused = [d for _, a, d in audit_rows(db, "staff:" + member.username)
               if a == "staff.login_failed"]
    assert refused[-1]["outcome"] == "key_required"
    cur = db.cursor()
    cur.execute("SELECT failed_logins FROM staff WHERE username = %s",
                (member.username,))
    assert cur.fetchone()[0] == 0
    db.commit()
    # The key opens the session.
    wait_visible(driver, "key-form")
    click_and_wait(driver, driver.find_element(By.ID, "key-submit"))
    wait_id(driver, "staff-role")
    logins = [d for _, a, d in audit_rows(db, "staff:" + member.username)
              if a == "staff.login"]
    assert logins[-1]["factor"] == "key"


def test_operator_may_use_key_or_code(driver, db):
    member, admin = make_staff("operator"), make_staff("admin")
    authenticator(driver)
    assert add_key(driver, member, "Spare key") == 200
    (key_id, *_), = key_rows(db, member)
    assert act(http_login(admin), key_id, "approve").status_code == 303
    totp_login(driver, member)
    password(driver, member)
    wait_visible(driver, "key-form")
    click_and_wait(driver, driver.find_element(By.ID, "key-submit"))
    wait_id(driver, "staff-role")


def test_lost_key_removed_by_another_admin(driver, db, approved):
    member, other, key_id = approved
    # Not by the member: an admin could otherwise drop back to the code.
    r = post_action(key_login(driver, member), key_id, "remove")
    assert r.status_code == 409 and "Four eyes" in r.text, r.text
    remover = make_staff("admin")
    r = act(http_login(remover), key_id, "remove")
    assert r.status_code == 303, r.text
    assert key_rows(db, member)[0][3] == "removed"
    removed = [d for _, a, d in audit_rows(db, "staff:" + remover.username)
               if a == "staff.key_removed"]
    assert [(d["member"], d["key"]) for d in removed] == [
        (member.username, key_id)]
    # The key no longer signs in; the code works again.
    password(driver, member)
    assert not driver.find_elements(By.ID, "key-form")
    fill(driver, "otp", member.totp())
    click_and_wait(driver, driver.find_element(By.ID, "otp-submit"))
    wait_id(driver, "staff-role")


def test_replayed_assertion_is_refused(driver, db, approved):
    member, _, _ = approved
    password(driver, member)
    wait_visible(driver, "key-form")
    fields = capture_key_form(driver)
    r = post_key_form(driver, fields)
    assert r.status_code == 303 and "psd2_staff" in r.cookies, r.text
    r = post_key_form(driver, fields)
    assert r.status_code == 401 and "psd2_staff" not in r.cookies


def test_cloned_key_is_refused_and_removed(driver, db, approved):
    member, _, key_id = approved
    password(driver, member)
    wait_visible(driver, "key-form")
    click_and_wait(driver, driver.find_element(By.ID, "key-submit"))
    wait_id(driver, "staff-role")
    cred = driver.get_credentials()[0]
    assert cred.sign_count >= 1
    driver.remove_virtual_authenticator()
    authenticator(driver)
    copy_key(driver, cred, 0)
    password(driver, member)
    wait_visible(driver, "key-form")
    click_and_wait(driver, driver.find_element(By.ID, "key-submit"))
    wait_id(driver, "staff-otp-form")
    assert key_rows(db, member)[0][3] == "counter"


@pytest.mark.parametrize("patch", [{"attestation": "none"}])
def test_key_without_attestation_is_refused(driver, db, patch):
    member = make_staff("admin")
    authenticator(driver)
    assert add_key(driver, member, "Unknown maker", patch) == 400
    assert "not added" in driver.find_element(By.TAG_NAME, "main").text
    assert key_rows(db, member) == []


def test_key_without_user_verification_is_refused(driver, db):
    member = make_staff("admin")
    # A security key without a PIN: it makes keys, but cannot verify.
    authenticator(driver, uv=False, verified=False, resident=False)
    assert add_key(driver, member, "No PIN") == 400
    assert "not added" in driver.find_element(By.TAG_NAME, "main").text
    assert key_rows(db, member) == []
