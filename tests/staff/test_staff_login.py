"""Staff login on the staff listener: password and
TOTP, a session cookie scoped to /staff with a 15-minute idle timeout, the
PSU lockout rules, roles, and the refusals: /staff on the public port, a
missing or foreign CSRF token, an expired session, a PSU cookie on a staff
page and a staff cookie on a PSU page."""

import hashlib
import uuid

import requests
from selenium.webdriver.support.ui import WebDriverWait

import psd2lib
from psd2lib import Page
from staff_lib import (STAFF_URL, audit_max_id, audit_rows, browser_login,
                       form_post, http_login, make_staff)

SECURITY_HEADERS = ("Content-Security-Policy", "X-Content-Type-Options",
                    "X-Frame-Options", "Referrer-Policy", "Cache-Control")


def test_staff_routes_exist_only_on_the_staff_listener():
    for path in ("/staff", "/staff/home"):
        r = requests.get(psd2lib.MAIN_URL + path, allow_redirects=False)
        assert r.status_code == 404, (path, r.status_code)
    r = requests.post(psd2lib.MAIN_URL + "/staff/login",
                      data={"username": "staff"}, allow_redirects=False)
    assert r.status_code == 404
    r = requests.get(STAFF_URL + "/staff")
    assert r.status_code == 200
    assert Page(r.text).form("staff-login-form") is not None
    # and the public pages are not on the staff listener
    r = requests.get(STAFF_URL + "/auth/consents", allow_redirects=False)
    assert r.status_code == 404


def test_staff_pages_carry_the_psu_pages_strict_headers():
    psu_page = requests.get(psd2lib.MAIN_URL + "/auth/consents")
    staff_page = requests.get(STAFF_URL + "/staff")
    for h in SECURITY_HEADERS:
        assert staff_page.headers.get(h), h
        assert staff_page.headers.get(h) == psu_page.headers.get(h), h


def test_browser_login_operator_and_logout(driver, operator, db):
    since = audit_max_id(db)
    browser_login(driver, operator)
    assert driver.current_url == STAFF_URL + "/staff/home"
    assert driver.find_element("id", "staff-role").text == "operator"
    assert operator.name in driver.find_element("id", "staff-welcome").text
    cookie = driver.get_cookie("psd2_staff")
    assert cookie is not None and cookie["path"] == "/staff"
    assert cookie["httpOnly"]
    rows = audit_rows(db, "staff:" + operator.username, since)
    assert [r[1] for r in rows] == ["staff.login"]
    driver.find_element("id", "logout-submit").click()
    # The logout posts and redirects: wait for the login page.
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url == STAFF_URL + "/staff")
    assert driver.find_element("id", "staff-login-form")
    driver.get(STAFF_URL + "/staff/home")
    assert driver.current_url == STAFF_URL + "/staff"
    rows = audit_rows(db, "staff:" + operator.username, since)
    assert [r[1] for r in rows] == ["staff.login", "staff.logout"]


def test_browser_login_admin_in_german(driver, admin):
    browser_login(driver, admin, lang="de")
    assert driver.find_element("id", "staff-role").text == "admin"
    assert driver.find_element("tag name", "h1").text == "Mitarbeiterportal"
    assert driver.find_element("id", "logout-submit").text == "Abmelden"


def test_wrong_password_and_wrong_code_are_audited(operator, db):
    since = audit_max_id(db)
    sess = psd2lib.http_session()
    page = Page(sess.get(STAFF_URL + "/staff").text)
    r = form_post(sess, page, "staff-login-form",
                  {"username": operator.username, "password": "wrong"})
    assert r.status_code == 401
    assert Page(r.text).form("staff-login-form") is not None
    r = form_post(sess, Page(r.text), "staff-login-form",
                  {"username": operator.username,
                   "password": operator.password})
    assert r.status_code == 200
    r = form_post(sess, Page(r.text), "staff-otp-form", {"otp": "000000"
                  if operator.totp() != "000000" else "111111"})
    assert r.status_code == 401
    assert "psd2_staff" not in sess.cookies
    rows = audit_rows(db, "staff:" + operator.username, since)
    assert [(a, d["factor"]) for _, a, d in rows] == [
        ("staff.login_failed", "password"), ("staff.login_failed", "totp")]
    # unknown users are audited under the name typed
    name = "nobody-" + uuid.uuid4().hex[:8]
    page = Page(sess.get(STAFF_URL + "/staff").text)
    r = form_post(sess, page, "staff-login-form",
                  {"username": name, "password": "x"})
    assert r.status_code == 401
    assert [a for _, a, _ in audit_rows(db, "staff:" + name, since)] == \
        ["staff.login_failed"]


def test_lockout_after_five_failures(db):
    member = make_staff("operator")
    sess = psd2lib.http_session()
    for _ in range(5):
        page = Page(sess.get(STAFF_URL + "/staff").text)
        r = form_post(sess, page, "staff-login-form",
                      {"username": member.username, "password": "bad"})
        assert r.status_code == 401
    page = Page(sess.get(STAFF_URL + "/staff").text)
    r = form_post(sess, page, "staff-login-form",
                  {"username": member.username, "password": member.password})
    assert r.status_code == 403
    assert 'id="locked"' in r.text
    cur = db.cursor()
    cur.execute("SELECT locked_until > now() FROM staff WHERE username = %s",
                (member.username,))
    assert cur.fetchone()[0] is True
    assert "staff.locked" in [a for _, a, _ in audit_rows(
        db, "staff:" + member.username)]


def test_login_form_without_or_with_foreign_csrf_is_refused(operator):
    sess = psd2lib.http_session()
    page = Page(sess.get(STAFF_URL + "/staff").text)
    form = page.form("staff-login-form")
    data = dict(form.hidden(), username=operator.username,
                password=operator.password)
    r = sess.post(STAFF_URL + "/staff/login",
                  data={k: v for k, v in data.items() if k != "csrf"},
                  allow_redirects=False)
    assert r.status_code == 403
    # a CSRF token issued to another browser
    other = psd2lib.http_session()
    other_page = Page(other.get(STAFF_URL + "/staff").text)
    data2 = dict(data, csrf=other_page.form("staff-login-form").hidden()[
        "csrf"])
    r = sess.post(STAFF_URL + "/staff/login", data=data2,
                  allow_redirects=False)
    assert r.status_code == 403
    # a PSU login form's pre-login cookie and token are not the staff's
    r = sess.post(STAFF_URL + "/staff/login", data=data,
                  allow_redirects=False)
    assert r.status_code == 200


def test_logout_needs_the_sessions_csrf_token(operator):
    a = http_login(operator)
    b = http_login(make_staff("operator"))
    home_a = Page(a.get(STAFF_URL + "/staff/home").text)
    home_b = Page(b.get(STAFF_URL + "/staff/home").text)
    r = a.post(STAFF_URL + "/staff/logout", data={}, allow_redirects=False)
    assert r.status_code == 403
    foreign = home_b.form("logout-form").hidden()["csrf"]
    r = a.post(STAFF_URL + "/staff/logout", data={"csrf": foreign},
               allow_redirects=False)
    assert r.status_code == 403
    assert a.get(STAFF_URL + "/staff/home",
                 allow_redirects=False).status_code == 200
    r = form_post(a, home_a, "logout-form", {})
    assert r.status_code == 303
    assert a.get(STAFF_URL + "/staff/home",
                 allow_redirects=False).status_code == 303


def test_expired_session_goes_back_to_login(operator, db):
    sess = http_login(operator)
    assert sess.get(STAFF_URL + "/staff/home",
                    allow_redirects=False).status_code == 200
    digest = hashlib.sha256(sess.cookies["psd2_staff"].encode()).digest()
    cur = db.cursor()
    cur.execute("UPDATE web_session SET expires_at = now() - interval '1 s' "
                "WHERE id_hash = %s", (digest,))
    assert cur.rowcount == 1
    r = sess.get(STAFF_URL + "/staff/home", allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == "/staff"


def test_idle_timeout_is_fifteen_minutes(operator, db):
    sess = http_login(operator)
    digest = hashlib.sha256(sess.cookies["psd2_staff"].encode()).digest()
    cur = db.cursor()
    cur.execute("SELECT extract(epoch FROM expires_at - last_seen_at) "
                "FROM web_session WHERE id_hash = %s", (digest,))
    assert round(float(cur.fetchone()[0])) == 900


def test_psu_cookie_on_staff_page_and_staff_cookie_on_psu_page(operator, db):
    # a live PSU session id presented as the staff cookie
    psu_sid = str(uuid.uuid4())
    cur = db.cursor()
    cur.execute("SELECT id FROM psu WHERE username = 'anna'")
    anna = cur.fetchone()[0]
    cur.execute("INSERT INTO web_session (id_hash, subject_kind, subject_id, "
                "expires_at) VALUES (%s, 'psu', %s, now() + interval "
                "'5 min')", (hashlib.sha256(psu_sid.encode()).digest(), anna))
    r = requests.get(STAFF_URL + "/staff/home", allow_redirects=False,
                     cookies={"psd2_staff": psu_sid, "psd2_session": psu_sid})
    assert r.status_code == 303 and r.headers["Location"] == "/staff"
    # the PSU page sees that session, but not a staff session
    r = requests.get(psd2lib.MAIN_URL + "/auth/consents",
                     cookies={"psd2_session": psu_sid})
    assert Page(r.text).form("login-form") is None
    sess = http_login(operator)
    staff_sid = sess.cookies["psd2_staff"]
    r = requests.get(psd2lib.MAIN_URL + "/auth/consents",
                     cookies={"psd2_session": staff_sid,
                              "psd2_staff": staff_sid})
    assert Page(r.text).form("login-form") is not None


def test_staff_add_refuses_an_unknown_role():
    p = psd2lib.psd2ctl("staff", "add", psd2lib.unique("st"), "--role",
                        "root", check=False)
    assert p.returncode != 0
    assert "--role" in p.stderr
