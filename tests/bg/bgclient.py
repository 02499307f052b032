"""A TPP's Berlin Group client, written from the Implementation
Guidelines 1.3.11 and src/bg/README.md alone: what a TPP's standard XS2A
client does, and nothing it would have to guess.

It knows the documented root (ROOT, "/xs2a/v1") and the bank's OAuth
metadata (RFC 8414, "/.well-known/oauth-authorization-server"); every
other URL it calls is one the bank gave it: Location, _links (relative
or absolute, resolved against the base URL), scaRedirect, scaOAuth. It
signs every request (draft-cavage HTTP signature, psd2lib.Signer, with
the guidelines' header TPP-Signature-Certificate), sends X-Request-ID
(a fresh UUID) and PSU-IP-Address when the PSU is present, and gets its
tokens with Authlib: client_credentials for the TPP's own token,
authorization code + PKCE (S256) with scope AIS:{consentId} for the
integrated OAuth approach.

TppCallback is the TPP's redirect endpoint (TPP-Redirect-URI,
TPP-Nok-Redirect-URI, the OAuth redirect_uri) on a free port of this
machine. The PSU's side (the bank's pages) is not the TPP's: see
psu_in_chromium and psu_in_plain_browser at the end.
"""

import json
import time
import urllib.parse
import urllib.request
import uuid

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

import psd2lib

ROOT = "/xs2a/v1"
METADATA = "/.well-known/oauth-authorization-server"
PSU_IP = "192.0.2.10"


class BgError(AssertionError):
    pass


def expect(r, *statuses):
    """r if its status is one of statuses, else BgError with the body."""
    if r.status_code not in statuses:
        raise BgError("%s %s answered %d, expected %s: %s" % (
            r.request.method, r.request.url, r.status_code,
            "/".join(map(str, statuses)), r.text[:800]))
    return r


# --------------------------------------------------------------------------
# The TPP's redirect endpoint

class TppCallback(psd2lib.CallbackServer):
    """The TPP's redirect URIs (http://127.0.0.1:PORT/..., a free
    port)."""

    def at(self, path):
        return self.url + path

    def wait_path(self, path, since=0, timeout=30):
        """(full URL, query) of the first request to path after mark
        since."""
        try:
            q, got = self.wait(path, since=since, timeout=timeout)
        except AssertionError as e:
            raise BgError("the TPP saw no request to %s: %s" % (path, e))
        return self.url + got, q


# --------------------------------------------------------------------------
# The client

class Consent:
    """What the TPP knows of a consent: its id, the links and headers of
    the answer that created it (or started its authorisation)."""

    def __init__(self, r):
        body = r.json()
        self.response = r
        self.id = body["consentId"]
        self.status = body["consentStatus"]
        self.links = body.get("_links", {})
        self.location = r.headers.get("Location")
        self.approach = r.headers.get("ASPSP-SCA-Approach")

    def href(self, name):
        if name not in self.links:
            raise BgError("no _links.%s in %r" % (name, self.links))
        return self.links[name]["href"]

    @property
    def resource(self):
        """The consent resource: _links.self, else Location."""
        if "self" in self.links:
            return self.links["self"]["href"]
        if not self.location:
            raise BgError("neither _links.self nor Location")
        return self.location


class BgClient:
    def __init__(self, client, signer, callback=None, base=None):
        self.client = client
        if isinstance(signer, psd2lib.SignerPool):
            signer = signer.for_org(client.org_id)
        self.signer = signer
        self.callback = callback
        self.base = base or psd2lib.MAIN_URL
        self.http = requests.Session()
        self._tpp_token = None
        self._metadata = {}

    # -- transport ---------------------------------------------------------

    def url(self, href, params=None):
        url = urllib.parse.urljoin(self.base + "/", href)
        if params:
            sep = "&" if urllib.parse.urlsplit(url).query else "?"
            url += sep + urllib.parse.urlencode(params)
        return url

    def call(self, method, href, body=None, token=None, consent_id=None,
             psu_ip=PSU_IP, headers=None, params=None, raw=None, drop=()):
        """One signed request; headers with the value None are left
        out (to send a request without one of the usual headers; not
        X-Request-ID, which the signer then makes up and signs), and the
        headers named in drop are taken off after signing."""
        url = self.url(href, params)
        h = {"Authorization": "Bearer " + (token or self.tpp_token()),
             "X-Request-ID": str(uuid.uuid4())}
        data = raw if raw is not None else (
            json.dumps(body).encode() if body is not None else b"")
        if data:
            h["Content-Type"] = "application/json"
        if consent_id:
            h["Consent-ID"] = consent_id
        if psu_ip:
            h["PSU-IP-Address"] = psu_ip
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        signed = {}
        for k, v in self.signer.headers(method, url, data, h).items():
            if k.lower() == "tpp-signing-certificate":
                # The guidelines' name of the certificate header.
                k = "TPP-Signature-Certificate"
            if k.lower() not in {d.lower() for d in drop}:
                signed[k] = v
        return self.http.request(method, url, data=data or None,
                                 headers=signed, timeout=30,
                                 allow_redirects=False)

    # -- OAuth (Authlib) ---------------------------------------------------

    def metadata(self, href=METADATA):
        url = self.url(href)
        if url not in self._metadata:
            r = expect(self.http.get(url, timeout=30), 200)
            self._metadata[url] = r.json()
        return self._metadata[url]

    def _oauth(self, **kw):
        return OAuth2Session(self.client.client_id, self.client.secret,
                             token_endpoint_auth_method="client_secret_basic",
                             **kw)

    def fetch_tpp_token(self, scope="xs2a"):
        """The TPP's own token: the token answer (a dict)."""
        s = self._oauth(scope=scope)
        tok = s.fetch_token(self.metadata()["token_endpoint"],
                            grant_type="client_credentials")
        return dict(tok)

    def tpp_token(self):
        t = self._tpp_token
        if t is None or t.get("expires_at", 0) < time.time() + 5:
            t = self._tpp_token = self.fetch_tpp_token()
        return t["access_token"]

    def oauth_start(self, consent, redirect_path="/oauth"):
        """The integrated OAuth approach, TPP side: the URL to send the
        PSU to, from the consent's scaOAuth metadata. Returns an
        OAuthAttempt for oauth_finish."""
        meta = self.metadata(consent.href("scaOAuth"))
        verifier = generate_token(64)
        redirect_uri = self.callback.at(redirect_path)
        s = self._oauth(scope="AIS:" + consent.id, redirect_uri=redirect_uri,
                        code_challenge_method="S256")
        url, state = s.create_authorization_url(
            meta["authorization_endpoint"], state=generate_token(20),
            code_verifier=verifier)
        return OAuthAttempt(s, meta, url, state, verifier, redirect_path)

    def oauth_finish(self, attempt, since=0):
        """Waits for the PSU's browser at the redirect URI and exchanges
        the code: the token answer (a dict)."""
        url, q = self.callback.wait_path(attempt.redirect_path, since)
        if "error" in q:
            raise BgError("authorisation refused: %r" % q)
        tok = attempt.session.fetch_token(
            attempt.metadata["token_endpoint"], authorization_response=url,
            state=attempt.state, code_verifier=attempt.verifier)
        psd2lib.register_tokens(dict(tok), self.client)
        return dict(tok)

    # -- consents ----------------------------------------------------------

    def consent_body(self, access, recurring=True, valid_until="9999-12-31",
                     frequency=4, combined=False):
        return {"access": access, "recurringIndicator": recurring,
                "validUntil": valid_until, "frequencyPerDay": frequency,
                "combinedServiceIndicator": combined}

    def redirect_headers(self, redirect=True, nok=True):
        if not redirect:
            return {}
        h = {"TPP-Redirect-URI": self.callback.at("/ok")}
        if nok:
            h["TPP-Nok-Redirect-URI"] = self.callback.at("/nok")
        return h

    def create_consent_raw(self, access, redirect=True, nok=True,
                           explicit=False, headers=None, **body_kw):
        h = self.redirect_headers(redirect, nok)
        if explicit:
            h["TPP-Explicit-Authorisation-Preferred"] = "true"
        h.update(headers or {})
        return self.call("POST", ROOT + "/consents",
                         self.consent_body(access, **body_kw), headers=h)

    def create_consent(self, access, **kw):
        return Consent(expect(self.create_consent_raw(access, **kw), 201))

    def get_consent(self, consent, **kw):
        return self.call("GET", consent.resource, **kw)

    def consent_status(self, consent, **kw):
        """GET _links.status, else the consent resource (its
        consentStatus): the status now."""
        if "status" in consent.links:
            r = expect(self.call("GET", consent.href("status"), **kw), 200)
        else:
            r = expect(self.get_consent(consent, **kw), 200)
        return r.json()["consentStatus"]

    def wait_consent_status(self, consent, want, timeout=20):
        deadline = time.time() + timeout
        while True:
            st = self.consent_status(consent)
            if st == want or time.time() > deadline:
                return st
            time.sleep(0.2)

    def start_authorisation(self, consent, redirect=True, nok=True,
                            headers=None):
        h = self.redirect_headers(redirect, nok)
        h.update(headers or {})
        return self.call("POST", consent.href("startAuthorisation"),
                         headers=h)

    def sca_status(self, href):
        return expect(self.call("GET", href), 200).json()["scaStatus"]

    def delete_consent(self, consent, **kw):
        return self.call("DELETE", consent.resource, **kw)

    # -- account information ----------------------------------------------

    def accounts_href(self, consent):
        """The account list: the consent's _links.account when the bank
        gives it, else the documented endpoint."""
        r = expect(self.get_consent(consent), 200)
        links = r.json().get("_links") or {}
        if "account" in links:
            return links["account"]["href"]
        return ROOT + "/accounts"

    def account_list(self, consent_id, token=None, with_balance=False,
                     href=ROOT + "/accounts", **kw):
        return self.call("GET", href, token=token, consent_id=consent_id,
                         params={"withBalance": "true"} if with_balance
                         else None, **kw)

    def account_details(self, consent_id, resource_id, token=None, **kw):
        return self.call("GET", "%s/accounts/%s" % (
            ROOT, urllib.parse.quote(resource_id, safe="")), token=token,
            consent_id=consent_id, **kw)

    def follow(self, links, name, consent_id, token=None, params=None,
               **kw):
        """GET _links[name] of an answer."""
        if name not in links:
            raise BgError("no _links.%s in %r" % (name, links))
        return self.call("GET", links[name]["href"], token=token,
                         consent_id=consent_id, params=params, **kw)

    def transactions(self, account, consent_id, date_from, token=None,
                     booking_status="booked", **kw):
        """Every page of an account's transactions (from the account's
        _links.transactions, then transactions._links.next): the list of
        answers' bodies."""
        r = expect(self.follow(account["_links"], "transactions",
                               consent_id, token, {
                                   "bookingStatus": booking_status,
                                   "dateFrom": date_from}, **kw), 200)
        pages = [r.json()]
        while True:
            links = pages[-1]["transactions"].get("_links") or {}
            if "next" not in links:
                return pages
            if len(pages) > 100:
                raise BgError("more than 100 pages")
            r = expect(self.follow(links, "next", consent_id, token, **kw),
                       200)
            pages.append(r.json())

    def funds_confirmation(self, token, iban, amount, currency="EUR",
                           consent_id=None, **kw):
        body = {"account": {"iban": iban},
                "instructedAmount": {"currency": currency,
                                     "amount": amount}}
        return self.call("POST", ROOT + "/funds-confirmations", body,
                         token=token, consent_id=consent_id, **kw)


class OAuthAttempt:
    def __init__(self, session, metadata, url, state, verifier,
                 redirect_path):
        self.session = session
        self.metadata = metadata
        self.url = url
        self.state = state
        self.verifier = verifier
        self.redirect_path = redirect_path


# --------------------------------------------------------------------------
# The PSU at the bank's pages (not the TPP's client): password, TOTP, then
# the consent page's accounts and decision.

def psu_in_chromium(driver, url, psu, ibans=None, decision="approve"):
    """The PSU in Chromium from url (scaRedirect, or the authorisation
    URL) to the decision; ibans: the accounts to tick (None: leave the
    page's boxes as they are)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    def present(ident):
        return WebDriverWait(driver, 30).until(
            EC.presence_of_element_located((By.ID, ident)))

    def submit(button_id):
        psd2lib.click_and_wait(driver, driver.find_element(By.ID, button_id))

    driver.get(url)
    present("login-form")
    for name, value in (("username", psu.username),
                        ("password", psu.password)):
        driver.find_element(By.NAME, name).send_keys(value)
    submit("login-submit")
    present("otp-form")
    driver.find_element(By.NAME, "otp").send_keys(psu.totp())
    submit("otp-submit")
    present("consent-form")
    page = driver.page_source
    if ibans is not None:
        want = {psd2lib.compact(i) for i in ibans}
        for box in driver.find_elements(
                By.CSS_SELECTOR, "#consent-form input[type=checkbox]"
                "[name=account]"):
            label = driver.find_element(
                By.CSS_SELECTOR, "label[for='%s']" % box.get_attribute("id"))
            if box.is_selected() != any(
                    w in psd2lib.compact(label.text) for w in want):
                label.click()
    driver.find_element(By.ID, decision).click()
    return page


def psu_in_plain_browser(url, psu, ibans=None, decision="approve"):
    """The same with plain HTTP (psd2lib.PsuBrowser): returns the
    browser; its last answer is the bank's redirect to the TPP."""
    b = psd2lib.PsuBrowser(psd2lib.MAIN_URL)
    r = _follow_bank(b, b.get(url))
    if b.page is None or b.page.form("login-form") is None:
        raise BgError("no login form at %s: %d %s" % (url, r.status_code,
                                                      r.text[:500]))
    _follow_bank(b, b.submit_login(psu.username, psu.password))
    _follow_bank(b, b.submit_otp(psu.totp()))
    ids = None if ibans is None else b.account_ids_for(ibans)
    r = _follow_bank(b, b.submit_consent(decision, ids))
    loc = r.headers.get("Location")
    if r.status_code in (302, 303) and loc:
        # The browser goes to the TPP (not through requests: the TPP's
        # page is not the bank's, whose answers the tests check).
        urllib.request.urlopen(urllib.parse.urljoin(r.url, loc),
                               timeout=30).read()
    return b


def _follow_bank(b, r):
    """Follows the bank's own redirects (a TPP's URL is not followed)."""
    for _ in range(5):
        loc = r.headers.get("Location")
        if r.status_code not in (301, 302, 303, 307) or not loc:
            return r
        url = urllib.parse.urljoin(r.url, loc)
        if not url.startswith(psd2lib.MAIN_URL + "/"):
            return r
        r = b.get(url)
    return r
