"""Consent revocation: by the TPP (RFC 7009, DELETE consents/current), by
the PSU on /auth/consents (CSRF-protected), and by expiry. Afterwards the
consent's access tokens are "Invalid access token" and its refresh tokens
invalid_grant."""

import pytest

import psd2lib
from conftest import (ACCOUNT_LIST, CONSENT, bearer_401, consent_of,
                      get_tokens, sql, tx_path)
from psd2lib import PsuBrowser, revoke_request, token_request

SC = psd2lib.sandbox_client()


@pytest.fixture
def granted(service_setup, server, db):
    psu = psd2lib.make_psu(n_accounts=2)
    tok = get_tokens(SC, psu, "ACCOUNT_INFORMATION FUND_AVAILABILITY")
    return psu, tok, consent_of(db, tok["access_token"])


def refresh(tok):
    return token_request({"grant_type": "refresh_token",
                          "refresh_token": tok["refresh_token"]}, SC)


def assert_dead(api, tok):
    a = tok["access_token"]
    bearer_401(api.get(ACCOUNT_LIST, a), "Invalid access token: " + a)
    bearer_401(api.get(CONSENT, a), "Invalid access token: " + a)
    r = refresh(tok)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_grant"


def consent_status(db, consent):
    return sql(db, "SELECT status FROM consent WHERE id = %s", consent)[0][0]


def test_rfc7009_revoke_access_token(api, granted):
    _, tok, _ = granted
    assert api.get(ACCOUNT_LIST, tok["access_token"]).status_code == 200
    assert revoke_request({"token": tok["access_token"]}, SC).status_code \
        == 200
    bearer_401(api.get(ACCOUNT_LIST, tok["access_token"]),
               "Invalid access token: " + tok["access_token"])


def test_rfc7009_revoke_refresh_token_takes_family(api, granted):
    _, tok, _ = granted
    assert revoke_request({"token": tok["refresh_token"]}, SC).status_code \
        == 200
    assert_dead(api, tok)


def test_delete_consents_current(api, db, granted):
    _, tok, consent = granted
    r = api.call("DELETE", CONSENT, tok["access_token"])
    assert r.status_code == 204, r.text
    assert r.content == b""
    assert consent_status(db, consent) == "terminatedByTpp"
    assert_dead(api, tok)
    # Ending it again: the token is already invalid.
    bearer_401(api.call("DELETE", CONSENT, tok["access_token"]),
               "Invalid access token: " + tok["access_token"])


def test_refreshed_token_dies_with_consent(api, db, granted):
    _, tok, consent = granted
    r = refresh(tok)
    assert r.status_code == 200
    tok2 = r.json()
    assert api.get(ACCOUNT_LIST, tok2["access_token"]).status_code == 200
    assert api.call("DELETE", CONSENT, tok2["access_token"]).status_code \
        == 204
    assert_dead(api, tok2)


def test_expired_consent(api, db, granted):
    _, tok, consent = granted
    sql(db, "UPDATE consent SET valid_until = current_date - 1 "
        "WHERE id = %s", consent)
    assert_dead(api, tok)


def consents_login(psu):
    """Logs the PSU in through /auth/consents; returns the browser on the
    consents page."""
    b = PsuBrowser()
    r = b.get("/auth/consents")
    assert r.status_code == 200 and b.page.form("login-form") is not None
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 200, r.text[:500]
    r = b.submit_otp(psu.totp())
    assert r.status_code == 303, r.text[:500]
    assert r.headers["Location"] == "/auth/consents"
    r = b.get("/auth/consents")
    assert r.status_code == 200
    return b


def test_psu_page_lists_and_revokes(api, db, granted):
    psu, tok, consent = granted
    api.get(ACCOUNT_LIST, tok["access_token"])
    b = consents_login(psu)
    li = b.page.by_id.get("consent-%s" % consent)
    assert li is not None, b.last.text[:2000]
    text = psd2lib.norm_text(li.text)
    assert psd2lib.SANDBOX_TPP_NAME in text
    assert psd2lib.SANDBOX_ORG_ID in text
    for iban, _ in psu.accounts:
        assert iban in text
    until = sql(db, "SELECT valid_until FROM consent WHERE id = %s",
                consent)[0][0]
    assert until.isoformat() in text
    assert "UTC" in text      # last used
    assert "active" in text
    f = b.page.form("revoke-%s" % consent)
    assert f is not None and f.action == "/auth/consents/revoke"
    r = b.post("/auth/consents/revoke", f.hidden())
    assert r.status_code == 303 and r.headers["Location"] == "/auth/consents"
    assert consent_status(db, consent) == "revokedByPsu"
    assert_dead(api, tok)
    b.get("/auth/consents")
    li = b.page.by_id.get("consent-%s" % consent)
    assert "revoked by you" in psd2lib.norm_text(li.text)
    assert b.page.form("revoke-%s" % consent) is None


def test_psu_page_requires_login(service_setup, server):
    b = PsuBrowser()
    r = b.get("/auth/consents")
    assert r.status_code == 200
    assert b.page.form("login-form") is not None
    assert b.page.form("revoke-form") is None
    b.s.cookies.set("psd2_session", "00000000-0000-4000-8000-000000000000",
                    path="/auth")
    b.get("/auth/consents")
    assert b.page.form("login-form") is not None


def test_revoke_needs_csrf(api, db, granted):
    psu, tok, consent = granted
    b = consents_login(psu)
    f = b.page.form("revoke-%s" % consent)
    data = f.hidden()
    for bad in ({"csrf": ""}, {"csrf": "x" * 40},
                {"csrf": data["csrf"][:-2] + "AA"}):
        d = dict(data)
        d.update(bad)
        r = b.post("/auth/consents/revoke", d)
        assert r.status_code == 403, r.status_code
    d = dict(data)
    del d["csrf"]
    assert b.post("/auth/consents/revoke", d).status_code == 403
    # Another PSU's valid session and token cannot revoke this consent.
    other = psd2lib.make_psu(1)
    get_tokens(SC, other)
    b2 = consents_login(other)
    csrf2 = b2.page.forms[0].hidden()["csrf"] if b2.page.forms else None
    if csrf2:
        r = b2.post("/auth/consents/revoke", {"csrf": csrf2,
                                              "consent_id": str(consent)})
        assert r.status_code == 404
    # The CSRF token is bound to the session: useless in another one.
    r = b2.post("/auth/consents/revoke", data)
    assert r.status_code == 403
    assert consent_status(db, consent) == "valid"
    assert api.get(ACCOUNT_LIST, tok["access_token"]).status_code == 200


def test_revoke_without_session_shows_login(granted):
    _, _, consent = granted
    b = PsuBrowser()
    r = b.post("/auth/consents/revoke", {"csrf": "x",
                                         "consent_id": str(consent)})
    assert r.status_code == 200 and b.page.form("login-form") is not None


@pytest.mark.parametrize("lang,title", [("de", "Ihre Einwilligungen"),
                                        ("nl", "Uw toestemmingen")])
def test_psu_page_languages(granted, lang, title):
    psu, _, _ = granted
    b = consents_login(psu)
    b.get("/auth/consents?lang=" + lang)
    assert b.page.lang == lang
    assert title in b.page.text
