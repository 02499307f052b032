"""POST /auth/oauth/token: code and refresh grants with Authlib's OAuth 2.0
client, PKCE, and every RFC 6749 5.2 error path."""

import base64
import secrets
import hashlib
import time
import urllib.parse

import pytest
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session, OAuthError

import psd2lib
from psd2lib import (MAIN_URL, UUID_RE, PsuBrowser, basic_auth, db_connect,
                     exchange_code, location_params, run_code_flow,
                     sandbox_client, token_request)

TOKEN_URL = MAIN_URL + "/auth/oauth/token"
AUTHZ_URL = MAIN_URL + "/auth/oauth/authorize"
SC = sandbox_client()


def oauth_session(client, scope="ACCOUNT_INFORMATION", pkce=True,
                  redirect_uri=None):
    return OAuth2Session(client.client_id, client.secret, scope=scope,
                         redirect_uri=redirect_uri or client.redirect_uri,
                         code_challenge_method="S256" if pkce else None,
                         token_endpoint_auth_method="client_secret_basic")


def browser_part(url, psu, accounts=None):
    b = PsuBrowser()
    b.login_to_consent(url, psu)
    ids = None if accounts is None else b.account_ids_for(accounts)
    r = b.submit_consent("approve", ids)
    assert r.status_code == 303, r.text[:500]
    return r.headers["Location"]


def assert_token_response(tok, scope, expires_in=900):
    assert UUID_RE.match(tok["access_token"]), tok
    assert UUID_RE.match(tok["refresh_token"]), tok
    assert tok["access_token"] != tok["refresh_token"]
    assert tok["token_type"] == "bearer"
    assert tok["expires_in"] == expires_in
    assert isinstance(tok["expires_in"], int)
    assert sorted(tok["scope"].split(" ")) == sorted(scope.split())


def assert_oauth_error(r, status, error):
    assert r.status_code == status, (r.status_code, r.text[:500])
    assert "application/json" in r.headers.get("Content-Type", "")
    body = r.json()
    assert body.get("error") == error, body
    assert isinstance(body.get("error_description"), str)
    assert set(body) <= {"error", "error_description", "error_uri"}
    assert "access_token" not in body
    return body


def assert_invalid_client(r):
    assert_oauth_error(r, 401, "invalid_client")
    assert r.headers.get("WWW-Authenticate") == 'Basic realm="psd2gate"'


def bearer_status(signer, token):
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, token)
    return r


def assert_token_dead(signer, client, tok):
    r = bearer_status(signer, tok["access_token"])
    assert r.status_code == 401, "access token still works"
    assert r.json()["error_description"] == \
        "Invalid access token: " + tok["access_token"]
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, client)
    assert_oauth_error(r, 400, "invalid_grant")


def assert_token_alive(signer, tok):
    r = bearer_status(signer, tok["access_token"])
    assert r.status_code == 200, (r.status_code, r.text[:300])


# -- the happy paths with Authlib -----------------------------------------

def test_code_grant_with_authlib_and_pkce(psu_factory, client_factory, signer):
    psu = psu_factory()
    c = client_factory()
    sess = oauth_session(c, "ACCOUNT_INFORMATION FUND_AVAILABILITY")
    verifier = generate_token(64)
    url, state = sess.create_authorization_url(AUTHZ_URL,
                                               code_verifier=verifier)
    loc = browser_part(url, psu)
    tok = sess.fetch_token(TOKEN_URL, authorization_response=loc,
                           code_verifier=verifier)
    psd2lib.register_tokens(tok, c)
    assert_token_response(tok, "ACCOUNT_INFORMATION FUND_AVAILABILITY")
    assert_token_alive(signer, tok)


def test_code_grant_without_pkce_on_optional_client(psu_factory, signer):
    psu = psu_factory()
    sess = oauth_session(SC, pkce=False)
    url, state = sess.create_authorization_url(AUTHZ_URL)
    loc = browser_part(url, psu)
    tok = sess.fetch_token(TOKEN_URL, authorization_response=loc)
    assert_token_response(tok, "ACCOUNT_INFORMATION")
    assert_token_alive(signer, tok)


def test_pkce_required_client_full_flow(psu_factory, client_factory):
    c = client_factory(pkce_required=True)
    sess = oauth_session(c)
    verifier = generate_token(48)
    url, _ = sess.create_authorization_url(AUTHZ_URL, code_verifier=verifier)
    tok = sess.fetch_token(TOKEN_URL,
                           authorization_response=browser_part(
                               url, psu_factory()),
                           code_verifier=verifier)
    assert_token_response(tok, "ACCOUNT_INFORMATION")


def test_token_response_headers_and_raw_json(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = exchange_code(SC, code)
    assert r.status_code == 200
    assert "application/json" in r.headers.get("Content-Type", "")
    assert "no-store" in r.headers.get("Cache-Control", "")
    tok = r.json()
    assert set(tok) == {"access_token", "token_type", "refresh_token",
                        "expires_in", "scope"}
    assert_token_response(tok, "ACCOUNT_INFORMATION")


def test_client_id_in_body_matching_basic_is_accepted(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = exchange_code(SC, code, extra={"client_id": SC.client_id})
    assert r.status_code == 200, r.text
    assert_token_response(r.json(), "ACCOUNT_INFORMATION")


def test_second_redirect_uri_round_trip(psu_factory):
    ru = SC.redirect_uris[1]
    code, _, _, _ = run_code_flow(SC, psu_factory(), redirect_uri=ru)
    r = exchange_code(SC, code, redirect_uri=ru)
    assert r.status_code == 200, r.text


def test_custom_access_ttl(psu_factory, client_factory):
    c = client_factory(access_ttl=120)
    code, _, _, _ = run_code_flow(c, psu_factory())
    r = exchange_code(c, code)
    assert r.status_code == 200
    assert r.json()["expires_in"] == 120


def test_refresh_grant_with_authlib_rotates(psu_factory, client_factory,
                                            signer):
    c = client_factory()
    sess = oauth_session(c)
    verifier = generate_token(48)
    url, _ = sess.create_authorization_url(AUTHZ_URL, code_verifier=verifier)
    tok1 = sess.fetch_token(TOKEN_URL, authorization_response=browser_part(
        url, psu_factory()), code_verifier=verifier)
    tok1 = dict(tok1)
    tok2 = dict(sess.refresh_token(TOKEN_URL,
                                   refresh_token=tok1["refresh_token"]))
    psd2lib.register_tokens(tok2, c)
    assert_token_response(tok2, "ACCOUNT_INFORMATION")
    assert tok2["access_token"] != tok1["access_token"]
    assert tok2["refresh_token"] != tok1["refresh_token"]
    assert_token_alive(signer, tok2)
    tok3 = dict(sess.refresh_token(TOKEN_URL,
                                   refresh_token=tok2["refresh_token"]))
    psd2lib.register_tokens(tok3, c)
    assert_token_response(tok3, "ACCOUNT_INFORMATION")
    assert_token_alive(signer, tok3)


def test_refresh_response_raw(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory(),
                                  "ACCOUNT_INFORMATION PAYMENT_INITIATION")
    tok = exchange_code(SC, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, SC)
    assert r.status_code == 200, r.text
    assert "no-store" in r.headers.get("Cache-Control", "")
    new = r.json()
    assert set(new) == {"access_token", "token_type", "refresh_token",
                        "expires_in", "scope"}
    assert_token_response(new, "ACCOUNT_INFORMATION PAYMENT_INITIATION")


def test_spent_refresh_token_revokes_family(psu_factory, signer):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    tok1 = exchange_code(SC, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok1["refresh_token"]}, SC)
    tok2 = r.json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok2["refresh_token"]}, SC)
    tok3 = r.json()
    assert_token_alive(signer, tok3)
    # Replay of the spent first refresh token.
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok1["refresh_token"]}, SC)
    assert_oauth_error(r, 400, "invalid_grant")
    assert_token_dead(signer, SC, tok3)
    r = bearer_status(signer, tok2["access_token"])
    assert r.status_code == 401


def test_refresh_with_authlib_replay_raises(psu_factory):
    sess = oauth_session(SC, pkce=False)
    url, _ = sess.create_authorization_url(AUTHZ_URL)
    tok = dict(sess.fetch_token(TOKEN_URL, authorization_response=browser_part(
        url, psu_factory())))
    sess.refresh_token(TOKEN_URL, refresh_token=tok["refresh_token"])
    with pytest.raises(OAuthError) as e:
        sess.refresh_token(TOKEN_URL, refresh_token=tok["refresh_token"])
    assert e.value.error == "invalid_grant"


# -- a client without refresh token rotation ---------------------------------

def client_without_rotation(client_factory):
    c = client_factory()
    out = psd2lib.psd2ctl("tpp", "refresh-rotation", c.client_id,
                          "off").stdout
    assert out.strip() == "%s: refresh token rotation off" % c.client_id
    return c


def test_refresh_without_rotation_answers_the_same_token(psu_factory,
                                                         client_factory,
                                                         signer, dbinfo):
    # RFC 9700 4.14.2 and the FAPI 2.0 profile: a client that authenticates
    # keeps its refresh token; each grant issues a new access token only.
    c = client_without_rotation(client_factory)
    code, _, _, _ = run_code_flow(c, psu_factory())
    tok = exchange_code(c, code).json()
    seen = {tok["access_token"]}
    for _ in range(3):
        r = token_request({"grant_type": "refresh_token",
                           "refresh_token": tok["refresh_token"]}, c)
        assert r.status_code == 200, r.text
        new = r.json()
        psd2lib.register_tokens(new, c)
        assert_token_response(new, "ACCOUNT_INFORMATION")
        assert new["refresh_token"] == tok["refresh_token"]
        assert new["access_token"] not in seen
        seen.add(new["access_token"])
        assert_token_alive(signer, new)
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("SELECT kind, count(*), count(used_at) FROM token "
                    "WHERE family = (SELECT family FROM token "
                    "WHERE token_hash = %s) GROUP BY kind ORDER BY kind",
                    (hashlib.sha256(tok["refresh_token"].encode())
                     .digest(),))
        assert cur.fetchall() == [("access", 4, 0), ("refresh", 1, 0)]
        cur.execute("SELECT actor LIKE 'operator:%%', detail FROM audit_log "
                    "WHERE action = 'tpp.client_rotation' "
                    "AND detail->>'client_id' = %s", (c.client_id,))
        assert cur.fetchall() == [(True, {"client_id": c.client_id,
                                          "rotation": False})]


def test_refresh_without_rotation_ends_with_revocation(psu_factory,
                                                       client_factory,
                                                       signer):
    c = client_without_rotation(client_factory)
    code, _, _, _ = run_code_flow(c, psu_factory())
    tok = exchange_code(c, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, c)
    new = r.json()
    psd2lib.register_tokens(new, c)
    assert_token_alive(signer, new)
    r = psd2lib.revoke_request({"token": tok["refresh_token"]}, c)
    assert r.status_code == 200, r.text
    assert_token_dead(signer, c, new)
    assert_token_dead(signer, c, tok)
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, c)
    assert_oauth_error(r, 400, "invalid_grant")
    assert r.json()["error_description"] == "The refresh token was revoked."


def test_refresh_without_rotation_other_client_refused(psu_factory,
                                                       client_factory):
    c = client_without_rotation(client_factory)
    other = client_without_rotation(client_factory)
    code, _, _, _ = run_code_flow(c, psu_factory())
    tok = exchange_code(c, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, other)
    assert_oauth_error(r, 400, "invalid_grant")
    assert r.json()["error_description"] == "The refresh token is invalid."


def test_rotation_back_on_spends_the_token(psu_factory, client_factory,
                                           signer):
    # Turned on again, the client's next grant rotates, and the token it
    # kept until then is spent: presented again, it revokes the family.
    c = client_without_rotation(client_factory)
    code, _, _, _ = run_code_flow(c, psu_factory())
    tok = exchange_code(c, code).json()
    psd2lib.psd2ctl("tpp", "refresh-rotation", c.client_id, "on")
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, c)
    new = r.json()
    psd2lib.register_tokens(new, c)
    assert new["refresh_token"] != tok["refresh_token"]
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, c)
    assert_oauth_error(r, 400, "invalid_grant")
    assert_token_dead(signer, c, new)


def test_refresh_rotation_command_refusals():
    r = psd2lib.psd2ctl("tpp", "refresh-rotation", "no-such-client", "off",
                        check=False)
    assert r.returncode == 1
    assert "no client no-such-client" in r.stderr
    r = psd2lib.psd2ctl("tpp", "refresh-rotation", SC.client_id, "maybe",
                        check=False)
    assert r.returncode == 2


# -- code misuse ------------------------------------------------------------

def test_code_reuse_revokes_first_tokens(psu_factory, signer):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r1 = exchange_code(SC, code)
    assert r1.status_code == 200
    tok = r1.json()
    assert_token_alive(signer, tok)
    r2 = exchange_code(SC, code)
    assert_oauth_error(r2, 400, "invalid_grant")
    assert_token_dead(signer, SC, tok)


def test_code_reuse_revokes_refreshed_tokens_too(psu_factory, signer):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    tok = exchange_code(SC, code).json()
    new = token_request({"grant_type": "refresh_token",
                         "refresh_token": tok["refresh_token"]}, SC).json()
    assert_token_alive(signer, new)
    assert_oauth_error(exchange_code(SC, code), 400, "invalid_grant")
    assert_token_dead(signer, SC, new)


def expire_code(dbinfo, code):
    """Moves the code's expiry into the past (codes are stored as SHA-256
    hashes)."""
    c = db_connect(dbinfo)
    try:
        cur = c.cursor()
        h = hashlib.sha256(code.encode()).digest()
        cur.execute("UPDATE auth_code SET expires_at = now() - "
                    "interval '1 second', created_at = now() - "
                    "interval '61 seconds' WHERE code_hash = %s", (h,))
        assert cur.rowcount == 1, "the code's row is not found by its SHA-256"
    finally:
        c.close()


def test_expired_code_is_invalid_grant(psu_factory, dbinfo):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    expire_code(dbinfo, code)
    assert_oauth_error(exchange_code(SC, code), 400, "invalid_grant")


def test_code_of_another_client(psu_factory, client_factory):
    other = client_factory(redirect_uris=[SC.redirect_uri])
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = exchange_code(other, code, redirect_uri=SC.redirect_uri)
    assert_oauth_error(r, 400, "invalid_grant")


def test_wrong_redirect_uri(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = exchange_code(SC, code, redirect_uri=SC.redirect_uris[1])
    assert_oauth_error(r, 400, "invalid_grant")
    r = exchange_code(SC, code, redirect_uri=SC.redirect_uri + "/")
    assert_oauth_error(r, 400, "invalid_grant")


def test_unknown_code(psu_factory):
    r = exchange_code(SC, "0" * 36)
    assert_oauth_error(r, 400, "invalid_grant")


def pkce_code(psu, client=SC):
    verifier = generate_token(64)
    code, _, _, _ = run_code_flow(client, psu,
                                  code_challenge=psd2lib.s256(verifier))
    return code, verifier


def test_pkce_good_verifier(psu_factory):
    code, verifier = pkce_code(psu_factory())
    r = exchange_code(SC, code, verifier=verifier)
    assert r.status_code == 200, r.text


def test_pkce_wrong_verifier(psu_factory):
    code, verifier = pkce_code(psu_factory())
    r = exchange_code(SC, code, verifier=generate_token(64))
    assert_oauth_error(r, 400, "invalid_grant")


def test_pkce_plain_verifier_equal_to_challenge_refused(psu_factory):
    code, verifier = pkce_code(psu_factory())
    r = exchange_code(SC, code, verifier=psd2lib.s256(verifier))
    assert_oauth_error(r, 400, "invalid_grant")


def test_pkce_missing_verifier(psu_factory):
    code, verifier = pkce_code(psu_factory())
    r = exchange_code(SC, code)
    assert_oauth_error(r, 400, "invalid_grant")


def test_verifier_without_challenge_refused(psu_factory):
    """RFC 9700 2.1.1: a code_verifier for a code issued without a
    challenge is refused (PKCE downgrade)."""
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = exchange_code(SC, code, verifier=generate_token(64))
    assert_oauth_error(r, 400, "invalid_grant")


# -- client authentication -------------------------------------------------

def test_missing_client_auth(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = token_request({"grant_type": "authorization_code", "code": code,
                       "redirect_uri": SC.redirect_uri}, auth="")
    assert_invalid_client(r)
    # client_secret_post is not a supported method either.
    r = token_request({"grant_type": "authorization_code", "code": code,
                       "redirect_uri": SC.redirect_uri,
                       "client_id": SC.client_id,
                       "client_secret": SC.secret}, auth="")
    assert_invalid_client(r)
    # The code was not spent by the refused calls.
    assert exchange_code(SC, code).status_code == 200


@pytest.mark.parametrize("auth", [
    basic_auth("sandbox-tpp", "wrong-secret"),
    basic_auth("sandbox-tpp", ""),
    basic_auth("no-such-client", "sandbox-secret"),
    basic_auth("", "sandbox-secret"),
    "Basic " + base64.b64encode(b"sandbox-tpp").decode(),
    "Basic !!!not-base64!!!",
    "Basic ",
    "Bearer 00000000-0000-0000-0000-000000000000",
    "Digest username=sandbox-tpp",
])
def test_bad_client_auth(auth):
    r = token_request({"grant_type": "authorization_code", "code": "x" * 36,
                       "redirect_uri": SC.redirect_uri}, auth=auth)
    assert_invalid_client(r)


def test_bad_client_auth_on_refresh(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    tok = exchange_code(SC, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]},
                      auth=basic_auth(SC.client_id, "nope"))
    assert_invalid_client(r)
    # Still usable with the right credentials.
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, SC)
    assert r.status_code == 200


def test_basic_credentials_are_form_urlencoded(psu_factory):
    """RFC 6749 2.3.1: id and secret are form-urlencoded before base64;
    an encoded '-' (%2D) must decode to the same client."""
    code, _, _, _ = run_code_flow(SC, psu_factory())
    raw = "sandbox%2Dtpp:sandbox%2Dsecret"
    r = token_request({"grant_type": "authorization_code", "code": code,
                       "redirect_uri": SC.redirect_uri},
                      auth="Basic " + base64.b64encode(raw.encode()).decode())
    assert r.status_code == 200, r.text


def test_client_id_in_body_differs_from_basic(psu_factory, client_factory):
    other = client_factory()
    code, _, _, _ = run_code_flow(SC, psu_factory())
    r = exchange_code(SC, code, extra={"client_id": other.client_id})
    assert r.status_code in (400, 401), r.text
    body = r.json()
    assert "access_token" not in body
    if r.status_code == 401:
        assert body["error"] == "invalid_client"
        assert r.headers.get("WWW-Authenticate") == 'Basic realm="psd2gate"'
    else:
        assert body["error"] == "invalid_request"


def test_suspended_client_cannot_get_tokens(psu_factory, client_factory):
    c = client_factory()
    code, _, _, _ = run_code_flow(c, psu_factory())
    psd2lib.psd2ctl("tpp", "suspend", c.org_id)     # README: ORG-ID
    r = exchange_code(c, code)
    assert_invalid_client(r)
    assert "access_token" not in r.json()


def test_suspension_applies_at_once_after_recent_use(psu_factory,
                                                     client_factory):
    """The token endpoint remembers recently authenticated clients for a
    few seconds; a suspension must still stop the very next refresh."""
    c = client_factory()
    code, _, _, _ = run_code_flow(c, psu_factory())
    tok = exchange_code(c, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, c)
    assert r.status_code == 200, r.text
    tok = r.json()
    psd2lib.psd2ctl("tpp", "suspend", c.org_id)
    for _ in range(4):  # whichever worker answers
        r = token_request({"grant_type": "refresh_token",
                           "refresh_token": tok["refresh_token"]}, c)
        assert r.status_code == 401, r.text
        assert r.json()["error"] == "invalid_client"
        assert "access_token" not in r.json()


# -- grant types and parameters ---------------------------------------------

# client_credentials is supported: the TPP's own token of the standard
# interface (tests/bg/test_bg_token.py).
@pytest.mark.parametrize("grant", ["password", "implicit",
                                   "urn:ietf:params:oauth:"
                                   "grant-type:device_code", "foo",
                                   "Client_Credentials"])
def test_unsupported_grant_type(grant):
    r = token_request({"grant_type": grant, "username": "anna",
                       "password": "anna-sandbox-1"}, SC)
    assert_oauth_error(r, 400, "unsupported_grant_type")


@pytest.mark.parametrize("data", [
    {},
    {"code": "x" * 36, "redirect_uri": SC.redirect_uri},
    {"grant_type": "authorization_code", "redirect_uri": SC.redirect_uri},
    {"grant_type": "authorization_code", "code": "x" * 36},
    {"grant_type": "refresh_token"},
    {"grant_type": "authorization_code", "code": "",
     "redirect_uri": SC.redirect_uri},
])
def test_missing_parameter_is_invalid_request(data):
    r = token_request(data, SC)
    assert_oauth_error(r, 400, "invalid_request")


def test_refresh_with_access_token_is_invalid_grant(psu_factory):
    code, _, _, _ = run_code_flow(SC, psu_factory())
    tok = exchange_code(SC, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["access_token"]}, SC)
    assert_oauth_error(r, 400, "invalid_grant")


def test_refresh_token_of_another_client(psu_factory, client_factory):
    other = client_factory()
    code, _, _, _ = run_code_flow(SC, psu_factory())
    tok = exchange_code(SC, code).json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, other)
    assert_oauth_error(r, 400, "invalid_grant")


def test_unknown_refresh_token(psu_factory):
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": "11111111-2222-4333-8444-555555555555"},
                      SC)
    assert_oauth_error(r, 400, "invalid_grant")


def test_token_endpoint_get_not_allowed():
    import requests
    r = requests.get(TOKEN_URL + "?grant_type=authorization_code&code=x",
                     headers={"Authorization": basic_auth(SC.client_id,
                                                          SC.secret)},
                     timeout=10)
    assert r.status_code in (404, 405)


def test_basic_credentials_with_reserved_characters(psu_factory,
                                                    client_factory):
    """A secret with ':', '+', '/', '%' and a space works when both parts
    are form-urlencoded before base64 (RFC 6749 2.3.1); the raw form with
    a second ':' is not the same credential."""
    secret = "s3:cr+t/%20 x" + secrets.token_hex(8)
    c = client_factory(secret=secret)
    assert c.secret == secret
    code, _, _, _ = run_code_flow(c, psu_factory())
    raw = "%s:%s" % (c.client_id, secret)
    r = token_request({"grant_type": "authorization_code", "code": code,
                       "redirect_uri": c.redirect_uri},
                      auth="Basic " + base64.b64encode(raw.encode()).decode())
    assert_invalid_client(r)
    r = exchange_code(c, code)
    assert r.status_code == 200, r.text


def test_access_token_never_outlives_its_consent(psu_factory, client_factory,
                                                 dbinfo):
    """A consent whose last day is today: the access token of a code or
    refresh grant ends with it, and expires_in says so."""
    c = client_factory(access_ttl=86400)
    code, _, _, _ = run_code_flow(c, psu_factory())
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("UPDATE consent SET valid_until = current_date WHERE "
                    "id = (SELECT consent_id FROM auth_code WHERE "
                    "code_hash = %s)", (hashlib.sha256(code.encode())
                                        .digest(),))
        assert cur.rowcount == 1
    r = exchange_code(c, code)
    assert r.status_code == 200, r.text
    tok = r.json()
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, c)
    assert r.status_code == 200, r.text
    for t in (tok, r.json()):
        with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
                db.cursor() as cur:
            cur.execute("SELECT t.expires_at <= (c.valid_until + 1)::"
                        "timestamptz, extract(epoch FROM (c.valid_until + 1)"
                        "::timestamptz - now()) FROM token t JOIN consent c "
                        "ON c.id = t.consent_id WHERE t.token_hash = %s",
                        (hashlib.sha256(t["access_token"].encode())
                         .digest(),))
            within, left = cur.fetchone()
        # Within the second the grant's now() and floor() take.
        assert within and 0 < t["expires_in"] < 86400
        assert left - 2 <= t["expires_in"] <= left + 1
