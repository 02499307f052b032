"""GET /auth/oauth/authorize: error page, error redirects, the login page."""

import urllib.parse

import pytest
import requests

import psd2lib
from psd2lib import (MAIN_URL, Page, PsuBrowser, authorize_url,
                     location_params, sandbox_client, set_cookie_headers)

SC = sandbox_client()
RU = SC.redirect_uri


def get(url, **kw):
    kw.setdefault("allow_redirects", False)
    kw.setdefault("timeout", 15)
    return requests.get(url, **kw)


def assert_security_headers(r):
    csp = r.headers.get("Content-Security-Policy", "")
    directives = {d.strip() for d in csp.split(";") if d.strip()}
    assert "default-src 'self'" in directives, csp
    assert "frame-ancestors 'none'" in directives, csp
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    assert r.headers.get("Referrer-Policy") == "no-referrer"
    assert "no-store" in r.headers.get("Cache-Control", "")


def assert_error_page(r):
    assert r.status_code == 400, (r.status_code, r.headers, r.text[:500])
    assert "Location" not in r.headers
    assert "text/html" in r.headers.get("Content-Type", "")
    assert_security_headers(r)
    p = Page(r.text)
    assert p.form("login-form") is None


# -- 400 error page, never a redirect ------------------------------------

@pytest.mark.parametrize("client_id", ["no-such-client", "", "SANDBOX-TPP",
                                       "sandbox-tpp "])
def test_unknown_client_is_error_page(client_id):
    r = get(authorize_url(MAIN_URL, client_id, RU, "ACCOUNT_INFORMATION",
                          "st"))
    assert_error_page(r)


def test_missing_client_id_is_error_page():
    q = urllib.parse.urlencode({"response_type": "code", "redirect_uri": RU,
                                "scope": "ACCOUNT_INFORMATION", "state": "s"})
    assert_error_page(get(MAIN_URL + "/auth/oauth/authorize?" + q))


@pytest.mark.parametrize("redirect_uri", [
    "https://evil.example/callback",
    "https://tpp.example/callback/",
    "https://tpp.example/callback?x=1",
    "https://tpp.example/callbackx",
    "https://TPP.example/callback",
    "http://tpp.example/callback",
    "https://tpp.example/callback#frag",
    "https://tpp.example/",
    "",
])
def test_unregistered_redirect_uri_is_error_page(redirect_uri):
    r = get(authorize_url(MAIN_URL, SC.client_id, redirect_uri,
                          "ACCOUNT_INFORMATION", "st"))
    assert_error_page(r)


def test_missing_redirect_uri_is_error_page():
    q = urllib.parse.urlencode({"response_type": "code",
                                "client_id": SC.client_id,
                                "scope": "ACCOUNT_INFORMATION", "state": "s"})
    assert_error_page(get(MAIN_URL + "/auth/oauth/authorize?" + q))


def test_bad_redirect_uri_wins_over_bad_response_type():
    r = get(authorize_url(MAIN_URL, SC.client_id, "https://evil.example/cb",
                          "ACCOUNT_INFORMATION", "st", response_type="token"))
    assert_error_page(r)


# -- error redirects ------------------------------------------------------

def issuer():
    r = get(MAIN_URL + "/.well-known/oauth-authorization-server")
    assert r.status_code == 200, r.text
    return r.json()["issuer"]


def assert_error_redirect(r, error, state, redirect_uri=RU):
    assert r.status_code == 302, (r.status_code, r.text[:500])
    parts, q = location_params(r)
    base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path,
                                    "", ""))
    assert base == redirect_uri.split("?")[0]
    assert q.get("error") == [error], r.headers["Location"]
    assert q.get("state") == [state], r.headers["Location"]
    # RFC 9207: an error response names the issuer too.
    assert q.get("iss") == [issuer()], r.headers["Location"]
    assert q.get("error_description") and q["error_description"][0].strip()
    assert "code" not in q
    return q


ODD_STATE = "a b&c=d/e?f#g%h+i\u00fc\u20ac\u732b'\"<x>"


@pytest.mark.parametrize("response_type", ["token", "id_token", "CODE",
                                           "code token"])
def test_unsupported_response_type(response_type):
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st-rt", response_type=response_type))
    assert_error_redirect(r, "unsupported_response_type", "st-rt")


def test_empty_response_type_is_an_error_redirect():
    """An empty response_type may count as missing (invalid_request) or as
    unsupported; either way an error redirect with the state."""
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st-rt0", response_type=""))
    assert r.status_code == 302
    err = location_params(r)[1].get("error", [""])[0]
    assert err in ("invalid_request", "unsupported_response_type")
    assert_error_redirect(r, err, "st-rt0")


@pytest.mark.parametrize("scope", ["", "ACCOUNTS", "account_information",
                                   "ACCOUNT_INFORMATION BOGUS",
                                   "openid", " "])
def test_invalid_scope(scope):
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, scope, "st-sc"))
    assert_error_redirect(r, "invalid_scope", "st-sc")


def test_missing_scope_is_invalid_scope():
    q = urllib.parse.urlencode({"response_type": "code",
                                "client_id": SC.client_id,
                                "redirect_uri": RU, "state": "st-ms"})
    r = get(MAIN_URL + "/auth/oauth/authorize?" + q)
    assert_error_redirect(r, "invalid_scope", "st-ms")


def test_error_redirect_carries_odd_state_exactly():
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "NOPE", ODD_STATE))
    assert_error_redirect(r, "invalid_scope", ODD_STATE)
    loc = r.headers["Location"]
    assert loc.isascii() and " " not in loc, loc


def test_state_up_to_1024_bytes_accepted_longer_refused():
    """The request travels sealed through the login form: its state is
    bounded (1024 bytes), and a longer one is an error redirect that still
    carries the state."""
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "s" * 1024))
    assert r.status_code == 200, r.text[:300]
    assert Page(r.text).form("login-form") is not None
    long_state = "s" * 1025
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          long_state))
    assert_error_redirect(r, "invalid_request", long_state)


def test_error_redirect_to_second_registered_uri():
    other = SC.redirect_uris[1]
    r = get(authorize_url(MAIN_URL, SC.client_id, other, "NOPE", "s2"))
    assert_error_redirect(r, "invalid_scope", "s2", redirect_uri=other)


def test_error_redirect_keeps_query_of_registered_uri(client_factory):
    c = client_factory(redirect_uris=["https://tpp.example/cb?tenant=7"])
    r = get(authorize_url(MAIN_URL, c.client_id, c.redirect_uri, "NOPE",
                          "s3"))
    assert r.status_code == 302
    parts, q = location_params(r)
    assert q.get("tenant") == ["7"]
    assert q.get("error") == ["invalid_scope"]


@pytest.mark.parametrize("method", ["plain", "s256", "S512", ""])
def test_pkce_method_other_than_s256_refused(method):
    ch = psd2lib.s256("v" * 50)
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st-pk", code_challenge=ch,
                          code_challenge_method=method))
    assert_error_redirect(r, "invalid_request", "st-pk")


def test_pkce_plain_with_verifier_as_challenge_refused():
    v = "x" * 64
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st-plain", code_challenge=v,
                          code_challenge_method="plain"))
    assert_error_redirect(r, "invalid_request", "st-plain")


@pytest.mark.parametrize("challenge", [
    "short",
    "A" * 42,
    "+" * 43,
    "/" * 43,
    "=" * 43,
    "A" * 42 + "=",
])
def test_malformed_pkce_challenge_refused(challenge):
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st-mal", code_challenge=challenge,
                          code_challenge_method="S256"))
    assert_error_redirect(r, "invalid_request", "st-mal")


def test_challenge_method_without_challenge_refused():
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st-nc", code_challenge_method="S256"))
    assert_error_redirect(r, "invalid_request", "st-nc")


def test_pkce_required_client_without_challenge(client_factory):
    c = client_factory(pkce_required=True)
    r = get(authorize_url(MAIN_URL, c.client_id, c.redirect_uri,
                          "ACCOUNT_INFORMATION", "st-req"))
    assert_error_redirect(r, "invalid_request", "st-req",
                          redirect_uri=c.redirect_uri)
    ok = get(authorize_url(MAIN_URL, c.client_id, c.redirect_uri,
                           "ACCOUNT_INFORMATION", "st-req",
                           code_challenge=psd2lib.s256("q" * 60),
                           code_challenge_method="S256"))
    assert ok.status_code == 200
    assert Page(ok.text).form("login-form") is not None


# -- the login page -------------------------------------------------------

@pytest.mark.parametrize("scope", ["ACCOUNT_INFORMATION", "FUND_AVAILABILITY",
                                   "PAYMENT_INITIATION",
                                   "ACCOUNT_INFORMATION FUND_AVAILABILITY "
                                   "PAYMENT_INITIATION"])
def test_valid_request_shows_login_page(scope):
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, scope, "st"))
    assert r.status_code == 200, r.text[:500]
    assert "text/html" in r.headers.get("Content-Type", "")


def test_login_page_structure():
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st"))
    assert r.status_code == 200
    assert_security_headers(r)
    p = Page(r.text)
    f = p.form("login-form")
    assert f is not None
    assert f.method == "post"
    assert f.action == "/auth/login"
    u = f.input("username")
    pw = f.input("password")
    assert u is not None and u.get("autocomplete") == "username"
    assert pw is not None and pw.get("type") == "password"
    assert pw.get("autocomplete") == "current-password"
    hidden = f.hidden()
    assert hidden.get("authreq") and hidden.get("csrf")
    assert f.button(ident="login-submit") is not None
    for field in (u, pw):
        assert field.get("id"), "field without id: %r" % field
        lab = p.label_for(field.get("id"))
        assert lab is not None and lab.text.strip(), \
            "no label for %r" % field.get("id")


def test_login_page_sets_prelogin_cookie_httponly_lax():
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st"))
    cookies = set_cookie_headers(r)
    assert cookies, "authorize page sets no pre-login cookie"
    for c in cookies:
        attrs = [a.strip().lower() for a in c.split(";")[1:]]
        assert "httponly" in attrs, c
        assert "samesite=lax" in attrs, c
        assert "secure" not in attrs, c   # test config: not production


@pytest.mark.parametrize("lang", ["en", "de", "nl"])
def test_lang_parameter_sets_html_lang(lang):
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st", lang=lang))
    assert r.status_code == 200
    assert (Page(r.text).lang or "").lower().startswith(lang)


@pytest.mark.parametrize("accept,lang", [("de-DE,de;q=0.9,en;q=0.5", "de"),
                                         ("nl-NL,nl;q=0.9", "nl"),
                                         ("en-GB,en;q=0.8", "en"),
                                         ("fr-FR,fr;q=0.9", "en")])
def test_accept_language_sets_html_lang(accept, lang):
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st"), headers={"Accept-Language": accept})
    assert r.status_code == 200
    assert (Page(r.text).lang or "").lower().startswith(lang)


def test_lang_parameter_beats_accept_language():
    r = get(authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                          "st", lang="nl"),
            headers={"Accept-Language": "de"})
    assert (Page(r.text).lang or "").lower().startswith("nl")


def test_language_switch_links():
    url = authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                        "st-lang")
    r = get(url)
    p = Page(r.text)
    found = {}
    for a in p.links:
        href = a.get("href") or ""
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)
        if "lang" in q:
            found[q["lang"][0]] = href
    assert {"de", "nl"} <= set(found), [a.attrs for a in p.links]
    for lang in ("de", "nl"):
        href = urllib.parse.urljoin(url, found[lang])
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)
        # The switch keeps the authorization request.
        assert q.get("client_id") == [SC.client_id]
        assert q.get("state") == ["st-lang"]
        r2 = get(href)
        assert r2.status_code == 200
        assert (Page(r2.text).lang or "").lower().startswith(lang)


def test_login_page_writes_nothing(dbinfo):
    url = authorize_url(MAIN_URL, SC.client_id, RU, "ACCOUNT_INFORMATION",
                        "st-nowrite")
    # The service's periodic housekeeping (psd2_purge_interval) may write
    # at any moment: a write seen in each of three short windows fails.
    seen = []
    for attempt in range(3):
        before = psd2lib.db_rows(dbinfo)
        for _ in range(5):
            assert get(url).status_code == 200
        after = psd2lib.db_rows(dbinfo)
        written = psd2lib.rows_written(before, after)
        if not written:
            return
        seen.append(written)
    pytest.fail("rendering the login page wrote to %s" % seen)


def test_head_or_post_on_authorize_not_a_login_page():
    r = requests.post(authorize_url(MAIN_URL, SC.client_id, RU,
                                    "ACCOUNT_INFORMATION", "st"),
                      allow_redirects=False, timeout=10)
    assert r.status_code in (404, 405)
