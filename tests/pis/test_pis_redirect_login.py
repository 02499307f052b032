"""The login for a payment's authorise page (issue 9: "password, then
device or TOTP on the payment page"), in headless Chromium: the password
alone opens a session for that payment's page only, never for the
PSU's other pages (payments list, consents), which keep asking for
password and TOTP; the password's lockout is that of the PSU login."""

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import initiate_redirect, payment_row, sql, sql1
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
