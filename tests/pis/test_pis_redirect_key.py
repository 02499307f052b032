"""Redirect SCA with a passkey or security key (WebAuthn) instead of the
TOTP code, for a PSU without an authenticator, in headless Chromium with
its virtual authenticator on the origin where keys are offered
(http://localhost:18080). The key's challenge is derived from the
payment's authentication code (bound to amount and payee, RTS Art. 5)
and the page's token: the payment is authorised, its code kept and
checked again before booking; an assertion made for one payment does not
authorise another."""

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import (REDIRECT, balance, initiate_redirect,
                      payment_row, sql, sql1, wait_status)
from passkeys import (ORIGIN, add_key, authenticator, capture_key_form,
                      keys_page, wait_visible)
from test_pis_payments_page import login_payment


def keyed_payer(browser, payer_factory):
    """A payer without an authenticator, with one key in the browser's
    virtual authenticator; the browser's session ended again."""
    payer = payer_factory(device=False)
    driver = browser()
    authenticator(driver)
    keys_page(driver, payer.psu)
    add_key(driver, "Laptop")
    driver.delete_all_cookies()
    return payer, driver


def key_page(driver, href, psu):
    """The payment's page on the keys' origin, after the password."""
    login_payment(driver, ORIGIN + href, psu)
    return wait_visible(driver, "authorise-key-form")


def test_key_authorises_books_and_redirects(api, db, server, browser,
                                            payer_factory):
    payer, driver = keyed_payer(browser, payer_factory)
    pid, href = initiate_redirect(api, payer)
    key_page(driver, href, payer.psu)
    assert driver.find_element(By.CLASS_NAME, "payment-amount").text == \
        "12.34 EUR"
    driver.find_element(By.ID, "authorise-key-submit").click()
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(REDIRECT))
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert balance(db, payer.iban) == 100000 - 1234
    method, kid, maclen = sql1(db, """SELECT method, auth_code_kid,
        octet_length(auth_code_mac) FROM payment_authorisation
        WHERE payment_id = %s""", pid)
    assert method == "key" and kid and maclen == 32
    rows = sql(db, """SELECT actor, detail->>'method',
        detail->>'outcome' FROM audit_log WHERE action = 'payment.sca'
        AND detail->>'payment' = %s""", str(pid))
    assert rows == [("psu:" + payer.psu.username, "key", "confirmed")]


def test_assertion_for_one_payment_does_not_authorise_another(
        api, db, server, browser, payer_factory):
    payer, driver = keyed_payer(browser, payer_factory)
    pid, href = initiate_redirect(api, payer)
    key_page(driver, href, payer.psu)
    fields = capture_key_form(driver, "authorise-key-submit")
    session = driver.get_cookie("psd2_session")["value"]
    # The second payment's page (its own login: a password session is
    # good for one payment's page), with the first payment's signature:
    # its challenge was another one.
    pid2, href2 = initiate_redirect(api, payer)
    driver.delete_all_cookies()
    form = key_page(driver, href2, payer.psu)
    session2 = driver.get_cookie("psd2_session")["value"]
    other = dict(fields, csrf=form.find_element(
        By.NAME, "csrf").get_attribute("value"))
    r = requests.post(ORIGIN + href2, data=other,
                      cookies={"psd2_session": session2}, timeout=10,
                      allow_redirects=False)
    assert r.status_code == 401, r.text
    assert payment_row(db, pid2)[0] == "RCVD"
    assert sql1(db, "SELECT method FROM payment_authorisation "
                "WHERE payment_id = %s", pid2) is None
    # Its own payment takes it.
    r = requests.post(ORIGIN + href, data=fields,
                      cookies={"psd2_session": session}, timeout=10,
                      allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == REDIRECT
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
