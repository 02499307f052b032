"""Redirect SCA with TOTP (a PSU without an authenticator) on the page
that shows the payment, in headless Chromium (English and German) and
with plain posts for what a browser would not do: success redirects to
TPP-Redirect-URI and the payment is booked; failure to
TPP-Nok-Redirect-URI, or a bank page without one; a repeated post gets
the first result; CSRF; a payment changed between showing and posting;
the authentication code (RTS Art. 5) checked again before booking (a row
changed after SCA does not book: RJCT payment changed); lockout and the
idle rule of the PSU login."""

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import (NOK_REDIRECT, REDIRECT, SCT, balance, changed_at_sca,
                      initiate_redirect, payment_row, sql, sql1, wait_status)
from test_pis_payments_page import login_payment


class Page:
    """The payment page after the PSU login, and the form's fields."""

    def __init__(self, driver, server, href, psu):
        self.driver = driver
        self.url = server.url + href
        login_payment(driver, self.url, psu)
        WebDriverWait(driver, 20).until(
            lambda d: d.find_elements(By.ID, "authorise-form"))
        self.csrf = driver.find_element(By.NAME, "csrf").get_attribute(
            "value")
        self.session = driver.get_cookie("psd2_session")["value"]

    def post(self, otp, csrf=None, session=None):
        return requests.post(self.url, data={
            "csrf": self.csrf if csrf is None else csrf, "otp": otp,
            "lang": "en"}, cookies={"psd2_session": session or self.session},
            timeout=10, allow_redirects=False)


def wrong_code(psu):
    """A code of no step near now (does not use up a fresh code)."""
    from psd2lib import current_step, totp_at
    near = {totp_at(psu.totp_secret, current_step() + d)
            for d in (-1, 0, 1, 2)}
    n = 0
    while "%06d" % n in near:
        n += 1
    return "%06d" % n


@pytest.mark.parametrize("lang,button", [("en-US", "Authorise payment"),
                                         ("de-DE", "Zahlung freigeben")])
def test_totp_success_books_and_redirects(lang, button, api, db, server,
                                          browser, payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    driver = browser(lang)
    page = Page(driver, server, href, payer.psu)
    submit = driver.find_element(By.ID, "authorise-submit")
    assert submit.text == button
    assert driver.find_element(By.CLASS_NAME, "payment-amount").text == \
        "12.34 EUR"
    code = payer.psu.totp()
    driver.find_element(By.ID, "otp").send_keys(code)
    submit.click()
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(REDIRECT))
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert balance(db, payer.iban) == 100000 - 1234
    method, kid, maclen = sql1(db, """SELECT method, auth_code_kid,
        octet_length(auth_code_mac) FROM payment_authorisation
        WHERE payment_id = %s""", pid)
    assert method == "totp" and kid and maclen == 32
    r = api.get("%s/%s/status" % (SCT, pid), payer.token)
    assert r.json()["transactionStatus"] == "ACSC"
    # A repeated post (same form) gets the first result, nothing twice.
    r = page.post(code)
    assert r.status_code == 303 and r.headers["Location"] == REDIRECT
    assert balance(db, payer.iban) == 100000 - 1234
    # One audit row: the SCA outcome, confirmed by TOTP.
    rows = sql(db, """SELECT actor, detail->>'method',
        detail->>'outcome' FROM audit_log WHERE action = 'payment.sca'
        AND detail->>'payment' = %s""", str(pid))
    assert rows == [("psu:" + payer.psu.username, "totp", "confirmed")]


def test_failure_redirects_to_nok(api, db, server, browser, payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    # The TPP cancels while the page is open: authorising now fails.
    r = api.call("DELETE", "%s/%s" % (SCT, pid), payer.token)
    assert r.status_code == 204, r.text
    r = page.post(payer.psu.totp())
    assert r.status_code == 303 and r.headers["Location"] == NOK_REDIRECT
    assert payment_row(db, pid)[0] == "CANC"


def test_failure_without_nok_uri_shows_bank_page(api, db, server, browser,
                                                 payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer, nok=False)
    page = Page(browser(), server, href, payer.psu)
    assert api.call("DELETE", "%s/%s" % (SCT, pid),
                    payer.token).status_code == 204
    r = page.post(payer.psu.totp())
    assert r.status_code == 200 and "location" not in r.headers
    assert "Payment not authorised" in r.text


def test_csrf_refused(api, db, server, browser, payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    code = payer.psu.totp()
    for csrf in ("", "x" * 40, page.csrf[:-4] + "AAAA"):
        r = page.post(code, csrf=csrf)
        assert r.status_code == 403, r.status_code
    # The token of this payment does not authorise another one, and the
    # password-only session is good for this payment's page alone (the
    # other one asks for the login) ...
    pid2, href2 = initiate_redirect(api, payer)
    r = requests.post(server.url + href2, data={
        "csrf": page.csrf, "otp": code, "lang": "en"},
        cookies={"psd2_session": page.session}, timeout=10,
        allow_redirects=False)
    assert r.status_code == 200 and 'id="username"' in r.text
    # ... even when the PSU has logged in for that one too.
    page2 = Page(browser(), server, href2, payer.psu)
    r = requests.post(server.url + href2, data={
        "csrf": page.csrf, "otp": code, "lang": "en"},
        cookies={"psd2_session": page2.session}, timeout=10,
        allow_redirects=False)
    assert r.status_code == 403
    for p in (pid, pid2):
        assert payment_row(db, p)[0] == "RCVD"


def test_changed_after_showing_is_refused(api, db, server, browser,
                                          payer_factory):
    """The form is bound to the values the page showed."""
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    sql(db, "UPDATE payment SET amount_minor = 99900 WHERE id = %s", pid)
    r = page.post(payer.psu.totp())
    assert r.status_code == 403
    assert payment_row(db, pid)[0] == "RCVD"
    assert sql1(db, """SELECT method FROM payment_authorisation
                       WHERE payment_id = %s""", pid) is None


@pytest.mark.parametrize("table,change", [
    ("payment", "NEW.amount_minor := NEW.amount_minor + 1"),
    ("payment", "NEW.creditor_name := 'Mallory'"),
    ("payment", "NEW.creditor_iban := 'DE02120300000000202051'"),
    ("payment_authorisation",
     "NEW.auth_code_mac := sha256(NEW.auth_code_mac)"),
])
def test_changed_after_sca_does_not_book(table, change, api, db, server,
                                         browser, payer_factory):
    """The authentication code (RTS Art. 5) is checked again before
    booking: a row changed in the very transaction that records SCA does
    not book (RJCT payment changed), however soon the booking runs."""
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    with changed_at_sca(db, pid, table, change):
        r = page.post(payer.psu.totp())
        assert r.status_code == 303 and r.headers["Location"] == REDIRECT
        row = wait_status(db, pid, "RJCT", timeout=10)
    assert row[:2] == ("RJCT", "payment changed")
    assert balance(db, payer.iban) == 100000
    assert sql(db, """SELECT 1 FROM account_transaction t JOIN account a
                      ON a.id = t.account_id WHERE a.iban = %s""",
               payer.iban) == []
    # The TPP sees RJCT, not which element failed.
    r = api.get("%s/%s/status" % (SCT, pid), payer.token)
    assert r.json()["transactionStatus"] == "RJCT"
    assert "changed" not in r.text


def test_unchanged_after_sca_books_by_the_sweep(api, db, server, browser,
                                                payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    sql(db, "ALTER TABLE payment DISABLE TRIGGER payment_notify")
    try:
        assert page.post(payer.psu.totp()).status_code == 303
    finally:
        sql(db, "ALTER TABLE payment ENABLE TRIGGER payment_notify")
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"


def test_wrong_codes_lock_the_psu(api, db, server, browser, payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    for _ in range(5):
        r = page.post(wrong_code(payer.psu))
        assert r.status_code == 401
        assert "The code was not accepted" in r.text
    assert sql1(db, """SELECT locked_until > now() FROM psu
                       WHERE username = %s""", payer.psu.username)
    # The right code while locked: the lock is revealed, nothing happens.
    r = page.post(payer.psu.totp())
    assert r.status_code == 403
    assert payment_row(db, pid)[0] == "RCVD"
    # A code used before (the login's) never counts either.
    sql(db, "UPDATE psu SET locked_until = NULL, failed_logins = 0 "
        "WHERE username = %s", payer.psu.username)


def test_used_code_refused(api, db, server, browser, payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    last = sql1(db, "SELECT totp_last_step FROM psu WHERE username = %s",
                payer.psu.username)
    from psd2lib import totp_at
    r = page.post(totp_at(payer.psu.totp_secret, last))
    assert r.status_code == 401
    assert payment_row(db, pid)[0] == "RCVD"


def test_idle_session_goes_to_login(api, db, server, browser,
                                    payer_factory):
    payer = payer_factory(device=False)
    pid, href = initiate_redirect(api, payer)
    page = Page(browser(), server, href, payer.psu)
    sql(db, """UPDATE web_session SET expires_at = now() - interval '1 s'
               WHERE subject_kind = 'psu_payment' AND subject_id =
               (SELECT id FROM psu WHERE username = %s)""",
        payer.psu.username)
    r = page.post(payer.psu.totp())
    assert r.status_code == 200 and 'id="username"' in r.text
    assert payment_row(db, pid)[0] == "RCVD"


def test_psu_with_device_gets_no_totp_form(api, db, emulator, server,
                                           browser, payer_factory):
    payer = payer_factory(device=True)
    pid, href = initiate_redirect(api, payer)
    driver = browser()
    login_payment(driver, server.url + href, payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "payment-%s" % pid))
    assert driver.find_elements(By.ID, "authorise-form") == []
    assert driver.find_elements(By.NAME, "otp") == []
    assert driver.find_elements(By.ID, "authorise-device-submit")
    # Nothing is sent to the device before the PSU chooses to confirm.
    assert sql1(db, """SELECT method FROM payment_authorisation
                       WHERE payment_id = %s""", pid) is None
