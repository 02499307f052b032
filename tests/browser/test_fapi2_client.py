"""A FAPI 2.0 client that nobody here wrote, against psd2gate: panva's
openid-client (npm, a certified FAPI 2.0 relying party; tests/fapi-client
pins it) discovers the metadata, pushes the authorisation request with
PKCE and a DPoP proof, authenticates with private_key_jwt, and after the
PSU's login and consent in Chromium exchanges the code for a DPoP-bound
token, then reads the account list and initiates a payment with it.

The bank requires every API call to carry the TPP's HTTP signature over
its headers, DPoP among them, which no OAuth library makes: the client's
calls go through a signing gateway here (the tests' signer, as a TPP's
own gateway would), which adds the signature and forwards them
unchanged. The DPoP proof is the library's own."""

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from selenium.webdriver.common.by import By

import psd2lib
from psd2lib import MAIN_URL, ACCOUNT_LIST, click_and_wait
from conftest import CALLBACK
from passkeys import fill, wait_id
from tpp_keys import b64url_sha256, register_fapi_client

SRC = os.path.join(psd2lib.TOP, "tests", "fapi-client")
DIR = os.path.join(psd2lib.TOP, "var", "fapi-client")
PAYMENTS = MAIN_URL + "/auth/v1/psd2/payments/sepa-credit-transfers"


def install():
    """openid-client as locked in tests/fapi-client, by npm ci (again
    only when the lock changes)."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), "%s not found: the FAPI 2.0 client " \
            "test needs Node.js 20 or later and npm" % tool
    os.makedirs(DIR, exist_ok=True)
    shutil.copy(os.path.join(SRC, "client.mjs"), DIR)
    lock = os.path.join(SRC, "package-lock.json")
    done = os.path.join(DIR, ".installed")
    with open(lock, "rb") as f:
        want = f.read()
    if os.path.exists(done) and open(done, "rb").read() == want:
        return
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(SRC, name), DIR)
    p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                        "--ignore-scripts"], cwd=DIR, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, "npm ci of openid-client failed:\n" + \
        p.stdout[-2000:] + p.stderr[-2000:]
    with open(done, "wb") as f:
        f.write(want)


class Gateway:
    """The TPP's signing gateway: a call to it, with its target in
    X-Psd2-Target, is signed with the TPP's certificate and sent on;
    the answer comes back as it is."""

    FORWARD = ("authorization", "dpop", "content-type", "accept",
               "tpp-redirect-uri", "psu-ip-address")

    def __init__(self, signer):
        gw = self

        class Handler(BaseHTTPRequestHandler):
            def relay(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                h = {k: v for k, v in self.headers.items()
                     if k.lower() in Gateway.FORWARD}
                r = gw.signer.request(self.command,
                                      self.headers["X-Psd2-Target"],
                                      body=body, headers=h, timeout=30)
                gw.seen.append((self.command, r.status_code,
                                self.headers.get("DPoP") is not None))
                self.send_response(r.status_code)
                for k in ("Content-Type", "DPoP-Nonce", "WWW-Authenticate",
                          "Location"):
                    if k in r.headers:
                        self.send_header(k, r.headers[k])
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = relay

            def log_message(self, *a):
                pass

        self.signer = signer
        self.seen = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever,
                         daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def node(*args):
    p = subprocess.run(["node", os.path.join(DIR, "client.mjs")] +
                       list(args), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, "openid-client failed:\n" + p.stderr
    return json.loads(p.stdout)


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


def thumbprint(jwk):
    """RFC 7638: the SHA-256 of the key's required members."""
    text = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")},
                      separators=(",", ":"), sort_keys=True)
    return b64url_sha256(text)


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
