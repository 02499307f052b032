"""The scaRedirect page of a redirect payment in headless Chromium
(Selenium), English and German: opening it moves scaStatus received ->
started (before any login); after the PSU login (the password alone) it
shows the payment: amount as the authenticator formats it, currency,
payee name and IBAN, debtor account, escaped. Another PSU's payment, or
an id that does not exist, is "unknown"."""

import uuid

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import CREDITOR, REDIRECT, SCT, payment_body, sql1
from test_pis_payments_page import login_payment

TEXTS = {
    "en-US": ("Authorise a payment", "waiting for your authorisation",
              "This payment does not exist or is not yours."),
    "de-DE": ("Zahlung freigeben", "wartet auf Ihre Freigabe",
              "Diese Zahlung gibt es nicht oder sie gehört nicht Ihnen."),
}


def sca_status(api, payer, pid, aid):
    r = api.get("%s/%s/authorisations/%s" % (SCT, pid, aid), payer.token)
    assert r.status_code == 200, r.text
    return r.json()["scaStatus"]


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_authorise_page(lang, api, db, server, payer_factory, browser):
    title, waiting, unknown = TEXTS[lang]
    payer = payer_factory(device=False)
    r = api.initiate(payer, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT},
                     body=payment_body(payer, amount="98765.4",
                                       name="Ärzte <i>&</i> Söhne"))
    assert r.status_code == 201, r.text
    b = r.json()
    pid, aid = b["paymentId"], b["authorisationId"]
    href = b["_links"]["scaRedirect"]["href"]
    assert href == "/auth/payments/%s/authorise" % pid
    assert sca_status(api, payer, pid, aid) == "received"

    driver = browser(lang)
    driver.get(server.url + href)
    # Opened: started, though nobody has logged in yet.
    assert driver.find_elements(By.ID, "username")
    assert sca_status(api, payer, pid, aid) == "started"
    assert pid not in driver.page_source.replace(href, "")
    login_payment(driver, server.url + href, payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "payment-%s" % pid))
    assert driver.current_url.endswith(href)
    assert driver.find_element(By.TAG_NAME, "h1").text == title
    p = driver.find_element(By.ID, "payment-%s" % pid)
    assert p.find_element(By.CLASS_NAME, "payment-amount").text == \
        "98 765.40 EUR"
    assert p.find_element(By.CLASS_NAME, "payment-payee").text == \
        "Ärzte <i>&</i> Söhne"
    assert p.find_elements(By.CSS_SELECTOR, ".payment-payee i") == []
    assert p.find_element(By.CLASS_NAME,
                          "payment-creditor-iban").text == CREDITOR
    assert p.find_element(By.CLASS_NAME,
                          "payment-debtor-iban").text == payer.iban
    assert p.find_element(By.CLASS_NAME, "payment-status").text == \
        waiting
    assert p.get_attribute("data-sca-status") == "started"
    # Opening again changes nothing.
    assert sca_status(api, payer, pid, aid) == "started"

    # Another PSU's payment and a made-up id: unknown, nothing shown.
    other = payer_factory(device=False)
    r = api.initiate(other, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    opid = r.json()["paymentId"]
    for id_ in (opid, str(uuid.uuid4())):
        # The password-only session is good for its own payment's
        # page alone: another id asks for the login again ...
        url = server.url + "/auth/payments/%s/authorise" % id_
        driver.get(url)
        assert driver.find_elements(By.ID, "username")
        assert driver.find_elements(By.ID, "payment-%s" % id_) == []
        # ... and after it, that payment is unknown to this PSU.
        login_payment(driver, url, payer.psu)
        assert driver.find_elements(By.ID, "payment-%s" % id_) == []
        assert unknown in driver.page_source
    assert other.psu.accounts[0][0] not in driver.page_source


def test_authorise_page_decoupled_untouched(api, db, emulator, server,
                                            payer_factory):
    """Opening the redirect page of a decoupled payment leaves its
    authorisation as it is (started by the service, decided by the
    device)."""
    payer = payer_factory()
    r = api.initiate(payer)
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    r = requests.get(server.url + "/auth/payments/%s/authorise" % pid,
                     timeout=10, allow_redirects=False)
    assert r.status_code == 200 and 'id="username"' in r.text
    assert sql1(db, """SELECT approach, sca_status FROM payment_authorisation
                       WHERE payment_id = %s""", pid) == \
        ("decoupled", "started")


def test_authorise_page_bad_path(server):
    r = requests.get(server.url + "/auth/payments/%s/authorise" %
                     ("0" * 36), timeout=10, allow_redirects=False)
    assert r.status_code == 404
    assert 'id="username"' not in r.text
