"""The PSU reports an executed payment as fraud on the payments page, in
headless Chromium: the form, the question in the PSU's words, the
confirmation; the mark and its audit row; the form's CSRF token; another
PSU's payment and a payment that was not executed are refused and
nothing is written."""

import re

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import (REDIRECT, sql, sql1, wait_shown, wait_status)
from test_pis_payments_page import login

QUESTION = {"en-US": "What happened?", "de-DE": "Was ist geschehen?"}


def executed_payment(api, db, emulator, payer, amount="25.00"):
    """A payment confirmed on the payer's authenticator and booked."""
    from conftest import payment_body
    r = api.initiate(payer, body=payment_body(payer, amount=amount))
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    wait_status(db, pid, "ACSC", timeout=15)
    return pid


def waiting_payment(api, payer):
    r = api.initiate(payer, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    return r.json()["paymentId"]


def page_session(driver, server):
    """requests with the browser's cookies (the PSU's session)."""
    s = requests.Session()
    for c in driver.get_cookies():
        s.cookies.set(c["name"], c["value"])
    return s


def hidden(driver, form_id, name):
    return driver.find_element(
        By.CSS_SELECTOR, "#%s input[name=%s]" % (form_id, name)
    ).get_attribute("value")


def test_psu_reports_fraud(api, db, emulator, server, payer_factory,
                           browser):
    payer = payer_factory(balance=100000)
    pid = executed_payment(api, db, emulator, payer)
    waiting = waiting_payment(api, payer)
    other = waiting_payment(api, payer_factory(device=False))

    d = browser("de-DE")
    login(d, server.url + "/auth/payments", payer.psu)
    WebDriverWait(d, 20).until(
        lambda x: x.find_elements(By.ID, "fraud-button-%s" % pid))
    # Only the executed payment has the form.
    assert d.find_elements(By.ID, "fraud-%s" % waiting) == []
    token = hidden(d, "fraud-%s" % pid, "csrf")
    s = page_session(d, server)
    url = server.url + "/auth/payments/fraud"

    # Refusals, each writing nothing: no or a forged token, another
    # PSU's payment, a payment that was not executed.
    before = sql1(db, "SELECT count(*) FROM fraud_mark")
    r = s.post(url, data={"payment_id": pid}, allow_redirects=False)
    assert r.status_code == 403, r.text
    r = s.post(url, data={"payment_id": pid, "csrf": token[:-4] + "AAAA"},
               allow_redirects=False)
    assert r.status_code == 403, r.text
    r = s.post(url, data={"payment_id": other, "csrf": token},
               allow_redirects=False)
    assert r.status_code == 404 and 'id="fraud_unknown"' in r.text, r.text
    r = s.post(url, data={"payment_id": waiting, "csrf": token},
               allow_redirects=False)
    assert r.status_code == 409 and 'id="fraud_not_executed"' in r.text, \
        r.text
    # The confirmation's token is another one: the page's does not do.
    r = s.post(url + "/confirm", data={"payment_id": pid, "csrf": token,
                                       "type": "payer_manipulated"},
               allow_redirects=False)
    assert r.status_code == 403, r.text
    assert sql1(db, "SELECT count(*) FROM fraud_mark") == before

    # The real walk: the question in the PSU's words, then the mark.
    d.find_element(By.ID, "fraud-button-%s" % pid).click()
    WebDriverWait(d, 20).until(
        lambda x: x.find_elements(By.ID, "fraud-form"))
    assert d.find_element(By.TAG_NAME, "legend").text == QUESTION["de-DE"]
    labels = [e.text for e in d.find_elements(
        By.CSS_SELECTOR, "#fraud-form fieldset label")]
    assert len(labels) == 3 and all(labels), labels
    assert d.find_element(By.ID, "fraud-amount").text == "25,00 EUR" or \
        "25" in d.find_element(By.ID, "fraud-amount").text
    confirm_token = hidden(d, "fraud-form", "csrf")
    d.find_element(By.ID, "type-payer_manipulated").click()
    d.find_element(By.ID, "details").send_keys(
        "Anruf eines falschen Bankmitarbeiters <b>")
    d.find_element(By.ID, "fraud-confirm").click()
    WebDriverWait(d, 20).until(
        lambda x: x.find_elements(By.CSS_SELECTOR,
                                  "#payment-%s .payment-fraud" % pid))
    assert d.current_url.endswith("/auth/payments")
    assert d.find_elements(By.ID, "fraud-%s" % pid) == []

    rows = sql(db, """SELECT action, fraud_type, reported_by, actor, reason
                      FROM fraud_mark WHERE payment_id = %s""", pid)
    actor = "psu:" + payer.psu.username
    assert rows == [("mark", "payer_manipulated", "psu", actor,
                     "Anruf eines falschen Bankmitarbeiters <b>")]
    audit = sql(db, """SELECT detail FROM audit_log WHERE actor = %s
                       AND action = 'fraud.mark'""", actor)
    assert len(audit) == 1 and audit[0][0]["payment"] == pid and \
        audit[0][0]["type"] == "payer_manipulated"

    # The confirmation posted again (double click, back button): the same
    # answer, nothing more written; another type is refused.
    s = page_session(d, server)
    form = {"payment_id": pid, "csrf": confirm_token,
            "type": "payer_manipulated"}
    r = s.post(url + "/confirm", data=form, allow_redirects=False)
    assert r.status_code == 303, r.text
    form["type"] = "issued_by_fraudster"
    r = s.post(url + "/confirm", data=form, allow_redirects=False)
    assert r.status_code == 409 and 'id="fraud_already"' in r.text
    form["type"] = "no_such_type"
    r = s.post(url + "/confirm", data=form, allow_redirects=False)
    assert r.status_code in (400, 409), r.text
    assert sql1(db, "SELECT count(*) FROM fraud_mark WHERE payment_id = %s",
                pid) == 1
    # The mark is shown in the PSU's words, escaped.
    text = d.find_element(By.CSS_SELECTOR,
                          "#payment-%s .payment-fraud" % pid).text
    assert re.search("verleitet", text), text
