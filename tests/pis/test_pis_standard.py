"""Single payments on the Berlin Group standard's paths
(/xs2a/v1/payments/{payment-product}, src/bg/README.md "Payments"),
served by the contract's payment endpoints: end to end on the emulated
authenticator and in Chromium with TOTP; one payment, read and cancelled
on either surface; the standard's frame (X-Request-ID, Allow,
ASPSP-SCA-Approach) and body members. Every request and response on
/xs2a/ is validated against the official 1.3.11 file
(tests/lib/bg_openapi.py, installed for every suite)."""

import datetime
import time
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import bg_openapi
from conftest import (CREDITOR, REDIRECT, NOK_REDIRECT, SCT, balance,
                      payment_as_read, payment_body, payment_row,
                      set_balance, sql, sql1, tpp_error, wait_shown,
                      wait_status)
from psd2lib import token_request
from test_pis_payments_page import login_payment

STD = "/xs2a/v1/payments"
STD_SCT = STD + "/sepa-credit-transfers"
STD_INST = STD + "/instant-sepa-credit-transfers"


def initiate(api, payer, product="sepa-credit-transfers", body=None,
             decoupled=True, headers=None):
    h = {"PSU-IP-Address": "192.0.2.10"}
    if decoupled:
        h["TPP-Decoupled-Preferred"] = "true"
    else:
        h["TPP-Redirect-URI"] = REDIRECT
        h["TPP-Nok-Redirect-URI"] = NOK_REDIRECT
    h.update(headers or {})
    return api.call("POST", STD + "/" + product, payer.token,
                    body if body is not None else payment_body(payer),
                    headers=h)


def created(r, product_path):
    assert r.status_code == 201, r.text
    b = r.json()
    pid = b["paymentId"]
    assert r.headers["Location"] == "%s/%s" % (product_path, pid)
    assert b["transactionStatus"] == "RCVD"
    assert b["_links"]["self"]["href"] == "%s/%s" % (product_path, pid)
    assert b["_links"]["status"]["href"] == \
        "%s/%s/status" % (product_path, pid)
    assert b["_links"]["scaStatus"]["href"].startswith(
        "%s/%s/authorisations/" % (product_path, pid))
    return b


def bank_day(db, days=0):
    """The bank's date (PostgreSQL's current_date) plus days, as text."""
    return (sql1(db, "SELECT current_date") +
            datetime.timedelta(days=days)).isoformat()


def dated(payer, day):
    b = payment_body(payer)
    b["requestedExecutionDate"] = day
    return b


def confirm_on_device(emulator, payer):
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)


def the_day_has_come(db, pid):
    """The payment's date moved to today: the bank's clock is never moved
    (production has no such switch); the row is, as a date's passing
    would leave it."""
    sql(db, "UPDATE payment SET execution_date = current_date "
        "WHERE id = %s", pid)


def still(db, pid, status, seconds=2.5):
    """The payment stays in status over a few decider rounds (1 s)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert payment_row(db, pid)[0] == status
        time.sleep(0.25)


def payments_of(db, payer):
    return sql1(db, """SELECT count(*) FROM payment p JOIN account a
        ON a.id = p.debtor_account_id WHERE a.iban = %s""", payer.iban)


def test_decoupled_on_the_device_books_and_both_surfaces_show_it(
        api, db, emulator, payer):
    before = balance(db, payer.iban)
    checked = bg_openapi.checked()["responses"]
    r = initiate(api, payer, product="instant-sepa-credit-transfers")
    b = created(r, STD_INST)
    pid = b["paymentId"]
    assert r.headers["ASPSP-SCA-Approach"] == "DECOUPLED"
    assert b["scaStatus"] == "started" and "scaRedirect" not in b["_links"]
    shown = wait_shown(emulator, payer.serial)
    assert "12.34 EUR" in shown and "Max Mustermann" in shown, shown
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "ACSC", timeout=10) == \
        ("ACSC", None, "finalised")
    assert balance(db, payer.iban) == before - 1234
    r = api.get("%s/%s/status" % (STD_INST, pid), payer.token)
    assert r.status_code == 200 and r.json() == {"transactionStatus": "ACSC"}
    r = api.get("%s/%s" % (STD_INST, pid), payer.token)
    assert r.status_code == 200, r.text
    assert r.json() == payment_as_read(payer, "ACSC")
    auth = b["_links"]["scaStatus"]["href"]
    r = api.get(auth, payer.token)
    assert r.status_code == 200 and r.json() == {"scaStatus": "finalised"}
    r = api.get("%s/%s/authorisations" % (STD_INST, pid), payer.token)
    assert r.json() == {"authorisationIds": [auth.rsplit("/", 1)[1]]}
    # The same payment on the contract's paths.
    r = api.get("/auth/v1/psd2/payments/instant-sepa-credit-transfers/%s"
                "/status" % pid, payer.token)
    assert r.json()["transactionStatus"] == "ACSC"
    # The validator saw every answer on /xs2a/ (it raises on a bad one).
    assert bg_openapi.checked()["responses"] >= checked + 5


def test_redirect_with_totp_in_chromium(api, db, server, browser,
                                        payer_factory):
    payer = payer_factory(device=False)
    r = initiate(api, payer, decoupled=False)
    b = created(r, STD_SCT)
    pid = b["paymentId"]
    assert r.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    assert b["scaStatus"] == "received"
    href = b["_links"]["scaRedirect"]["href"]
    assert href == "/auth/payments/%s/authorise" % pid
    driver = browser("en-US")
    login_payment(driver, server.url + href, payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-form"))
    assert driver.find_element(By.CLASS_NAME, "payment-amount").text == \
        "12.34 EUR"
    driver.find_element(By.ID, "otp").send_keys(payer.psu.totp())
    driver.find_element(By.ID, "authorise-submit").click()
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(REDIRECT))
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert balance(db, payer.iban) == 100000 - 1234
    r = api.get(b["_links"]["scaStatus"]["href"], payer.token)
    assert r.json() == {"scaStatus": "finalised"}


def test_a_contract_payment_is_cancelled_on_the_standard(api, db, payer):
    r = api.initiate(payer)
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    r = api.get("%s/%s/status" % (STD_SCT, pid), payer.token)
    assert r.status_code == 200 and r.json() == {"transactionStatus": "RCVD"}
    r = api.call("DELETE", "%s/%s" % (STD_SCT, pid), payer.token)
    assert r.status_code == 204, r.text
    assert payment_row(db, pid) == ("CANC", None, "failed")
    assert api.status(payer, pid) == "CANC"
    # Final now: a second cancel is refused on either surface.
    tpp_error(api.call("DELETE", "%s/%s" % (STD_SCT, pid), payer.token),
              405, "CANCELLATION_INVALID")
    tpp_error(api.call("DELETE", "%s/%s" % (SCT, pid), payer.token),
              405, "CANCELLATION_INVALID")


def test_a_second_authorisation_is_status_invalid(api, db, payer):
    b = created(initiate(api, payer), STD_SCT)
    pid = b["paymentId"]
    r = api.call("POST", "%s/%s/authorisations" % (STD_SCT, pid),
                 payer.token, {})
    m = tpp_error(r, 409, "STATUS_INVALID")
    assert b["_links"]["scaStatus"]["href"] in m["text"]
    assert sql1(db, "SELECT count(*) FROM payment_authorisation "
                "WHERE payment_id = %s", pid) == 1
    # The contract's paths keep their answer: the existing one, 200.
    r = api.call("POST", "%s/%s/authorisations" % (SCT, pid), payer.token,
                 {})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("change,status,code,path", [
    ({"ultimateCreditor": "Max Mustermann"}, 400,
     "PARAMETER_NOT_SUPPORTED", "ultimateCreditor"),
    ({"endToEndIdentification": "E2E-1"}, 400, "PARAMETER_NOT_SUPPORTED",
     "endToEndIdentification"),
    ({"remittanceInformationStructured": {"reference": "RF18539007547034"}},
     400, "PARAMETER_NOT_SUPPORTED", "remittanceInformationStructured"),
    ({"noSuchMember": 1}, 400, "FORMAT_ERROR", "noSuchMember"),
    ({"debtorAccount": "BBAN"}, 400, "PARAMETER_NOT_SUPPORTED",
     "debtorAccount.bban"),
    ({"creditorAccount": "USD"}, 400, "FORMAT_ERROR",
     "creditorAccount.currency"),
    ({"instructedAmount": {"currency": "EUR", "amount": "0.00"}}, 400,
     "FORMAT_ERROR", "instructedAmount.amount"),
])
def test_bad_bodies_store_nothing(api, db, payer, change, status, code,
                                  path):
    body = payment_body(payer)
    if change == {"debtorAccount": "BBAN"}:
        body["debtorAccount"] = {"iban": payer.iban,
                                 "bban": "370400440532013000"}
    elif change == {"creditorAccount": "USD"}:
        body["creditorAccount"] = {"iban": CREDITOR, "currency": "USD"}
    else:
        body.update(change)
    n = payments_of(db, payer)
    tpp_error(initiate(api, payer, body=body), status, code, path)
    assert payments_of(db, payer) == n


def test_the_standards_frame(api, db, payer):
    b = created(initiate(api, payer), STD_SCT)
    pid = b["paymentId"]
    # X-Request-ID must be a UUID: a signed request's is refused by the
    # signature's checks already (src/tpp/), before the standard's own.
    with bg_openapi.expect_invalid_request():
        r = api.call("GET", "%s/%s/status" % (STD_SCT, pid), payer.token,
                     headers={"X-Request-ID": "not-a-uuid"})
    assert "x-request-id" in tpp_error(r, 400, "FORMAT_ERROR")["text"]
    assert r.headers.get("X-Request-ID") != "not-a-uuid"
    rid = str(uuid.uuid4())
    r = api.call("GET", "%s/%s/status" % (STD_SCT, pid), payer.token,
                 headers={"X-Request-ID": rid})
    assert r.status_code == 200 and r.headers["X-Request-ID"] == rid
    # A method a path does not take: 405 with Allow.
    with bg_openapi.expect_invalid_request():
        r = api.call("PUT", "%s/%s" % (STD_SCT, pid), payer.token)
    tpp_error(r, 405, "SERVICE_INVALID")
    assert r.headers["Allow"] == "GET, HEAD, DELETE"
    with bg_openapi.expect_invalid_request():
        r = api.call("GET", STD_SCT, payer.token)
    tpp_error(r, 405, "SERVICE_INVALID")
    assert r.headers["Allow"] == "POST"
    # A product the file names but this bank does not offer.
    n = payments_of(db, payer)
    tpp_error(initiate(api, payer, product="target-2-payments"), 404,
              "PRODUCT_UNKNOWN")
    tpp_error(api.get("%s/%s" % (STD + "/cross-border-credit-transfers",
                                 pid), payer.token), 404, "PRODUCT_UNKNOWN")
    assert payments_of(db, payer) == n
    # Another PSU's token does not see the payment.
    tpp_error(api.get("%s/%s/status" % (STD_SCT, uuid.uuid4()),
                      payer.token), 404, "RESOURCE_UNKNOWN")


def test_a_bad_token_and_the_tpps_own_token(api, db, payer):
    n = payments_of(db, payer)
    r = api.call("POST", STD_SCT, str(uuid.uuid4()), payment_body(payer),
                 headers={"PSU-IP-Address": "192.0.2.10"})
    tpp_error(r, 401, "TOKEN_INVALID")
    # The TPP's own token (client credentials) names no PSU: payments
    # need the PSU's token (the OAuth pre-step); the TPP's is no token
    # for them, as on the contract's paths.
    t = token_request({"grant_type": "client_credentials",
                       "scope": "xs2a"}, client=payer.client)
    assert t.status_code == 200, t.text
    r = api.call("POST", STD_SCT, t.json()["access_token"],
                 payment_body(payer),
                 headers={"PSU-IP-Address": "192.0.2.10",
                          "TPP-Decoupled-Preferred": "true"})
    tpp_error(r, 401, "TOKEN_INVALID")
    assert payments_of(db, payer) == n


# -- future-dated payments ----------------------------------------------------

def test_future_dated_on_the_device_books_on_its_date(api, db, emulator,
                                                      payer):
    before = balance(db, payer.iban)
    day = bank_day(db, 3)
    r = initiate(api, payer, body=dated(payer, day))
    b = created(r, STD_SCT)
    pid = b["paymentId"]
    assert r.headers["ASPSP-SCA-Approach"] == "DECOUPLED"
    confirm_on_device(emulator, payer)
    assert wait_status(db, pid, "ACTC", timeout=10) == \
        ("ACTC", None, "finalised")
    # Authorised now, not booked before its date.
    still(db, pid, "ACTC")
    assert balance(db, payer.iban) == before
    r = api.get("%s/%s" % (STD_SCT, pid), payer.token)
    want = payment_as_read(payer, "ACTC")
    want["requestedExecutionDate"] = day
    assert r.status_code == 200 and r.json() == want
    the_day_has_come(db, pid)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert balance(db, payer.iban) == before - 1234


def test_future_dated_is_cancelled_until_the_day_before(api, db, emulator,
                                                        payer):
    before = balance(db, payer.iban)
    pid = created(initiate(api, payer, body=dated(payer, bank_day(db, 2))),
                  STD_SCT)["paymentId"]
    confirm_on_device(emulator, payer)
    wait_status(db, pid, "ACTC", timeout=10)
    r = api.call("DELETE", "%s/%s" % (STD_SCT, pid), payer.token)
    assert r.status_code == 204, r.text
    assert payment_row(db, pid) == ("CANC", None, "finalised")
    the_day_has_come(db, pid)
    still(db, pid, "CANC")
    assert balance(db, payer.iban) == before
    # On its day it is no longer cancellable (booked, or about to be).
    pid = created(initiate(api, payer, body=dated(payer, bank_day(db, 1))),
                  STD_SCT)["paymentId"]
    confirm_on_device(emulator, payer)
    wait_status(db, pid, "ACTC", timeout=10)
    the_day_has_come(db, pid)
    tpp_error(api.call("DELETE", "%s/%s" % (STD_SCT, pid), payer.token),
              405, "CANCELLATION_INVALID")
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert balance(db, payer.iban) == before - 1234


def test_future_dated_short_of_funds_on_its_date(api, db, emulator, payer):
    pid = created(initiate(api, payer, body=dated(payer, bank_day(db, 1))),
                  STD_SCT)["paymentId"]
    confirm_on_device(emulator, payer)
    wait_status(db, pid, "ACTC", timeout=10)
    set_balance(db, payer.iban, 1000)
    the_day_has_come(db, pid)
    assert wait_status(db, pid, "RJCT", timeout=10) == \
        ("RJCT", "insufficient funds", "finalised")
    assert balance(db, payer.iban) == 1000
    r = api.get("%s/%s/status" % (STD_SCT, pid), payer.token)
    assert r.json()["transactionStatus"] == "RJCT"


def test_future_dated_in_chromium_shows_its_date(api, db, server, browser,
                                                 payer_factory):
    payer = payer_factory(device=False)
    day = bank_day(db, 5)
    b = created(initiate(api, payer, body=dated(payer, day),
                         decoupled=False), STD_SCT)
    pid = b["paymentId"]
    driver = browser("de-DE")
    login_payment(driver, server.url + b["_links"]["scaRedirect"]["href"],
                  payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "authorise-form"))
    assert driver.find_element(By.CLASS_NAME,
                               "payment-execution-date").text == day
    driver.find_element(By.ID, "otp").send_keys(payer.psu.totp())
    driver.find_element(By.ID, "authorise-submit").click()
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(REDIRECT))
    assert wait_status(db, pid, "ACTC", timeout=10)[0] == "ACTC"
    still(db, pid, "ACTC")
    assert balance(db, payer.iban) == 100000
    the_day_has_come(db, pid)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"


@pytest.mark.parametrize("product,days,text", [
    ("sepa-credit-transfers", -1, "must be a date from today"),
    ("sepa-credit-transfers", 91, "must be a date from today"),
    ("instant-sepa-credit-transfers", 1, "executed at once"),
])
def test_execution_date_invalid_stores_nothing(api, db, payer, product,
                                               days, text):
    n = payments_of(db, payer)
    m = tpp_error(initiate(api, payer, product=product,
                           body=dated(payer, bank_day(db, days))),
                  400, "EXECUTION_DATE_INVALID", "requestedExecutionDate")
    assert text in m["text"]
    assert payments_of(db, payer) == n


def test_execution_date_today_and_malformed(api, db, emulator, payer):
    # Today: executed once authorised, as without a date.
    pid = created(initiate(api, payer, product="instant-sepa-credit-"
                           "transfers", body=dated(payer, bank_day(db))),
                  STD_INST)["paymentId"]
    confirm_on_device(emulator, payer)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    n = payments_of(db, payer)
    # (not every one of them breaks the file's "format: date")
    with bg_openapi.expect_invalid_request():
        for bad in ("2026-02-29", "2027-13-01", "20270101", "tomorrow"):
            tpp_error(initiate(api, payer, body=dated(payer, bad)), 400,
                      "FORMAT_ERROR", "requestedExecutionDate")
        # A NUL in a string: no JSON the service reads (jansson).
        tpp_error(initiate(api, payer, body=dated(
            payer, bank_day(db, 1) + "\u0000x")), 400, "FORMAT_ERROR",
            "body")
    assert payments_of(db, payer) == n
