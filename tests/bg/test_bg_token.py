"""The TPP's own token of the standard interface (src/bg/README.md "The
authorisation frame"): POST /auth/oauth/token with
grant_type=client_credentials, client authentication with HTTP Basic as
for the other grants, scope xs2a or none, no refresh token; the token
row has no consent and the contract's paths refuse it."""

import pytest
import requests

import psd2lib
from psd2lib import (MAIN_URL, basic_auth, db_rows, make_client,
                     rows_written, token_request)

from conftest import ACCOUNT_LIST, BALANCE, CONSENT, bearer_401, sql, \
    token_hash

WELL_KNOWN = "/.well-known/oauth-authorization-server"
# The sealer extends the audit chain over earlier rows at any time.
NOT_DATA = ("audit_chain",)


def snapshot(dbinfo):
    return db_rows(dbinfo, exclude=NOT_DATA)


def settled_snapshot(db, dbinfo):
    """After writing what the housekeeping would (bg_consent_sweep), so
    that its next round does not write during the snapshot's window."""
    sql(db, "SELECT bg_consent_sweep()")
    return snapshot(dbinfo)


@pytest.fixture(scope="module")
def client():
    return make_client()


def client_token(client, **extra):
    data = {"grant_type": "client_credentials"}
    data.update(extra)
    return token_request(data, client)


def oauth_error(r, status, error):
    assert r.status_code == status, (r.status_code, r.text[:300])
    body = r.json()
    assert body["error"] == error, body
    assert isinstance(body.get("error_description"), str)
    assert "access_token" not in body
    return body


def token_row(db, tok):
    rows = sql(db, """SELECT kind, client_id, consent_id, scopes,
                      cnf, expires_at - now() > interval '0',
                      extract(epoch FROM expires_at - created_at)::int
                      FROM token WHERE token_hash = %s""", token_hash(tok))
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize("scope", [None, "xs2a"])
def test_client_credentials_issues_the_tpps_own_token(db, client, scope):
    extra = {} if scope is None else {"scope": scope}
    r = client_token(client, **extra)
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    tok = r.json()
    assert sorted(tok) == ["access_token", "expires_in", "scope",
                           "token_type"]
    assert psd2lib.UUID_RE.match(tok["access_token"])
    assert tok["token_type"].lower() == "bearer"
    assert tok["scope"] == "xs2a"
    assert tok["expires_in"] == 900
    kind, client_id, consent_id, scopes, cnf, alive, ttl = \
        token_row(db, tok["access_token"])
    assert (kind, client_id, consent_id, scopes) == \
        ("access", client.client_id, None, ["xs2a"])
    # Plain HTTP: no client certificate to bind to (RFC 8705).
    assert cnf is None
    assert alive and ttl == 900
    # Nothing else was issued: one row in the token's family.
    n = sql(db, """SELECT count(*) FROM token WHERE family =
                   (SELECT family FROM token WHERE token_hash = %s)""",
            token_hash(tok["access_token"]))[0][0]
    assert n == 1


def test_each_grant_issues_a_new_token(client):
    a = client_token(client).json()["access_token"]
    b = client_token(client).json()["access_token"]
    assert a != b


def test_the_client_access_ttl_applies(db):
    c = make_client(access_ttl=120)
    r = client_token(c)
    assert r.status_code == 200, r.text
    assert r.json()["expires_in"] == 120


@pytest.mark.parametrize("scope", ["ACCOUNT_INFORMATION", "xs2a xs2a",
                                   "XS2A", "AIS:x",
                                   "xs2a ACCOUNT_INFORMATION"])
def test_another_scope_is_invalid_scope_and_writes_nothing(db, dbinfo,
                                                          client, scope):
    before = settled_snapshot(db, dbinfo)
    r = client_token(client, scope=scope)
    oauth_error(r, 400, "invalid_scope")
    assert rows_written(before, snapshot(dbinfo)) == []


def test_client_authentication_as_for_the_other_grants(db, dbinfo,
                                                      client):
    before = settled_snapshot(db, dbinfo)
    r = token_request({"grant_type": "client_credentials"},
                      auth=basic_auth(client.client_id, "wrong-secret"))
    oauth_error(r, 401, "invalid_client")
    assert r.headers.get("WWW-Authenticate") == 'Basic realm="psd2gate"'
    r = token_request({"grant_type": "client_credentials"})
    oauth_error(r, 401, "invalid_client")
    r = token_request({"grant_type": "client_credentials",
                       "client_id": client.client_id})
    oauth_error(r, 401, "invalid_client")
    r = token_request({"grant_type": "client_credentials",
                       "client_id": "another"}, client)
    oauth_error(r, 401, "invalid_client")
    assert rows_written(before, snapshot(dbinfo)) == []


def test_a_repeated_parameter_is_invalid_request(client):
    r = token_request("grant_type=client_credentials&scope=xs2a&scope=xs2a",
                      client)
    oauth_error(r, 400, "invalid_request")


def test_a_suspended_tpp_gets_no_token(db, dbinfo):
    c = make_client()
    assert client_token(c).status_code == 200
    psd2lib.psd2ctl("tpp", "suspend", c.org_id)
    try:
        before = settled_snapshot(db, dbinfo)
        oauth_error(client_token(c), 401, "invalid_client")
        assert rows_written(before, snapshot(dbinfo)) == []
    finally:
        psd2lib.psd2ctl("tpp", "activate", c.org_id)


@pytest.mark.parametrize("path", [ACCOUNT_LIST, BALANCE, CONSENT])
def test_the_contracts_paths_refuse_the_tpps_own_token(signer, client,
                                                       path):
    tok = client_token(client).json()["access_token"]
    r = psd2lib.api_get(signer, path, tok, org_id=client.org_id)
    bearer_401(r, "Invalid access token: " + tok)


def test_the_revoke_endpoint_ends_it(db, client):
    tok = client_token(client).json()["access_token"]
    r = psd2lib.revoke_request({"token": tok}, client)
    assert r.status_code == 200, r.text
    assert sql(db, "SELECT revoked_at IS NOT NULL FROM token "
               "WHERE token_hash = %s", token_hash(tok))[0][0]


def test_metadata_names_the_grant_and_the_scope():
    doc = requests.get(MAIN_URL + WELL_KNOWN, timeout=10).json()
    assert "client_credentials" in doc["grant_types_supported"]
    assert "xs2a" in doc["scopes_supported"]
