"""The PSU's side of the SCA of a Berlin Group consent (src/bg/README.md
"SCA of a consent"): the redirect approach's page
/auth/consents/{consentId}/authorisations/{authorisationId}, the
integrated OAuth approach (scope=AIS:{consentId} on /auth/oauth/authorize,
with Authlib), the consent page and the decision, then the PSU's consents
page. Real Chromium for the PSU (once without JavaScript, once in
German), a requests-driven browser (psd2lib.PsuBrowser) for the rest.

The received consents and their authorisations are made by the TPP with
POST /xs2a/v1/consents and its own token (client credentials):
bg_received() below.
"""

import datetime
import json
import urllib.parse
import uuid

import pytest
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import psd2lib
from psd2lib import MAIN_URL, PsuBrowser
from conftest import ACCOUNT_LIST, BG, Api, bearer_401, sql

TOKEN_URL = MAIN_URL + "/auth/oauth/token"
AUTHZ_URL = MAIN_URL + "/auth/oauth/authorize"


class TppSite(psd2lib.CallbackServer):
    """The TPP's redirect targets on a free loopback port."""

    def __init__(self):
        super().__init__()
        self.ok = self.url + "/ok"
        self.nok = self.url + "/nok"
        self.callback = self.url + "/callback"


@pytest.fixture(scope="module")
def tpp_site():
    s = TppSite()
    yield s
    s.close()


class Tpp:
    """A TPP's client (the attributes of psd2lib.Client), its own token
    and a signer with its certificate."""

    def __init__(self, signer, redirect_uris):
        self.client = psd2lib.make_client(redirect_uris=redirect_uris)
        for k in ("client_id", "secret", "name", "org_id", "redirect_uris",
                  "redirect_uri"):
            setattr(self, k, getattr(self.client, k))
        self.signer = signer.for_org(self.org_id)
        self.api = Api(self.signer)
        r = psd2lib.token_request({"grant_type": "client_credentials",
                                   "scope": "xs2a"}, self.client)
        assert r.status_code == 200, r.text
        self.token = r.json()["access_token"]

    def call(self, method, path, body=None, headers=None):
        return self.api.call(method, path, self.token, body=body,
                             headers=headers)


@pytest.fixture(scope="module")
def tpp(signer, tpp_site):
    return Tpp(signer, (tpp_site.ok, tpp_site.nok, tpp_site.callback))


@pytest.fixture
def psu():
    return psd2lib.make_psu(n_accounts=3)


def bg_received(tpp, access, ok_uri=None, nok_uri=None, recurring=True,
                days=30, frequency=4, authorisation=True):
    """A received consent of tpp, made with POST /xs2a/v1/consents: the
    redirect approach with ok_uri (TPP-Redirect-URI), else the OAuth
    approach; authorisation False: explicit start asked, none made yet.
    Returns (consentId, authorisationId or None)."""
    h = {"PSU-IP-Address": "192.0.2.10"}
    if ok_uri:
        h["TPP-Redirect-URI"] = ok_uri
    if nok_uri:
        h["TPP-Nok-Redirect-URI"] = nok_uri
    if not authorisation:
        h["TPP-Explicit-Authorisation-Preferred"] = "true"
    until = datetime.date.today() + datetime.timedelta(days=days)
    r = tpp.call("POST", BG + "/consents", {
        "access": access, "recurringIndicator": recurring,
        "validUntil": until.isoformat(), "frequencyPerDay": frequency,
        "combinedServiceIndicator": False}, h)
    assert r.status_code == 201, r.text
    cid = r.json()["consentId"]
    links = r.json()["_links"]
    if not authorisation:
        assert "startAuthorisation" in links
        return cid, None
    r = tpp.call("GET", "%s/consents/%s/authorisations" % (BG, cid))
    assert r.status_code == 200, r.text
    [aid] = r.json()["authorisationIds"]
    if ok_uri:
        assert links["scaRedirect"]["href"] == sca_link(cid, aid)
    else:
        assert "scaOAuth" in links
    return cid, aid


def sca_link(cid, aid, lang=None):
    return "%s/auth/consents/%s/authorisations/%s%s" % (
        MAIN_URL, cid, aid, "?lang=" + lang if lang else "")


def state_of(db, cid, aid=None):
    c = sql(db, "SELECT status, psu_id, sca_at IS NOT NULL, valid_until "
            "FROM consent WHERE id = %s", cid)[0]
    a = sql(db, "SELECT sca_status, psu_id FROM consent_authorisation "
            "WHERE id = %s", aid)[0] if aid else None
    return c, a


def covered(db, cid):
    """{iban: (balances, transactions)} of the consent's accounts."""
    return {iban: (b, t) for iban, b, t in sql(
        db, """SELECT a.iban, ca.balances, ca.transactions
        FROM consent_account ca JOIN account a ON a.id = ca.account_id
        WHERE ca.consent_id = %s""", cid)}


def psu_id(db, psu):
    return sql(db, "SELECT id FROM psu WHERE username = %s",
               psu.username)[0][0]


def login_to_consent(b, url, psu):
    """The PSU's login from the redirect link (or the authorize URL) to
    the consent page."""
    b.login_to_consent(url, psu)
    return b.page


def dedicated(accounts, balances=(), transactions=()):
    """The access of a dedicated consent: the lists that name IBANs."""
    lists = {"accounts": accounts, "balances": balances,
             "transactions": transactions}
    return {k: [{"iban": i} for i in v] for k, v in lists.items() if v}


# ---- The redirect approach, in Chromium ------------------------------------

def chromium_open(d, url):
    d.get(url)
    WebDriverWait(d, 30).until(
        lambda x: x.find_elements(By.ID, "login-form"))


def chromium_decide(d, button, back_to):
    """Approve or deny; the browser lands on the TPP's page."""
    d.find_element(By.ID, button).click()
    WebDriverWait(d, 30).until(lambda x: x.find_elements(By.ID, "tpp-done"))
    assert d.current_url == back_to


def chromium_login(d, psu):
    d.find_element(By.ID, "username").send_keys(psu.username)
    d.find_element(By.ID, "password").send_keys(psu.password)
    d.find_element(By.ID, "login-submit").click()
    WebDriverWait(d, 30).until(lambda x: x.find_elements(By.NAME, "otp"))
    d.find_element(By.NAME, "otp").send_keys(psu.totp())
    d.find_element(By.CSS_SELECTOR, "#otp-form button[type=submit]").click()
    WebDriverWait(d, 30).until(
        lambda x: x.find_elements(By.ID, "consent-form"))


def test_redirect_approve_chromium_without_javascript(db, tpp, tpp_site,
                                                      psu):
    (iban1, name1), (iban2, _), (iban3, _) = psu.accounts
    cid, aid = bg_received(tpp, dedicated([iban1, iban2], [iban2], [iban2]),
                           ok_uri=tpp_site.ok, nok_uri=tpp_site.nok,
                           days=20, frequency=2)
    d = psd2lib.chromium(javascript=False)
    try:
        chromium_open(d, sca_link(cid, aid))
        assert tpp.name in d.find_element(By.TAG_NAME, "body").text
        # Opening the page started the authorisation; nothing else moved.
        assert state_of(db, cid, aid) == (("received", None, False,
                                           state_of(db, cid)[0][3]),
                                          ("started", None))
        chromium_login(d, psu)
        assert d.find_element(By.ID, "tpp-name").text == tpp.name
        assert d.find_element(By.ID, "tpp-licence").text == tpp.org_id
        named = d.find_element(By.ID, "bg-named").text
        assert iban1 in named and iban2 in named and iban3 not in named
        assert name1 in named
        lines = {ln.split()[0]: ln for ln in named.splitlines()}
        assert "balances" not in lines[iban1]
        assert "balances" in lines[iban2] and "transactions" in lines[iban2]
        until = (datetime.date.today() + datetime.timedelta(days=20))
        assert d.find_element(By.ID, "bg-valid-until").text == \
            until.isoformat()
        assert d.find_element(By.ID, "bg-frequency").text == "2"
        assert "recurring" in d.find_element(By.ID, "bg-usage").text
        # No checkboxes: a dedicated consent names its accounts.
        assert not d.find_elements(By.NAME, "account")
        chromium_decide(d, "approve", tpp_site.ok)
    finally:
        psd2lib.quit_chromium(d)
    (status, pid, sca, _), (sca_status, apid) = state_of(db, cid, aid)
    assert (status, sca, sca_status) == ("valid", True, "finalised")
    assert pid == apid == psu_id(db, psu)
    assert covered(db, cid) == {iban1: (False, False),
                                iban2: (True, True)}
    # The TPP reads what the PSU gave, with its own token.
    r = tpp.call("GET", BG + "/accounts", headers={"Consent-ID": cid})
    assert r.status_code == 200, r.text[:500]
    got = {a["iban"]: a.get("_links", {}) for a in r.json()["accounts"]}
    assert set(got) == {iban1, iban2}
    assert "balances" not in got[iban1] and "balances" in got[iban2]
    assert sql(db, """SELECT count(*) FROM audit_log
        WHERE action = 'psu.consent_approved'
        AND detail ->> 'consent_id' = %s""", cid)[0][0] == 1


def test_redirect_deny_chromium_german_goes_to_nok(db, tpp, tpp_site, psu):
    iban = psu.accounts[0][0]
    cid, aid = bg_received(tpp, dedicated([iban]),
                           ok_uri=tpp_site.ok, nok_uri=tpp_site.nok,
                           recurring=False, frequency=1)
    d = psd2lib.chromium(lang="de-DE")
    try:
        chromium_open(d, sca_link(cid, aid, "de"))
        assert "Anmelden" in d.find_element(By.ID, "login-submit").text
        chromium_login(d, psu)
        body = d.find_element(By.TAG_NAME, "body").text
        assert "Gültig bis" in body and "Kontodaten" in body
        assert "einmalig" in d.find_element(By.ID, "bg-usage").text
        # One-off: valid until the end of today.
        assert d.find_element(By.ID, "bg-valid-until").text == \
            datetime.date.today().isoformat()
        chromium_decide(d, "deny", tpp_site.nok)
    finally:
        psd2lib.quit_chromium(d)
    (status, pid, _, _), (sca_status, apid) = state_of(db, cid, aid)
    assert (status, pid, sca_status) == ("rejected", None, "failed")
    assert apid == psu_id(db, psu)
    assert covered(db, cid) == {}


# ---- The redirect approach, requests-driven --------------------------------

def test_redirect_deny_without_nok_uri_goes_to_redirect_uri(db, tpp,
                                                            tpp_site, psu):
    cid, aid = bg_received(tpp, {"allPsd2": "allAccounts"},
                           ok_uri=tpp_site.ok)
    b = PsuBrowser()
    page = login_to_consent(b, sca_link(cid, aid), psu)
    assert page.by_id.get("bg-all") is not None
    r = b.submit_consent("deny")
    assert r.status_code == 303 and r.headers["Location"] == tpp_site.ok
    assert state_of(db, cid, aid)[0][0] == "rejected"
    # Posted again (back button): the same answer, nothing changes.
    r = b.submit_consent("deny")
    assert r.status_code == 303 and r.headers["Location"] == tpp_site.ok
    assert state_of(db, cid, aid)[1][0] == "failed"


def test_used_link_is_no_longer_valid(db, tpp, tpp_site, psu):
    cid, aid = bg_received(tpp, {"allPsd2": "allAccounts"},
                           ok_uri=tpp_site.ok, nok_uri=tpp_site.nok)
    b = PsuBrowser()
    login_to_consent(b, sca_link(cid, aid), psu)
    r = b.submit_consent("approve")
    assert r.status_code == 303 and r.headers["Location"] == tpp_site.ok
    # Every account, every right.
    assert covered(db, cid) == {i: (True, True) for i, _ in psu.accounts}
    # The TPP reads the outcome on the standard interface.
    r = tpp.call("GET", "%s/consents/%s" % (BG, cid))
    assert r.status_code == 200 and r.json()["consentStatus"] == "valid"
    assert sorted(a["iban"] for a in r.json()["access"]["accounts"]) == \
        sorted(i for i, _ in psu.accounts)
    r = tpp.call("GET", "%s/consents/%s/authorisations/%s" % (BG, cid, aid))
    assert r.status_code == 200 and r.json()["scaStatus"] == "finalised"
    # The same form posted again: the same way back, nothing twice.
    r = b.submit_consent("approve")
    assert r.status_code == 303 and r.headers["Location"] == tpp_site.ok
    assert sql(db, "SELECT count(*) FROM consent_account "
               "WHERE consent_id = %s", cid)[0][0] == 3
    before = state_of(db, cid, aid)
    for lang, word in (("en", "no longer valid"),
                       ("de", "nicht mehr gültig"),
                       ("nl", "niet meer geldig")):
        r = PsuBrowser().get(sca_link(cid, aid, lang))
        assert r.status_code == 410, r.text[:300]
        assert word in psd2lib.norm_text(r.text)
    assert state_of(db, cid, aid) == before


def test_unknown_and_foreign_links(db, tpp, tpp_site):
    cid, aid = bg_received(tpp, {"allPsd2": "allAccounts"},
                           ok_uri=tpp_site.ok)
    cid2, aid2 = bg_received(tpp, {"allPsd2": "allAccounts"})
    for link in (sca_link(cid, str(uuid.uuid4())),
                 sca_link(str(uuid.uuid4()), aid),
                 sca_link(cid2, aid),       # another consent's
                 sca_link(cid2, aid2),      # not REDIRECT
                 MAIN_URL + "/auth/consents/x/authorisations/y"):
        r = PsuBrowser().get(link)
        assert r.status_code == 404, (link, r.status_code)
        assert "not known" in psd2lib.norm_text(r.text)
    assert state_of(db, cid, aid)[1][0] == "received"
    assert state_of(db, cid2, aid2)[1][0] == "received"
    # A consent past its 60 minutes: no longer valid, nothing changes.
    sql(db, "UPDATE consent SET created_at = now() - interval '61 minutes'"
        " WHERE id = %s", cid)
    r = PsuBrowser().get(sca_link(cid, aid))
    assert r.status_code == 410
    assert state_of(db, cid, aid)[1][0] == "received"


def test_bank_offered_the_psu_picks(db, tpp, tpp_site, psu):
    (iban1, _), (iban2, _), (iban3, _) = psu.accounts
    cid, aid = bg_received(tpp, {"accounts": [], "balances": []},
                           ok_uri=tpp_site.ok)
    b = PsuBrowser()
    login_to_consent(b, sca_link(cid, aid), psu)
    assert psd2lib.norm_text(b.page.by_id["bg-pick"].text) == \
        "The accounts you choose below: account details, balances"
    offered = b.consent_accounts()
    assert len(offered) == 3
    assert b.page.form("consent-form").input("validity_days") is None
    # Nothing ticked: a clear page, nothing changes.
    r = b.submit_consent("approve", accounts=[])
    assert r.status_code == 400
    assert "at least one account" in psd2lib.norm_text(r.text)
    assert state_of(db, cid, aid)[0][0] == "received"
    # Someone else's account: nothing changes.
    other = psd2lib.make_psu(n_accounts=1)
    rid = sql(db, "SELECT resource_id FROM account WHERE iban = %s",
              other.accounts[0][0])[0][0]
    r = b.submit_consent("approve", accounts=[rid])
    assert r.status_code == 400
    assert state_of(db, cid, aid)[0][0] == "received"
    r = b.submit_consent("approve", accounts=b.account_ids_for([iban1,
                                                                iban3]))
    assert r.status_code == 303 and r.headers["Location"] == tpp_site.ok
    # The rights of the lists sent: accounts and balances.
    assert covered(db, cid) == {iban1: (True, False), iban3: (True, False)}
    assert state_of(db, cid, aid)[1][0] == "finalised"


@pytest.mark.parametrize("foreign", ["other_psu", "currency"])
def test_dedicated_not_the_psus_fails(db, tpp, tpp_site, psu, foreign):
    iban = psu.accounts[0][0]
    if foreign == "other_psu":
        bad = {"iban": psd2lib.make_psu(n_accounts=1).accounts[0][0]}
    else:
        bad = {"iban": psu.accounts[1][0], "currency": "USD"}
    access = {"accounts": [{"iban": iban}, bad]}
    cid, aid = bg_received(tpp, access, ok_uri=tpp_site.ok,
                           nok_uri=tpp_site.nok)
    b = PsuBrowser()
    page = login_to_consent(b, sca_link(cid, aid), psu)
    named = psd2lib.norm_text(page.by_id["bg-named"].text)
    assert "not one of your accounts" in named
    r = b.submit_consent("approve")
    assert r.status_code == 403
    assert "not yours" in psd2lib.norm_text(r.text)
    (status, pid, _, _), (sca_status, _) = state_of(db, cid, aid)
    assert (status, pid, sca_status) == ("rejected", None, "failed")
    assert covered(db, cid) == {}


def test_kinds_and_the_former_recurring_consent(db, tpp, tpp_site, psu):
    def give(access, **kw):
        cid, aid = bg_received(tpp, access, ok_uri=tpp_site.ok, **kw)
        b = PsuBrowser()
        login_to_consent(b, sca_link(cid, aid), psu)
        r = b.submit_consent("approve")
        assert r.status_code == 303, r.text[:500]
        return cid

    first = give({"availableAccounts": "allAccounts"})
    assert set(covered(db, first).values()) == {(False, False)}
    once = give({"availableAccountsWithBalance": "allAccounts"},
                recurring=False, frequency=1)
    assert set(covered(db, once).values()) == {(True, False)}
    assert state_of(db, once)[0][3] == datetime.date.today()
    # A one-off consent leaves the recurring one alone.
    assert state_of(db, first)[0][0] == "valid"
    second = give({"allPsd2": "allAccounts"})
    assert state_of(db, second)[0][0] == "valid"
    assert state_of(db, first)[0][0] == "expired"
    assert state_of(db, once)[0][0] == "valid"


# ---- The integrated OAuth approach (Authlib) -------------------------------

def oauth_session(tpp, cid):
    return OAuth2Session(tpp.client_id, tpp.secret, scope="AIS:" + cid,
                         redirect_uri=tpp.redirect_uris[2],
                         code_challenge_method="S256",
                         token_endpoint_auth_method="client_secret_basic")


@pytest.mark.parametrize("tpp_made_one", [True, False])
def test_oauth_approach(db, api, tpp, psu, tpp_made_one):
    (iban1, _), (iban2, _), _ = psu.accounts
    cid, aid = bg_received(tpp, dedicated([iban1, iban2], [iban1]),
                           authorisation=tpp_made_one)
    sess = oauth_session(tpp, cid)
    verifier = generate_token(48)
    url, state = sess.create_authorization_url(AUTHZ_URL,
                                               code_verifier=verifier)
    b = PsuBrowser()
    b.authorize(url)
    assert b.last.status_code == 200 and b.page.form("login-form")
    if tpp_made_one:
        assert state_of(db, cid, aid)[1][0] == "started"
    login_to_consent(b, url, psu)
    assert iban1 in psd2lib.norm_text(b.page.by_id["bg-named"].text)
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    loc = r.headers["Location"]
    assert loc.startswith(tpp.redirect_uris[2] + "?")
    # Posted again before the exchange: the same code, nothing twice.
    assert b.submit_consent("approve").headers["Location"] == loc
    tok = sess.fetch_token(TOKEN_URL, authorization_response=loc,
                           code_verifier=verifier)
    assert tok["scope"] == "AIS:" + cid
    auths = sql(db, """SELECT id, approach, sca_status, psu_id
        FROM consent_authorisation WHERE consent_id = %s""", cid)
    assert len(auths) == 1
    assert auths[0][1:] == ("OAUTH", "finalised", psu_id(db, psu))
    if tpp_made_one:
        assert str(auths[0][0]) == aid
    assert state_of(db, cid)[0][0] == "valid"
    assert covered(db, cid) == {iban1: (True, False), iban2: (False, False)}
    # The tokens keep what they grant: the contract's paths take them.
    assert sql(db, "SELECT DISTINCT scopes FROM token WHERE consent_id = %s",
               cid) == [(["ACCOUNT_INFORMATION"],)]
    # Signed with the certificate of this client's TPP.
    psd2lib.register_tokens(tok, tpp)
    r = psd2lib.api_get(api.signer, ACCOUNT_LIST, tok["access_token"])
    assert r.status_code == 200, r.text[:500]
    listed = json.dumps(r.json())
    assert iban1 in listed and iban2 in listed
    assert psu.accounts[2][0] not in listed
    # A refresh answers the same scope.
    r = psd2lib.token_request({"grant_type": "refresh_token",
                               "refresh_token": tok["refresh_token"]}, tpp)
    assert r.status_code == 200 and r.json()["scope"] == "AIS:" + cid
    # The PSU's consents page shows it, and the PSU can revoke it there.
    c = consents_login(psu)
    li = c.page.by_id.get("consent-%s" % cid)
    assert li is not None, c.last.text[:2000]
    text = psd2lib.norm_text(li.text)
    assert tpp.name in text and iban1 in text and "active" in text
    f = c.page.form("revoke-%s" % cid)
    r = c.post("/auth/consents/revoke", f.hidden())
    assert r.status_code == 303
    assert state_of(db, cid)[0][0] == "revokedByPsu"
    bearer_401(psd2lib.api_get(api.signer, ACCOUNT_LIST,
                               tok["access_token"]),
               "Invalid access token: " + tok["access_token"])


def consents_login(psu):
    b = PsuBrowser()
    b.get("/auth/consents")
    b.submit_login(psu.username, psu.password)
    r = b.submit_otp(psu.totp())
    assert r.status_code == 303, r.text[:500]
    b.get("/auth/consents")
    return b


def test_oauth_deny(db, tpp, psu):
    cid, aid = bg_received(tpp, {"allPsd2": "allAccounts"})
    sess = oauth_session(tpp, cid)
    url, state = sess.create_authorization_url(
        AUTHZ_URL, code_verifier=generate_token(48))
    b = PsuBrowser()
    login_to_consent(b, url, psu)
    r = b.submit_consent("deny")
    assert r.status_code == 303
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(
        r.headers["Location"]).query)
    assert q["error"] == ["access_denied"] and q["state"] == [state]
    assert state_of(db, cid, aid)[0][0] == "rejected"
    assert state_of(db, cid, aid)[1][0] == "failed"


def test_oauth_dedicated_not_the_psus_goes_back(db, tpp, psu):
    """The integrated OAuth approach answers a consent that names someone
    else's account as every failure past a valid redirect_uri: the error
    redirect (RFC 6749 4.1.2.1), not a page of the bank."""
    other = psd2lib.make_psu(n_accounts=1).accounts[0][0]
    cid, aid = bg_received(tpp, dedicated([psu.accounts[0][0], other], []))
    sess = oauth_session(tpp, cid)
    url, state = sess.create_authorization_url(
        AUTHZ_URL, code_verifier=generate_token(48))
    b = PsuBrowser()
    page = login_to_consent(b, url, psu)
    assert "not one of your accounts" in psd2lib.norm_text(
        page.by_id["bg-named"].text)
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    loc = r.headers["Location"]
    assert loc.startswith(tpp.redirect_uris[2] + "?")
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    assert q["error"] == ["access_denied"] and q["state"] == [state]
    assert "not the PSU's" in q["error_description"][0]
    assert "code" not in q
    assert state_of(db, cid, aid)[0][0] == "rejected"
    assert state_of(db, cid, aid)[1][0] == "failed"
    assert covered(db, cid) == {}
    # The same post again: the same way back, nothing stored twice.
    r = b.submit_consent("approve")
    assert r.status_code == 303
    again = urllib.parse.parse_qs(urllib.parse.urlsplit(
        r.headers["Location"]).query)
    assert again["error"] == ["access_denied"]


def test_oauth_invalid_scope(db, signer, tpp, psu):
    other = Tpp(signer, ("https://tpp.example/cb",))
    mine, _ = bg_received(tpp, {"allPsd2": "allAccounts"})
    theirs, _ = bg_received(other, {"allPsd2": "allAccounts"})
    gone, _ = bg_received(tpp, {"allPsd2": "allAccounts"})
    r = tpp.call("DELETE", "%s/consents/%s" % (BG, gone))
    assert r.status_code == 204, r.text
    cases = {
        "AIS:" + theirs: "names no consent of this client",
        "AIS:" + gone: "terminatedByTpp, not received",
        "AIS:" + str(uuid.uuid4()): "names no consent of this client",
        "AIS:" + mine + " ACCOUNT_INFORMATION": "must be the only scope",
        "ACCOUNT_INFORMATION AIS:" + mine: "must be the only scope",
        "AIS:not-a-uuid": "must name a consentId",
    }
    for scope, why in cases.items():
        url = psd2lib.authorize_url(MAIN_URL, tpp.client_id,
                                    tpp.redirect_uris[2], scope, "st-1")
        r = PsuBrowser().get(url)
        assert r.status_code == 302, (scope, r.status_code, r.text[:300])
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(
            r.headers["Location"]).query)
        assert q["error"] == ["invalid_scope"], scope
        assert why in q["error_description"][0], (scope, q)
        assert q["state"] == ["st-1"]
    assert state_of(db, mine)[0][0] == "received"
    assert state_of(db, theirs)[0][0] == "received"
