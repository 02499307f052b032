"""POST /auth/oauth/par: pushed authorisation requests (RFC 9126), and
the authorization endpoint with a request_uri; a client the bank
registered with par_required (psd2ctl tpp par-required) must use them,
with PKCE (FAPI 2.0 Security Profile 5.3.2.2)."""

import hashlib
import secrets
import urllib.parse

import pytest
import requests

import psd2lib
from psd2lib import (MAIN_URL, PsuBrowser, basic_auth, db_connect,
                     exchange_code, location_params, s256)
from test_authorize import assert_error_page, issuer

PAR_URL = MAIN_URL + "/auth/oauth/par"
URN = "urn:ietf:params:oauth:request_uri:"


def push(client, data, auth=None):
    h = {"Authorization": auth if auth is not None else
         basic_auth(client.client_id, client.secret)}
    if not h["Authorization"]:
        del h["Authorization"]
    return requests.post(PAR_URL, data=data, headers=h, timeout=30,
                         allow_redirects=False)


def request_of(client, **kw):
    d = {"response_type": "code", "client_id": client.client_id,
         "redirect_uri": client.redirect_uri,
         "scope": "ACCOUNT_INFORMATION", "state": "st-par"}
    d.update(kw)
    return {k: v for k, v in d.items() if v is not None}


def pushed_url(client_id, request_uri, **extra):
    q = {"client_id": client_id, "request_uri": request_uri}
    q.update(extra)
    return MAIN_URL + "/auth/oauth/authorize?" + urllib.parse.urlencode(q)


def pushed(client, **kw):
    r = push(client, request_of(client, **kw))
    assert r.status_code == 201, r.text
    return r.json()["request_uri"]


def stored(dbinfo, client):
    with db_connect(dbinfo) as c, c.cursor() as cur:
        cur.execute("SELECT count(*) FROM pushed_request WHERE "
                    "client_id = %s", (client.client_id,))
        return cur.fetchone()[0]


def assert_oauth_error(r, status, error):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert body["error"] == error, body
    assert body["error_description"].strip()
    assert "no-store" in r.headers.get("Cache-Control", "")


def test_pushed_request_runs_the_code_flow(client_factory, psu_factory):
    c = client_factory()
    psu = psu_factory()
    verifier = secrets.token_urlsafe(48)
    r = push(c, request_of(c, code_challenge=s256(verifier),
                           code_challenge_method="S256"))
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"request_uri", "expires_in"}
    assert body["expires_in"] == 60
    assert body["request_uri"].startswith(URN)
    assert len(body["request_uri"]) == len(URN) + 43
    assert "no-store" in r.headers.get("Cache-Control", "")
    b = PsuBrowser()
    b.login_to_consent(pushed_url(c.client_id, body["request_uri"]), psu)
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    parts, q = location_params(r)
    assert parts.scheme + "://" + parts.netloc + parts.path == \
        c.redirect_uri
    assert q["state"] == ["st-par"] and q["iss"] == [issuer()]
    # The pushed challenge holds: without the verifier, no token.
    assert_oauth_error(exchange_code(c, q["code"][0]), 400, "invalid_grant")


def test_the_pushed_request_wins_over_the_query(client_factory,
                                                 psu_factory):
    """Beside a request_uri, the query's own parameters change nothing:
    not the redirect_uri, the scope or the state."""
    c = client_factory(redirect_uris=("https://tpp.example/cb",
                                      "https://tpp.example/other"))
    uri = pushed(c)
    b = PsuBrowser()
    b.login_to_consent(pushed_url(
        c.client_id, uri, redirect_uri="https://tpp.example/other",
        scope="PAYMENT_INITIATION", state="st-query",
        response_type="token"), psu_factory())
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    parts, q = location_params(r)
    assert parts.path == "/cb" and q["state"] == ["st-par"]
    r = exchange_code(c, q["code"][0], redirect_uri="https://tpp.example/cb")
    assert r.status_code == 200, r.text
    assert r.json()["scope"] == "ACCOUNT_INFORMATION"


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_request_uri_is_used_up_by_the_decision(client_factory, dbinfo,
                                                psu_factory, decision):
    """Loaded again before the PSU decides (a reload), it still works;
    the decision, either way, uses it up."""
    c = client_factory()
    uri = pushed(c)
    assert stored(dbinfo, c) == 1
    for _ in range(2):
        r = PsuBrowser().get(pushed_url(c.client_id, uri))
        assert r.status_code == 200 and "login-form" in r.text, r.text[:500]
    assert stored(dbinfo, c) == 1
    b = PsuBrowser()
    b.login_to_consent(pushed_url(c.client_id, uri), psu_factory())
    assert b.submit_consent(decision).status_code == 303
    assert stored(dbinfo, c) == 0
    assert_error_page(PsuBrowser().get(pushed_url(c.client_id, uri)))


def test_expired_request_uri_is_an_error_page(client_factory, dbinfo):
    c = client_factory()
    uri = pushed(c)
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("UPDATE pushed_request SET expires_at = now() - "
                    "interval '1 second' WHERE uri_hash = %s",
                    (hashlib.sha256(uri.encode()).digest(),))
        assert cur.rowcount == 1
    assert_error_page(PsuBrowser().get(pushed_url(c.client_id, uri)))
    # Reading changes nothing; the purge takes it (below).
    assert stored(dbinfo, c) == 1


def test_another_clients_request_uri_is_refused(client_factory):
    a, b = client_factory(), client_factory()
    uri = pushed(a)
    assert_error_page(PsuBrowser().get(pushed_url(b.client_id, uri)))
    for bad in (URN + "x" * 43, "", uri + "x"):
        assert_error_page(PsuBrowser().get(pushed_url(a.client_id, bad)))
    r = PsuBrowser().get(MAIN_URL + "/auth/oauth/authorize?" +
                         urllib.parse.urlencode({"request_uri": uri}))
    assert_error_page(r)
    # Its owner still has it: the refusals took nothing.
    r = PsuBrowser().get(pushed_url(a.client_id, uri))
    assert r.status_code == 200 and "login-form" in r.text, r.text[:500]


@pytest.mark.parametrize("change,error", [
    ({"redirect_uri": None}, "invalid_request"),
    ({"redirect_uri": "https://evil.example/cb"}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"response_type": None}, "invalid_request"),
    ({"scope": "NOPE"}, "invalid_scope"),
    ({"scope": None}, "invalid_scope"),
    ({"scope": "AIS:not-a-uuid"}, "invalid_scope"),
    ({"code_challenge_method": "plain", "code_challenge": "x" * 43},
     "invalid_request"),
    ({"code_challenge": "short", "code_challenge_method": "S256"},
     "invalid_request"),
    ({"request_uri": URN + "a" * 43}, "invalid_request"),
    ({"state": "s" * 1025}, "invalid_request"),
])
def test_refusals_store_nothing(client_factory, dbinfo, change, error):
    c = client_factory()
    assert_oauth_error(push(c, request_of(c, **change)), 400, error)
    assert stored(dbinfo, c) == 0


def test_a_consent_scope_names_a_consent_of_the_client(client_factory,
                                                       dbinfo):
    """scope=AIS:{consentId} is looked up at the push (the Berlin Group
    consent, bg_oauth_authorize): an unknown one is invalid_scope."""
    c = client_factory()
    r = push(c, request_of(c, scope="AIS:6f1c2a52-7f3e-4a8e-9d1b-"
                                    "2c4e5f6a7b8c"))
    assert_oauth_error(r, 400, "invalid_scope")
    assert stored(dbinfo, c) == 0


@pytest.mark.parametrize("name", ["state", "scope", "redirect_uri",
                                  "client_id"])
def test_repeated_parameter_is_refused(client_factory, dbinfo, name):
    c = client_factory()
    data = list(request_of(c).items()) + [(name, request_of(c)[name])]
    assert_oauth_error(push(c, data), 400, "invalid_request")
    assert stored(dbinfo, c) == 0


@pytest.mark.parametrize("auth", ["", "wrong", "other", "body"])
def test_client_authentication(client_factory, dbinfo, auth):
    """As at the token endpoint: HTTP Basic, and a client_id in the body
    is the authenticated client's."""
    c = client_factory()
    other = client_factory()
    header = {"": "",
              "wrong": basic_auth(c.client_id, "not-the-secret"),
              "other": basic_auth(other.client_id, c.secret),
              "body": basic_auth(other.client_id, other.secret)}
    r = push(c, request_of(c), auth=header[auth])
    assert_oauth_error(r, 401, "invalid_client")
    assert stored(dbinfo, c) == 0 and stored(dbinfo, other) == 0


def test_a_suspended_tpp_pushes_nothing(client_factory, dbinfo):
    c = client_factory()
    psd2lib.psd2ctl("tpp", "suspend", c.org_id)
    assert_oauth_error(push(c, request_of(c)), 401, "invalid_client")
    assert stored(dbinfo, c) == 0


def test_par_required_client(client_factory, psu_factory, dbinfo):
    c = client_factory()
    out = psd2lib.psd2ctl("tpp", "par-required", c.client_id, "on").stdout
    assert out.strip() == ("%s: pushed authorisation requests required on"
                           % c.client_id)
    with db_connect(dbinfo) as db, db.cursor() as cur:
        cur.execute("SELECT detail FROM audit_log WHERE action = "
                    "'tpp.client_par' AND detail->>'client_id' = %s",
                    (c.client_id,))
        assert [r[0] for r in cur.fetchall()] == [
            {"client_id": c.client_id, "par_required": True}]
    # Without a request_uri: an error redirect (the redirect_uri is
    # registered), with the state and the issuer.
    r = PsuBrowser().get(psd2lib.authorize_url(
        MAIN_URL, c.client_id, c.redirect_uri, "ACCOUNT_INFORMATION",
        "st-plain"))
    assert r.status_code == 302, r.text[:500]
    q = location_params(r)[1]
    assert q["error"] == ["invalid_request"] and q["state"] == ["st-plain"]
    assert q["iss"] == [issuer()] and "code" not in q
    # Its pushed requests need PKCE.
    assert_oauth_error(push(c, request_of(c)), 400, "invalid_request")
    verifier = secrets.token_urlsafe(48)
    uri = pushed(c, code_challenge=s256(verifier),
                 code_challenge_method="S256")
    b = PsuBrowser()
    b.login_to_consent(pushed_url(c.client_id, uri), psu_factory())
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    r = exchange_code(c, location_params(r)[1]["code"][0],
                      verifier=verifier)
    assert r.status_code == 200, r.text


def test_par_required_command_refusals():
    r = psd2lib.psd2ctl("tpp", "par-required", "no-such-client", "on",
                        check=False)
    assert r.returncode == 1 and "no client no-such-client" in r.stderr
    r = psd2lib.psd2ctl("tpp", "par-required", "sandbox-tpp", "maybe",
                        check=False)
    assert r.returncode == 2


def test_metadata_names_the_endpoint():
    r = requests.get(MAIN_URL + "/.well-known/oauth-authorization-server",
                     timeout=10)
    doc = r.json()
    assert doc["pushed_authorization_request_endpoint"] == \
        doc["issuer"] + "/auth/oauth/par"
    assert doc["require_pushed_authorization_requests"] is False


def test_the_purge_takes_expired_requests(client_factory, dbinfo):
    c = client_factory()
    keep, old = pushed(c), pushed(c)
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("UPDATE pushed_request SET expires_at = now() - "
                    "interval '1 second' WHERE uri_hash = %s",
                    (hashlib.sha256(old.encode()).digest(),))
        cur.execute("SELECT psd2_purge()")
        cur.execute("SELECT uri_hash FROM pushed_request WHERE "
                    "client_id = %s", (c.client_id,))
        assert [bytes(r[0]) for r in cur.fetchall()] == [
            hashlib.sha256(keep.encode()).digest()]
