"""The PSU's side in headless Chromium: login, TOTP, consent, redirect back
to the TPP; lock; deny; CSRF; languages; no JavaScript."""

import secrets
import urllib.parse

import pytest
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

import psd2lib
from psd2lib import (MAIN_URL, authorize_url, click_and_wait, compact,
                     exchange_code, sandbox_client)
from conftest import CALLBACK, document_statuses

TOKEN_URL = MAIN_URL + "/auth/oauth/token"
AUTHZ_URL = MAIN_URL + "/auth/oauth/authorize"


def wait_id(d, ident, timeout=20):
    return WebDriverWait(d, timeout).until(
        EC.presence_of_element_located((By.ID, ident)))


def last_status(d):
    st = document_statuses(d)
    assert st, "no document response recorded"
    return st[-1][1]


def fill(d, name, value):
    el = d.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def login(d, psu, password=None):
    wait_id(d, "login-form")
    fill(d, "username", psu.username)
    fill(d, "password", password if password is not None else psu.password)
    click_and_wait(d, d.find_element(By.ID, "login-submit"))


def enter_otp(d, psu):
    wait_id(d, "otp-form")
    fill(d, "otp", psu.totp())
    click_and_wait(d, d.find_element(By.ID, "otp-submit"))
    wait_id(d, "consent-form")


def set_accounts(d, ibans):
    """Ticks exactly the accounts whose label shows one of ibans."""
    want = {compact(i) for i in ibans}
    boxes = d.find_elements(By.CSS_SELECTOR,
                            "#consent-form input[type=checkbox][name=account]")
    assert boxes
    ticked = 0
    for box in boxes:
        label = d.find_element(By.CSS_SELECTOR,
                               "label[for='%s']" % box.get_attribute("id"))
        on = any(w in compact(label.text) for w in want)
        if box.is_selected() != on:
            # Click the label: that is what a PSU does, and it proves the
            # label is bound to the box.
            label.click()
        assert box.is_selected() == on
        ticked += on
    return ticked


def oauth(client, scope="ACCOUNT_INFORMATION"):
    return OAuth2Session(client.client_id, client.secret, scope=scope,
                         redirect_uri=CALLBACK, code_challenge_method="S256",
                         token_endpoint_auth_method="client_secret_basic")


@pytest.fixture
def cb_client(client_factory):
    return client_factory(redirect_uris=[CALLBACK,
                                         "https://tpp.example/callback"])


def test_login_totp_consent_subset_redirect(driver, callback_server,
                                            psu_factory, cb_client, signer,
                                            dbinfo):
    psu = psu_factory()
    sess = oauth(cb_client)
    verifier = generate_token(48)
    state = "br " + secrets.token_hex(4) + " &=\u00fc"
    url, _ = sess.create_authorization_url(AUTHZ_URL, state=state,
                                           code_verifier=verifier)
    driver.get(url)
    login(driver, psu)
    enter_otp(driver, psu)
    page = driver.page_source
    assert cb_client.name in page and cb_client.org_id in page
    chosen = psu.accounts[0][0]
    assert set_accounts(driver, [chosen]) == 1
    driver.find_element(By.ID, "approve").click()
    q, path = callback_server.wait_for(state)
    assert q["code"][0]
    WebDriverWait(driver, 20).until(
        lambda d: d.current_url.startswith(CALLBACK))
    tok = sess.fetch_token(TOKEN_URL,
                           authorization_response="http://127.0.0.1:8000" +
                           path, code_verifier=verifier)
    assert tok["token_type"] == "bearer"
    assert tok["scope"] == "ACCOUNT_INFORMATION"
    psd2lib.register_tokens(tok, cb_client)
    # Only the ticked account is in the consent.
    assert psd2lib.consented_ibans(dbinfo, psu.username) == \
        {compact(chosen)}
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, tok["access_token"])
    assert r.status_code == 200, r.text
    assert {compact(a["iban"]) for a in r.json()["accounts"]} == \
        {compact(chosen)}


def test_sandbox_client_redirect_and_exchange(driver, callback_server,
                                              psu_factory):
    sc = sandbox_client()
    psu = psu_factory()
    state = "sb-" + secrets.token_hex(6)
    driver.get(authorize_url(MAIN_URL, sc.client_id, CALLBACK,
                             "ACCOUNT_INFORMATION FUND_AVAILABILITY", state))
    login(driver, psu)
    enter_otp(driver, psu)
    set_accounts(driver, [a for a, _ in psu.accounts])
    driver.find_element(By.ID, "approve").click()
    q, _ = callback_server.wait_for(state)
    r = exchange_code(sc, q["code"][0], redirect_uri=CALLBACK)
    assert r.status_code == 200, r.text
    assert sorted(r.json()["scope"].split()) == ["ACCOUNT_INFORMATION",
                                                 "FUND_AVAILABILITY"]


def test_wrong_password_five_times_locks(driver, psu_factory, cb_client):
    psu = psu_factory()
    driver.get(authorize_url(MAIN_URL, cb_client.client_id, CALLBACK,
                             "ACCOUNT_INFORMATION", "lock"))
    document_statuses(driver)
    messages = set()
    for i in range(5):
        login(driver, psu, password="wrong-%d" % i)
        assert last_status(driver) == 401
        err = driver.find_element(By.CSS_SELECTOR, "p.error[role=alert]")
        assert err.is_displayed()
        messages.add(err.text.strip())
    assert len(messages) == 1
    login(driver, psu)
    assert last_status(driver) == 403
    locked = driver.find_element(By.ID, "locked")
    assert locked.is_displayed() and locked.text.strip()
    assert not driver.find_elements(By.ID, "otp-form")


def test_deny_redirects_access_denied(driver, callback_server, psu_factory,
                                      cb_client):
    psu = psu_factory()
    state = "deny-" + secrets.token_hex(6)
    driver.get(authorize_url(MAIN_URL, cb_client.client_id, CALLBACK,
                             "ACCOUNT_INFORMATION", state))
    login(driver, psu)
    enter_otp(driver, psu)
    driver.find_element(By.ID, "deny").click()
    q, _ = callback_server.wait_for(state)
    assert q["error"] == ["access_denied"]
    assert "code" not in q


@pytest.mark.parametrize("form,submit", [("login-form", "login-submit"),
                                         ("otp-form", "otp-submit"),
                                         ("consent-form", "approve")])
def test_form_without_csrf_token_refused(driver, callback_server,
                                         psu_factory, cb_client, form,
                                         submit):
    psu = psu_factory()
    state = "csrf-" + secrets.token_hex(6)
    driver.get(authorize_url(MAIN_URL, cb_client.client_id, CALLBACK,
                             "ACCOUNT_INFORMATION", state))
    if form != "login-form":
        login(driver, psu)
    if form == "consent-form":
        enter_otp(driver, psu)
    wait_id(driver, form)
    if form == "login-form":
        fill(driver, "username", psu.username)
        fill(driver, "password", psu.password)
    elif form == "otp-form":
        fill(driver, "otp", psu.totp())
    else:
        set_accounts(driver, [a for a, _ in psu.accounts])
    driver.execute_script(
        "var f = document.getElementById(arguments[0]);"
        "var c = f.querySelector('input[name=csrf]');"
        "if (!c) { return false; } c.parentNode.removeChild(c); return true;",
        form)
    assert not driver.find_elements(By.CSS_SELECTOR,
                                    "#%s input[name=csrf]" % form)
    document_statuses(driver)
    click_and_wait(driver, driver.find_element(By.ID, submit))
    assert last_status(driver) == 403
    assert not driver.find_elements(By.ID, "otp-form")
    assert not driver.find_elements(By.ID, "consent-form")
    assert not driver.current_url.startswith(CALLBACK)
    with callback_server.cond:
        assert not any(state in urllib.parse.unquote_plus(p)
                       for p in callback_server.requests)


@pytest.mark.parametrize("lang,labels", [("de", ("Zustimmen", "Ablehnen")),
                                         ("nl", ("Toestaan", "Weigeren"))])
def test_language_switch_link(driver, psu_factory, cb_client, lang, labels):
    psu = psu_factory()
    driver.get(authorize_url(MAIN_URL, cb_client.client_id, CALLBACK,
                             "ACCOUNT_INFORMATION", "lang-" + lang))
    wait_id(driver, "login-form")
    links = [a for a in driver.find_elements(By.TAG_NAME, "a")
             if "lang=" + lang in (a.get_attribute("href") or "")]
    assert links, "no language switch link to %s" % lang
    click_and_wait(driver, links[0])
    assert driver.find_element(By.TAG_NAME, "html")\
        .get_attribute("lang").startswith(lang)
    login(driver, psu)
    enter_otp(driver, psu)
    assert driver.find_element(By.TAG_NAME, "html")\
        .get_attribute("lang").startswith(lang)
    assert driver.find_element(By.ID, "approve").text.strip() == labels[0]
    assert driver.find_element(By.ID, "deny").text.strip() == labels[1]


def test_flow_without_javascript(nojs_driver, callback_server, psu_factory,
                                 cb_client):
    d = nojs_driver
    d.get("data:text/html,<p id=x>a</p><script>document.getElementById"
          "('x').textContent='b'</script>")
    assert d.find_element(By.ID, "x").text == "a", "JavaScript is not off"
    psu = psu_factory()
    state = "nojs-" + secrets.token_hex(6)
    d.get(authorize_url(MAIN_URL, cb_client.client_id, CALLBACK,
                        "ACCOUNT_INFORMATION", state))
    login(d, psu)
    enter_otp(d, psu)
    assert set_accounts(d, [psu.accounts[1][0]]) == 1
    d.find_element(By.ID, "approve").click()
    q, _ = callback_server.wait_for(state)
    r = exchange_code(cb_client, q["code"][0], redirect_uri=CALLBACK)
    assert r.status_code == 200, r.text


def test_validity_days_field_accepts_typing(driver, callback_server,
                                            psu_factory, cb_client):
    psu = psu_factory()
    state = "vd-" + secrets.token_hex(6)
    driver.get(authorize_url(MAIN_URL, cb_client.client_id, CALLBACK,
                             "ACCOUNT_INFORMATION", state))
    login(driver, psu)
    enter_otp(driver, psu)
    vd = driver.find_element(By.NAME, "validity_days")
    assert vd.get_attribute("value") == "90"
    vd.clear()
    vd.send_keys("30")
    set_accounts(driver, [a for a, _ in psu.accounts])
    driver.find_element(By.ID, "approve").click()
    q, _ = callback_server.wait_for(state)
    assert q["code"]
