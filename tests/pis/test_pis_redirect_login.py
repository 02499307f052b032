"""The login for a payment's authorise page ("password, then
device or TOTP on the payment page"), in headless Chromium: the password
alone opens a session for that payment's page only, never for the
PSU's other pages (payments list, consents), which keep asking for
password and TOTP; the password's lockout is that of the PSU login."""

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import psd2lib
from conftest import initiate_redirect, payment_row, sql, sql1
from psd2lib import Page
from test_pis_payments_page import login_payment


@pytest.fixture
def driver(browser):
    return browser("en-US")


def test_password_session_is_for_its_payment_only(api, db, server, driver,
                                                  payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer, nok=False)
    login_payment(driver, server.url + href, payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-form"))
    session = driver.get_cookie("psd2_session")["value"]
    kind, spid = sql1(db, """SELECT subject_kind, payment_id
        FROM web_session WHERE id_hash = sha256(convert_to(%s, 'UTF8'))""",
                      session)
    assert (kind, str(spid)) == ("psu_payment", pid)
    # The PSU's other pages still need password and TOTP.
    for path in ("/auth/payments", "/auth/consents"):
        r = requests.get(server.url + path, cookies={
            "psd2_session": session}, timeout=10, allow_redirects=False)
        assert r.status_code == 200 and 'id="username"' in r.text, path
        assert payer.iban not in r.text
    # One login, one factor: the audit log says so.
    rows = sql(db, """SELECT detail->>'factor', detail->>'payment'
        FROM audit_log WHERE action = 'psu.login' AND actor = %s
        AND detail ? 'payment'""", "psu:" + payer.psu.username)
    assert rows == [("password", pid)]
    assert payment_row(db, pid) == ("RCVD", None, "started")


def test_payment_login_lockout(api, db, server, driver, payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer, nok=False)
    url = server.url + href
    try:
        for _ in range(5):
            driver.get(url)
            driver.find_element(By.ID, "username").send_keys(
                payer.psu.username)
            driver.find_element(By.ID, "password").send_keys("wrong-pass")
            driver.find_element(By.ID, "login-submit").click()
            WebDriverWait(driver, 20).until(
                lambda d: "The login failed" in d.page_source)
        assert sql1(db, """SELECT locked_until > now() FROM psu
                           WHERE username = %s""", payer.psu.username)
        # The right password while locked: the lock is revealed, no
        # session, the payment unchanged.
        driver.get(url)
        driver.find_element(By.ID, "username").send_keys(payer.psu.username)
        driver.find_element(By.ID, "password").send_keys(payer.psu.password)
        driver.find_element(By.ID, "login-submit").click()
        WebDriverWait(driver, 20).until(
            lambda d: "Access temporarily locked" in d.page_source)
        assert driver.find_elements(By.ID, "authorise-form") == []
        assert sql(db, """SELECT 1 FROM web_session s JOIN psu u
            ON u.id = s.subject_id WHERE u.username = %s
            AND s.subject_kind = 'psu_payment'""", payer.psu.username) == []
        assert payment_row(db, pid) == ("RCVD", None, "started")
    finally:
        sql(db, "UPDATE psu SET locked_until = NULL, failed_logins = 0 "
            "WHERE username = %s", payer.psu.username)


def test_replayed_password_form_hands_over_no_session(api, db, server,
                                                     payer_factory):
    """The payment page's login form re-posted (same hidden fields and
    password, the pre-login cookie) by a client other than the browser
    that logged in: no session cookie; the page it is sent to asks for a
    login of its own. The browser holding the session still gets its
    page, without a new cookie."""
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer, nok=False)
    url = server.url + href
    own = psd2lib.http_session()
    page = Page(own.get(url, timeout=10).text)
    form = page.form("login-form")
    assert form is not None
    data = dict(form.hidden())
    data.update({"username": payer.psu.username,
                 "password": payer.psu.password})
    first = own.post(server.url + form.action, data=data,
                     allow_redirects=False, timeout=30)
    assert first.status_code == 303, first.text[:300]
    assert first.headers["Location"] == href
    session = own.cookies["psd2_session"]
    thief = psd2lib.http_session()
    for c in own.cookies:
        if c.name != "psd2_session":
            thief.cookies.set(c.name, c.value, domain=c.domain, path=c.path)
    r = thief.post(server.url + form.action, data=data,
                   allow_redirects=False, timeout=30)
    assert not [h for h in psd2lib.set_cookie_headers(r)
                if h.startswith("psd2_session=")], r.headers
    assert "psd2_session" not in thief.cookies
    shown = thief.get(url, timeout=10, allow_redirects=False)
    assert 'id="username"' in shown.text and payer.iban not in shown.text
    again = own.post(server.url + form.action, data=data,
                     allow_redirects=False, timeout=30)
    assert again.status_code == 303 and again.headers["Location"] == href
    assert not [h for h in psd2lib.set_cookie_headers(again)
                if h.startswith("psd2_session=")]
    assert own.cookies["psd2_session"] == session
    assert sql1(db, """SELECT count(*) FROM web_session
        WHERE subject_kind = 'psu_payment' AND payment_id = %s""", pid) == 1
    assert payment_row(db, pid) == ("RCVD", None, "started")
