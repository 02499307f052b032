"""The consent page and POST /auth/oauth/consent."""

import urllib.parse

import pytest

import psd2lib
from psd2lib import (MAIN_URL, PsuBrowser, authorize_url, compact,
                     location_params, norm_text, sandbox_client)
from test_authorize import ODD_STATE, assert_security_headers, issuer

SC = sandbox_client()

BUTTONS = {"en": ("Approve", "Deny"), "de": ("Zustimmen", "Ablehnen"),
           "nl": ("Toestaan", "Weigeren")}


def to_consent(psu, client=SC, scope="ACCOUNT_INFORMATION", state="st-co",
               **extra):
    b = PsuBrowser()
    url = authorize_url(MAIN_URL, client.client_id, client.redirect_uri,
                        scope, state, **extra)
    b.login_to_consent(url, psu)
    return b


def test_consent_page_structure(psu_factory, client_factory):
    psu = psu_factory()
    c = client_factory()
    b = to_consent(psu, c, "ACCOUNT_INFORMATION FUND_AVAILABILITY")
    p = b.page
    assert_security_headers(b.last)
    f = p.form("consent-form")
    assert f.method == "post" and f.action == "/auth/oauth/consent"
    h = f.hidden()
    assert h.get("authreq") and h.get("csrf")
    assert c.name in p.text
    assert c.org_id in p.text
    # One checkbox per account, labelled with name and IBAN.
    boxes = b.consent_accounts()
    assert len(boxes) == len(psu.accounts) == 2
    for iban, aname in psu.accounts:
        hits = [lab for rid, lab in boxes
                if compact(iban) in compact(lab) and aname in lab]
        assert len(hits) == 1, (iban, aname, boxes)
    ids = [rid for rid, _ in boxes]
    assert all(ids) and len(set(ids)) == 2
    for i in f.inputs_named("account"):
        assert i.get("type") == "checkbox" and i.get("id")
    vd = f.input("validity_days")
    assert vd is not None and vd.get("type") == "number"
    assert vd.get("value") == "90"
    assert vd.get("min") == "1" and vd.get("max") == "180"
    assert vd.get("id") and p.label_for(vd.get("id")) is not None
    ap = f.button(ident="approve")
    de = f.button(ident="deny")
    assert ap is not None and ap.get("name") == "decision" and \
        ap.get("value") == "approve"
    assert de is not None and de.get("name") == "decision" and \
        de.get("value") == "deny"
    assert norm_text(ap.text) == "Approve"
    assert norm_text(de.text) == "Deny"


def test_consent_page_names_each_scope(psu_factory):
    """Each requested scope appears in plain words: pages for different
    scopes differ in their scope text."""
    texts = {}
    for scope in ("ACCOUNT_INFORMATION", "FUND_AVAILABILITY",
                  "PAYMENT_INITIATION"):
        b = to_consent(psu_factory(), SC, scope)
        t = b.page.text
        for rid, lab in b.consent_accounts():
            t = t.replace(lab, "")
        texts[scope] = t
    assert len(set(texts.values())) == 3
    b = to_consent(psu_factory(), SC, "ACCOUNT_INFORMATION PAYMENT_INITIATION")
    both = b.page.text
    for rid, lab in b.consent_accounts():
        both = both.replace(lab, "")
    assert len(both) > len(texts["ACCOUNT_INFORMATION"])


def test_payment_only_scope_asks_for_accounts(psu_factory):
    """The PSU picks the accounts a TPP may pay from; without
    one the consent is refused, nothing stored."""
    psu = psu_factory()
    b = to_consent(psu, SC, "PAYMENT_INITIATION")
    ids = [rid for rid, _ in b.consent_accounts()]
    assert len(ids) == len(psu.accounts)
    r = b.submit_consent("approve", accounts=[])
    assert r.status_code == 400
    assert "code" not in location_params(r)[1]
    r = b.submit_consent("approve", accounts=ids[:1])
    assert r.status_code == 303
    assert "code" in location_params(r)[1]


@pytest.mark.parametrize("lang", ["en", "de", "nl"])
def test_button_labels_by_language(psu_factory, lang):
    b = to_consent(psu_factory(), SC, lang=lang)
    f = b.page.form("consent-form")
    assert norm_text(f.button(ident="approve").text) == BUTTONS[lang][0]
    assert norm_text(f.button(ident="deny").text) == BUTTONS[lang][1]
    assert (b.page.lang or "").lower().startswith(lang)


def test_accept_language_carries_to_consent(psu_factory):
    psu = psu_factory()
    b = PsuBrowser(headers={"Accept-Language": "nl-NL,nl;q=0.9"})
    b.login_to_consent(authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                                     "ACCOUNT_INFORMATION", "s"), psu)
    f = b.page.form("consent-form")
    assert norm_text(f.button(ident="approve").text) == "Toestaan"


def test_deny_redirects_access_denied(psu_factory):
    b = to_consent(psu_factory(), SC, state=ODD_STATE)
    r = b.submit_consent("deny", accounts=[])
    assert r.status_code == 303
    parts, q = location_params(r)
    assert parts.scheme + "://" + parts.netloc + parts.path == SC.redirect_uri
    assert q["error"] == ["access_denied"]
    assert q["state"] == [ODD_STATE]
    assert q["iss"] == [issuer()]
    assert "code" not in q


def test_approve_redirects_with_code_and_odd_state(psu_factory):
    b = to_consent(psu_factory(), SC, state=ODD_STATE)
    r = b.submit_consent("approve")
    assert r.status_code == 303
    loc = r.headers["Location"]
    assert loc.isascii() and " " not in loc, loc
    parts, q = location_params(r)
    assert parts.scheme + "://" + parts.netloc + parts.path == SC.redirect_uri
    assert q["state"] == [ODD_STATE]
    assert len(q["code"]) == 1 and len(q["code"][0]) >= 20
    assert "error" not in q
    # RFC 9207: the issuer of the metadata, once, after the state.
    assert q["iss"] == [issuer()]
    assert loc.endswith("&iss=" + urllib.parse.quote(issuer(), safe=""))


def test_redirect_keeps_registered_query(psu_factory, client_factory):
    c = client_factory(redirect_uris=["https://tpp.example/cb?tenant=7&x=a"])
    b = to_consent(psu_factory(), c, state="s&=")
    r = b.submit_consent("approve")
    assert r.status_code == 303
    parts, q = location_params(r)
    assert q["tenant"] == ["7"] and q["x"] == ["a"]
    assert q["state"] == ["s&="] and q["code"]


def test_approve_without_account_is_400(psu_factory):
    b = to_consent(psu_factory(), SC, "ACCOUNT_INFORMATION")
    r = b.submit_consent("approve", accounts=[])
    assert r.status_code == 400
    assert "Location" not in r.headers
    assert_security_headers(r)


def test_approve_without_account_fund_availability_is_400(psu_factory):
    b = to_consent(psu_factory(), SC, "FUND_AVAILABILITY")
    r = b.submit_consent("approve", accounts=[])
    assert r.status_code == 400
    assert "Location" not in r.headers


def test_approve_with_foreign_account_refused(psu_factory):
    other = psu_factory()
    b_other = to_consent(other, SC)
    foreign = [rid for rid, _ in b_other.consent_accounts()]
    b = to_consent(psu_factory(), SC)
    r = b.submit_consent("approve", accounts=foreign[:1])
    assert r.status_code == 400
    assert "Location" not in r.headers


@pytest.mark.parametrize("days", ["0", "181", "-5", "abc", "99999999999"])
def test_validity_days_out_of_range_refused(psu_factory, days):
    b = to_consent(psu_factory(), SC)
    r = b.submit_consent("approve", validity_days=days)
    assert r.status_code == 400, (days, r.status_code,
                                  r.headers.get("Location"))


@pytest.mark.parametrize("days", ["1", "180"])
def test_validity_days_bounds_accepted(psu_factory, days, dbinfo):
    b = to_consent(psu_factory(), SC)
    r = b.submit_consent("approve", validity_days=days)
    assert r.status_code == 303 and "code" in location_params(r)[1]


def test_unknown_decision_refused(psu_factory):
    b = to_consent(psu_factory(), SC)
    r = b.submit_consent("maybe")
    assert r.status_code == 400
    assert "Location" not in r.headers


def test_consent_subset_of_accounts(psu_factory, client_factory, signer,
                                    dbinfo):
    psu = psu_factory()
    c = client_factory()
    chosen = psu.accounts[1][0]
    code, state, loc, b = psd2lib.run_code_flow(
        c, psu, "ACCOUNT_INFORMATION", accounts=[chosen])
    r = psd2lib.exchange_code(c, code)
    assert r.status_code == 200, r.text
    tok = r.json()
    assert tok["scope"].split() == ["ACCOUNT_INFORMATION"]
    # Both views: the consent's rows and what the TPP is shown.
    assert psd2lib.consented_ibans(dbinfo, psu.username) == \
        {compact(chosen)}
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, tok["access_token"])
    assert r.status_code == 200, r.text
    ibans = {compact(a["iban"]) for a in r.json()["accounts"]}
    assert ibans == {compact(chosen)}



def test_idle_session_expires(psu_factory, dbinfo):
    """The session set after the TOTP step expires after 5 idle minutes
    (simulated by ageing the session row; ids are stored as SHA-256)."""
    import hashlib
    b = to_consent(psu_factory(), SC)
    cookies = psd2lib.set_cookie_headers(b.last)
    values = [c.split(";")[0].split("=", 1)[1] for c in cookies if "=" in c]
    c = psd2lib.db_connect(dbinfo)
    try:
        cur = c.cursor()
        n = 0
        for v in values:
            cur.execute("UPDATE web_session SET last_seen_at = now() - "
                        "interval '301 seconds', created_at = now() - "
                        "interval '20 minutes', expires_at = now() - "
                        "interval '1 second' WHERE id_hash = %s",
                        (hashlib.sha256(v.encode()).digest(),))
            n += cur.rowcount
    finally:
        c.close()
    assert n == 1, "%d session rows found by SHA-256 of the cookies %r" % (
        n, cookies)
    r = b.submit_consent("approve")
    assert not (r.status_code == 303 and
                "code" in location_params(r)[1]), \
        "an idle-expired session still approved a consent"
    assert r.status_code in (400, 401, 403), r.status_code
