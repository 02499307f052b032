"""The PSU's payments page /auth/payments in headless Chromium (Selenium):
login with password and TOTP (the OAuth login), then the PSU's own
payments with amount, payee, debtor account, status and the specific
reject reason (which the TPP is not told), in English and German, all
output escaped; another PSU's payments are not shown."""


import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import (CREDITOR, REDIRECT, payment_body, wait_shown,
                      wait_status)


def login(driver, url, psu):
    driver.get(url)
    driver.find_element(By.ID, "username").send_keys(psu.username)
    driver.find_element(By.ID, "password").send_keys(psu.password)
    driver.find_element(By.ID, "login-submit").click()
    # The click returns before the next page may be there.
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.NAME, "otp"))
    driver.find_element(By.NAME, "otp").send_keys(psu.totp())
    driver.find_element(By.CSS_SELECTOR,
                        "#otp-form button[type=submit]").click()


def login_payment(driver, url, psu):
    """The login for a payment's authorise page: the password alone; the
    second factor is the payment's own SCA on the page (device or TOTP),
    so the login asks for no TOTP."""
    driver.get(url)
    driver.find_element(By.ID, "username").send_keys(psu.username)
    driver.find_element(By.ID, "password").send_keys(psu.password)
    driver.find_element(By.ID, "login-submit").click()
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "div.payment") or
        d.find_elements(By.CSS_SELECTOR, "p.message") or d.find_elements(By.NAME, "otp"))
    assert driver.find_elements(By.NAME, "otp") == [] or \
        driver.find_elements(By.ID, "authorise-form"), \
        "the login asked for a TOTP code"


TEXTS = {
    "en-US": ("Your payments", "waiting for your authorisation", "rejected",
              "insufficient funds"),
    "de-DE": ("Ihre Zahlungen", "wartet auf Ihre Freigabe", "abgelehnt",
              "Kontodeckung nicht ausreichend"),
}


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_payments_page(lang, api, db, emulator, server, payer_factory,
                       browser):
    title, waiting, rejected, reason = TEXTS[lang]
    payer = payer_factory(balance=1000)
    # A redirect payment not yet authorised, with markup in the payee name.
    r = api.initiate(payer, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT},
                     body=payment_body(payer, amount="1234.5",
                                       name="<b>Max</b> & Co"))
    assert r.status_code == 201, r.text
    waiting_pid = r.json()["paymentId"]
    # A payment confirmed on the authenticator that the balance does not
    # cover: RJCT, reason insufficient funds.
    r = api.initiate(payer, body=payment_body(payer, amount="12.34"))
    assert r.status_code == 201, r.text
    rejected_pid = r.json()["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    assert wait_status(db, rejected_pid, "RJCT", timeout=10)[1] == \
        "insufficient funds"
    # Another PSU's payment must not appear.
    other = payer_factory(device=False)
    r = api.initiate(other, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    other_pid = r.json()["paymentId"]

    driver = browser(lang)
    login(driver, server.url + "/auth/payments", payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "payment-%s" % waiting_pid))
    assert driver.current_url.endswith("/auth/payments")
    assert driver.find_element(By.TAG_NAME, "h1").text == title
    items = driver.find_elements(By.CSS_SELECTOR, "li.payment")
    ids = [i.get_attribute("id") for i in items]
    # Newest first, only this PSU's.
    assert ids == ["payment-%s" % rejected_pid,
                   "payment-%s" % waiting_pid]
    assert "payment-%s" % other_pid not in driver.page_source

    w = driver.find_element(By.ID, "payment-%s" % waiting_pid)
    # Escaped: the name shows as typed, no element was made of it.
    assert w.find_element(By.CLASS_NAME, "payment-payee").text == \
        "<b>Max</b> & Co"
    assert w.find_elements(By.CSS_SELECTOR, ".payment-payee b") == []
    assert w.find_element(By.CLASS_NAME, "payment-amount").text == \
        "1 234.50 EUR"
    assert w.find_element(By.CLASS_NAME,
                          "payment-creditor-iban").text == CREDITOR
    assert w.find_element(By.CLASS_NAME,
                          "payment-debtor-iban").text == payer.iban
    assert w.find_element(By.CLASS_NAME,
                          "payment-status").text == waiting
    assert w.find_elements(By.CLASS_NAME, "payment-reason") == []
    assert w.get_attribute("data-status") == "RCVD"

    j = driver.find_element(By.ID, "payment-%s" % rejected_pid)
    assert j.get_attribute("data-status") == "RJCT"
    assert j.find_element(By.CLASS_NAME, "payment-amount").text == \
        "12.34 EUR"
    assert j.find_element(By.CLASS_NAME,
                          "payment-status").text == rejected
    assert j.find_element(By.CLASS_NAME,
                          "payment-reason").text == reason


def test_payments_page_needs_login(server):
    """Without a session (or with a forged one) the page is the login
    page, never a list."""
    import requests
    for cookies in ({}, {"psd2_session": "00000000-0000-4000-8000-"
                                         "000000000000"}):
        r = requests.get(server.url + "/auth/payments", cookies=cookies,
                         timeout=10, allow_redirects=False)
        assert r.status_code == 200
        assert 'id="username"' in r.text
        assert 'id="payments"' not in r.text
        assert r.headers["Cache-Control"].startswith("no-store") or \
            "no-store" in r.headers["Cache-Control"]
