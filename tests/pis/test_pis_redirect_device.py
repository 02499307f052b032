"""Redirect SCA on the PSU's authenticator, in headless Chromium
with the real daemon and an emulated authenticator under umockdev: the
PSU logs in with the password alone (no TOTP), chooses "confirm on my
authenticator"; the challenge is created then, with exactly the
payment's values; the page refreshes itself (<meta http-equiv=refresh>,
no JavaScript) until the decider has made the payment final, then the
browser goes to TPP-Redirect-URI (booked, seen through AIS) or, after the
bank page has shown the reason, to TPP-Nok-Redirect-URI. A refresh or a
second post creates no second challenge; the authentication code kept
for the device path is checked again before booking. Redirect payments
expire: unfinished by psd2_pis_redirect_seconds they end RJCT timed out,
and a PSU who opens the page then sees that it expired."""

import json
import threading
from decimal import Decimal

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import psd2_fixtures
import psd2lib
from conftest import (API, NOK_REDIRECT, REDIRECT, SCA_SECONDS, SCT,
                      balance, changed_at_sca, initiate_redirect,
                      instance_conf, payment_row, sql, sql1, wait_shown,
                      wait_status)
from test_pis_payments_page import login_payment

BUTTON = {"en-US": "Confirm on my authenticator",
          "de-DE": "Auf meinem Authenticator bestätigen"}
WAITING = {"en-US": "Please confirm this payment on your authenticator.",
           "de-DE": "Bitte bestätigen Sie diese Zahlung auf Ihrem "
                    "Authenticator."}


def challenges(db, pid):
    """The device challenges of the payment's PSU."""
    return sql1(db, """SELECT count(*) FROM device_challenge c
        JOIN payment p ON p.psu_id = c.psu_id WHERE p.id = %s""", pid)


def open_page(driver, server, href, payer):
    login_payment(driver, server.url + href, payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-device-submit"))
    # Password, then the device: the login asked for no TOTP.
    assert driver.find_elements(By.NAME, "otp") == []


def choose_device(driver):
    driver.find_element(By.ID, "authorise-device-submit").click()
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-waiting"))
    meta = driver.find_element(By.CSS_SELECTOR,
                               'meta[http-equiv="refresh"]')
    assert meta.get_attribute("content") == "2"


def ais(api, payer, path, body=None):
    signer = api.signer.for_token(payer.token)
    r = signer.request("GET", psd2lib.MAIN_URL + API + path,
                       body=body or b"",
                       headers={"Authorization": "Bearer " + payer.token,
                                "Content-Type": "application/json",
                                "PSU-IP-Address": "192.0.2.1"}, timeout=30)
    assert r.status_code == 200, r.text
    return json.loads(r.text, parse_float=Decimal)


@pytest.mark.parametrize("lang", sorted(BUTTON))
def test_device_confirm_books_and_lands_on_redirect(lang, api, db, emulator,
                                                    server, browser,
                                                    payer_factory):
    payer = payer_factory(scope="ACCOUNT_INFORMATION PAYMENT_INITIATION")
    ref = sql1(db, "SELECT resource_id FROM account WHERE iban = %s",
               payer.iban)
    bal_body = json.dumps({"referenceId": ref}).encode()
    before = ais(api, payer, "/account/account-balance", bal_body)[
        "balances"][0]["balanceAmount"]["amount"]
    pid, href = initiate_redirect(api, payer)
    driver = browser(lang)
    open_page(driver, server, href, payer)
    button = driver.find_element(By.ID, "authorise-device-submit")
    assert button.text == BUTTON[lang]
    assert driver.find_element(By.CLASS_NAME, "payment-amount").text == \
        "12.34 EUR"
    # Nothing reaches the device before the PSU chooses to confirm.
    assert challenges(db, pid) == 0
    assert "PAY" not in emulator.show(payer.serial)
    choose_device(driver)
    assert driver.find_element(By.ID, "authorise-waiting").text.startswith(
        WAITING[lang])
    # The challenge: exactly the payment's values, a fresh nonce, the
    # device deadline from the choice.
    row = sql1(db, """SELECT c.amount_minor, c.currency, c.payee_name,
        c.payee_iban, octet_length(c.nonce), c.deadline = a.deadline,
        c.deadline - c.created_at, a.method, a.sca_status
        FROM payment_authorisation a JOIN device_challenge c
        ON c.id = a.challenge_id WHERE a.payment_id = %s""", pid)
    assert row[:5] == (1234, "EUR", "Max Mustermann",
                       "DE89370400440532013000", 32)
    assert row[5] and row[6].total_seconds() == SCA_SECONDS
    assert row[7:] == ("device", "started")
    shown = wait_shown(emulator, payer.serial)
    assert "12.34 EUR" in shown and "Max Mustermann" in shown, shown
    assert payment_row(db, pid)[0] == "RCVD"
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    # The page refreshes itself until the payment is final, then goes on.
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(REDIRECT))
    assert wait_status(db, pid, "ACSC", timeout=10) == \
        ("ACSC", None, "finalised")
    assert api.status(payer, pid) == "ACSC"
    after = ais(api, payer, "/account/account-balance", bal_body)[
        "balances"][0]["balanceAmount"]["amount"]
    assert after == before - Decimal("12.34")
    tx = ais(api, payer, "/account/%s/transactions" % ref)[
        "transactions"][0]
    assert tx["explanation"] == \
        "Max Mustermann DE89370400440532013000: Invoice 42"
    assert tx["balanceAmount"]["amount"] == Decimal("-12.34")
    kid, maclen = sql1(db, """SELECT auth_code_kid, octet_length(
        auth_code_mac) FROM payment_authorisation WHERE payment_id = %s""",
                       pid)
    assert kid and maclen == 32
    assert challenges(db, pid) == 1
    rows = sql(db, """SELECT detail->>'method', detail->>'outcome'
        FROM audit_log WHERE action = 'payment.sca'
        AND detail->>'payment' = %s""", str(pid))
    assert rows == [("device", "confirmed")]


def test_device_decline_shows_reason_then_nok(api, db, emulator, server,
                                              browser, payer_factory):
    payer = payer_factory()
    pid, href = initiate_redirect(api, payer)
    driver = browser("en-US")
    open_page(driver, server, href, payer)
    choose_device(driver)
    wait_shown(emulator, payer.serial)
    emulator.cmd("decline", payer.serial)
    assert wait_status(db, pid, "RJCT") == ("RJCT", "declined", "failed")
    # The bank page says why, then goes on to TPP-Nok-Redirect-URI.
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-returning") or
        d.current_url.startswith(NOK_REDIRECT))
    if not driver.current_url.startswith(NOK_REDIRECT):
        assert driver.find_element(By.CLASS_NAME, "payment-reason").text \
            == "you declined it"
        meta = driver.find_element(By.CSS_SELECTOR,
                                   'meta[http-equiv="refresh"]')
        assert meta.get_attribute("content") == "5; url=" + NOK_REDIRECT
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(NOK_REDIRECT))
    # The TPP learns that it failed, never which element.
    r = api.get("%s/%s/status" % (SCT, pid), payer.token)
    assert r.json() == {"transactionStatus": "RJCT",
                        "psuMessage": "The payment was not authorised."}
    assert balance(db, payer.iban) == 100000


def test_refresh_and_double_submit_make_one_challenge(api, db, emulator,
                                                      server, browser,
                                                      payer_factory):
    payer = payer_factory()
    pid, href = initiate_redirect(api, payer)
    driver = browser("en-US")
    open_page(driver, server, href, payer)
    csrf = driver.find_element(By.NAME, "csrf").get_attribute("value")
    session = driver.get_cookie("psd2_session")["value"]
    url = server.url + href
    results = []

    def post():
        results.append(requests.post(url, data={
            "csrf": csrf, "method": "device", "lang": "en"},
            cookies={"psd2_session": session}, timeout=10,
            allow_redirects=False))
    threads = [threading.Thread(target=post) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    post()
    for r in results:
        assert r.status_code == 303, r.text
        assert r.headers["Location"] == href
    for _ in range(3):
        driver.get(url)
        assert driver.find_elements(By.ID, "authorise-waiting")
        assert driver.find_elements(By.ID, "authorise-device-submit") == []
    assert challenges(db, pid) == 1
    # A TOTP post while the device challenge runs changes nothing.
    r = requests.post(url, data={"csrf": csrf, "otp": payer.psu.totp(),
                                 "lang": "en"},
                      cookies={"psd2_session": session}, timeout=10,
                      allow_redirects=False)
    assert r.status_code == 409
    assert payment_row(db, pid) == ("RCVD", None, "started")
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    # Posting again after SCA: the first result, nothing twice.
    post()
    assert results[-1].status_code == 303
    assert results[-1].headers["Location"] == REDIRECT
    assert challenges(db, pid) == 1
    assert balance(db, payer.iban) == 100000 - 1234


@pytest.mark.parametrize("table,change", [
    ("payment_authorisation",
     "NEW.auth_code_mac := sha256(NEW.auth_code_mac)"),
    ("payment", "NEW.amount_minor := NEW.amount_minor + 1"),
    ("payment", "NEW.creditor_name := 'Mallory'"),
])
def test_device_code_checked_before_booking(table, change, api, db, emulator,
                                            server, browser, payer_factory):
    """The authentication code kept for the device path (RTS Art. 5) is
    checked again before booking: a row changed in the very transaction
    that records SCA (after the device's signature was verified; the
    decider books right after it) does not book."""
    payer = payer_factory()
    pid, href = initiate_redirect(api, payer)
    driver = browser("en-US")
    open_page(driver, server, href, payer)
    choose_device(driver)
    wait_shown(emulator, payer.serial)
    with changed_at_sca(db, pid, table, change):
        emulator.cmd("pin", payer.serial, "1234")
        emulator.cmd("press", payer.serial)
        assert wait_status(db, pid, "RJCT", timeout=10)[:2] == \
            ("RJCT", "payment changed")
    assert sql1(db, "SELECT method FROM payment_authorisation "
                "WHERE payment_id = %s", pid) == "device"
    assert balance(db, payer.iban) == 100000
    assert sql(db, """SELECT 1 FROM account_transaction t JOIN account a
                      ON a.id = t.account_id WHERE a.iban = %s""",
               payer.iban) == []


@pytest.fixture
def short_redirect(service_setup):
    """An instance whose redirect payments expire after a few seconds."""
    port = psd2lib.RATELIMIT_PORT
    srv = psd2_fixtures._start(
        instance_conf("psd2gate-pis-expiry", port, redirect_seconds=8),
        port, "psd2gate-pis-expiry", None)
    yield srv
    psd2_fixtures._stop(srv)


def test_redirect_payment_expires(api, db, emulator, server, browser,
                                  payer_factory, short_redirect):
    totp_payer = payer_factory(device=False)
    dev_payer = payer_factory()
    # Opened (started) but never finished, by TOTP ...
    pid1, href1 = initiate_redirect(api, totp_payer, base=short_redirect.url)
    driver = browser("en-US")
    login_payment(driver, server.url + href1, totp_payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-form"))
    csrf = driver.find_element(By.NAME, "csrf").get_attribute("value")
    session = driver.get_cookie("psd2_session")["value"]
    # ... and never opened, by a PSU with an authenticator.
    pid2, href2 = initiate_redirect(api, dev_payer, base=short_redirect.url)
    for pid in (pid1, pid2):
        assert wait_status(db, pid, "RJCT", timeout=20) == \
            ("RJCT", "timed out", "failed")
    assert api.status(totp_payer, pid1) == "RJCT"
    # A code posted now authorises nothing: the Nok URI.
    r = requests.post(server.url + href1, data={
        "csrf": csrf, "otp": totp_payer.psu.totp(), "lang": "en"},
        cookies={"psd2_session": session}, timeout=10,
        allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == NOK_REDIRECT
    assert payment_row(db, pid1) == ("RJCT", "timed out", "failed")
    # The PSU who opens the page afterwards sees that it expired.
    d2 = browser("en-US")
    login_payment(d2, server.url + href2, dev_payer.psu)
    WebDriverWait(d2, 20).until(
        lambda d: d.find_elements(By.CLASS_NAME, "payment-reason") or
        d.current_url.startswith(NOK_REDIRECT))
    assert d2.find_element(By.CLASS_NAME, "payment-reason").text == \
        "not authorised in time"
    assert d2.find_elements(By.ID, "authorise-device-submit") == []
    assert challenges(db, pid2) == 0
    rows = sql(db, """SELECT detail->>'outcome' FROM audit_log
        WHERE action = 'payment.sca' AND detail->>'payment' = %s""",
               str(pid2))
    assert rows == [("timed out",)]
