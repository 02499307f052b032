"""A FAPI 2.0 client that nobody here wrote, against psd2gate: panva's
openid-client (npm, a certified FAPI 2.0 relying party; tests/fapi-client
pins it) discovers the metadata, pushes the authorisation request with
PKCE and a DPoP proof, authenticates with private_key_jwt, and after the
PSU's login and consent in Chromium exchanges the code for a DPoP-bound
token, then reads the account list and initiates a payment with it.

The bank requires every API call to carry the TPP's HTTP signature over
its headers, DPoP among them, which no OAuth library makes: the client's
calls go through a signing gateway (tests/lib/fapi_client.py, the tests'
signer, as a TPP's own gateway would), which adds the signature and
forwards them unchanged. The DPoP proof is the library's own. The mTLS
variant runs in production's configuration (tests/prod)."""

import json

import pytest
import requests
from selenium.webdriver.common.by import By

import psd2lib
from psd2lib import MAIN_URL, ACCOUNT_LIST, click_and_wait
from conftest import CALLBACK
from passkeys import fill, wait_id
from fapi_client import Gateway, install, node, thumbprint
from tpp_keys import register_fapi_client

PAYMENTS = MAIN_URL + "/auth/v1/psd2/payments/sepa-credit-transfers"


@pytest.fixture(scope="module")
def openid_client():
    install()


@pytest.fixture
def fapi_client(client_factory, tmp_path):
    """A TPP client registered as a FAPI 2.0 client: private_key_jwt
    with its ES256 key, PAR required, refresh tokens not rotated."""
    client = client_factory(redirect_uris=[CALLBACK])
    client.key = register_fapi_client(client.client_id, tmp_path)
    return client


@pytest.fixture
def gateway(signer, fapi_client):
    gw = Gateway(signer.for_org(fapi_client.org_id))
    yield gw
    gw.close()


def flow(driver, callback_server, tmp_path, client, gateway, psu, scope,
         calls):
    """The client's PAR, the PSU's login and consent in Chromium, then the
    client's code grant and calls: its result."""
    state = tmp_path / ("state-%s.json" % scope)
    state.write_text(json.dumps({
        "issuer": MAIN_URL, "client_id": client.client_id,
        "client_key": client.key.decode(), "redirect_uri": CALLBACK,
        "scope": scope, "signing_proxy": gateway.url, "calls": calls}))
    url = node("begin", str(state))["url"]
    assert url.startswith(MAIN_URL + "/auth/oauth/authorize?")
    assert "request_uri=" in url and "code_challenge" not in url
    driver.get(url)
    wait_id(driver, "login-form")
    fill(driver, "username", psu.username)
    fill(driver, "password", psu.password)
    click_and_wait(driver, driver.find_element(By.ID, "login-submit"))
    wait_id(driver, "otp-form")
    fill(driver, "otp", psu.totp())
    click_and_wait(driver, driver.find_element(By.ID, "otp-submit"))
    wait_id(driver, "consent-form")
    # The PSU ticks the accounts the consent is for (none is by default).
    for box in driver.find_elements(
            By.CSS_SELECTOR, "#consent-form input[type=checkbox][name=account]"):
        if not box.is_selected():
            driver.find_element(By.CSS_SELECTOR, "label[for='%s']" %
                                box.get_attribute("id")).click()
    driver.find_element(By.ID, "approve").click()
    q, path = callback_server.wait_for(json.loads(state.read_text())
                                       ["state"])
    assert q["iss"] == [MAIN_URL]
    out = node("finish", str(state), "http://127.0.0.1:8000" + path)
    out["dpop_public"] = json.loads(state.read_text())["dpop_public"]
    return out


def bindings(dbinfo, client_id):
    """What the client's tokens are bound to (token.cnf), by kind."""
    c = psd2lib.db_connect(dbinfo)
    try:
        cur = c.cursor()
        cur.execute("SELECT DISTINCT kind, cnf FROM token "
                    "WHERE client_id = %s", (client_id,))
        return set(cur.fetchall())
    finally:
        c.close()


def test_openid_client_reads_accounts_with_a_dpop_token(
        openid_client, driver, callback_server, tmp_path, fapi_client,
        gateway, psu_factory, dbinfo):
    psu = psu_factory()
    out = flow(driver, callback_server, tmp_path, fapi_client, gateway,
               psu, "ACCOUNT_INFORMATION",
               [{"method": "GET", "url": MAIN_URL + ACCOUNT_LIST}])
    assert out["token_type"].lower() == "dpop", out
    assert out["has_refresh_token"], out
    (call,) = out["calls"]
    assert call["status"] == 200, call
    ibans = {a["iban"] for a in json.loads(call["body"])["accounts"]}
    assert ibans and ibans <= {psd2lib.compact(i) for i, *_ in psu.accounts}
    # The access token is bound to the library's DPoP key (the refresh
    # token to the client's authentication, RFC 9449 5); every API call
    # carried its proof, through the gateway's signature.
    assert bindings(dbinfo, fapi_client.client_id) == {
        ("access", "jkt:" + thumbprint(out["dpop_public"])),
        ("refresh", None)}
    assert gateway.seen and all(dpop for _, _, dpop in gateway.seen)


def test_openid_client_initiates_a_payment_with_a_dpop_token(
        openid_client, driver, callback_server, tmp_path, fapi_client,
        gateway, psu_factory):
    psu = psu_factory(n_accounts=1)
    debtor = psd2lib.compact(psu.accounts[0][0])
    body = {"instructedAmount": {"currency": "EUR", "amount": "12.34"},
            "debtorAccount": {"iban": debtor},
            "creditorAccount": {"iban": "DE89370400440532013000"},
            "creditorName": "Max Mustermann",
            "remittanceInformationUnstructured": "FAPI 2.0 client"}
    out = flow(driver, callback_server, tmp_path, fapi_client, gateway,
               psu, "PAYMENT_INITIATION",
               [{"method": "POST", "url": PAYMENTS, "body": body,
                 "headers": {"TPP-Redirect-URI": CALLBACK,
                             "PSU-IP-Address": "192.0.2.10"}}])
    (call,) = out["calls"]
    assert call["status"] == 201, call
    payment = json.loads(call["body"])
    assert payment["transactionStatus"] == "RCVD", payment
    r = requests.get(MAIN_URL + "/auth/v1/psd2/payments/"
                     "sepa-credit-transfers/" + payment["paymentId"],
                     timeout=10)
    # Without the token and its proof: refused.
    assert r.status_code in (400, 401), r.text
