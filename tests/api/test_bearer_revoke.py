"""The bearer check on API endpoints (spec part 7) and RFC 7009
revocation."""

import hashlib
import os
import threading
import time
import uuid

import pytest

import psd2lib
from psd2lib import (ACCOUNT_LIST, MAIN_URL, api_get, basic_auth,
                     exchange_code, revoke_request, run_code_flow,
                     sandbox_client, token_request)
from test_token import assert_invalid_client, assert_oauth_error

SC = sandbox_client()


def tokens(psu, client=SC, scope="ACCOUNT_INFORMATION"):
    code, _, _, _ = run_code_flow(client, psu, scope)
    r = exchange_code(client, code)
    assert r.status_code == 200, r.text
    return r.json()


def assert_bearer_401(r, description):
    assert r.status_code == 401, (r.status_code, r.text[:300])
    assert "application/json" in r.headers.get("Content-Type", "")
    assert r.json() == {"error": "invalid_token",
                        "error_description": description}
    www = r.headers.get("WWW-Authenticate", "")
    assert www.startswith("Bearer"), www
    assert 'error="invalid_token"' in www, www


def test_valid_token_passes_bearer_check(psu_factory, signer):
    tok = tokens(psu_factory())
    r = api_get(signer, ACCOUNT_LIST, tok["access_token"])
    assert r.status_code == 200, r.text[:300]


def test_missing_authorization(signer):
    r = api_get(signer, ACCOUNT_LIST)
    assert_bearer_401(r, "Invalid access token: ")


def test_empty_bearer(signer):
    r = api_get(signer, ACCOUNT_LIST, authorization="Bearer ")
    assert_bearer_401(r, "Invalid access token: ")


def test_unknown_token(signer):
    t = str(uuid.uuid4())
    assert_bearer_401(api_get(signer, ACCOUNT_LIST, t),
                      "Invalid access token: " + t)


@pytest.mark.parametrize("t", ["not-a-uuid", "x" * 200,
                               "00000000-0000-0000-0000-000000000000"])
def test_malformed_token(signer, t):
    assert_bearer_401(api_get(signer, ACCOUNT_LIST, t),
                      "Invalid access token: " + t)


@pytest.mark.parametrize("auth", ["Basic c2FuZGJveC10cHA6c2FuZGJveC1zZWNyZXQ=",
                                  "Token abc", "Bearer"])
def test_other_schemes_are_invalid(signer, auth):
    r = api_get(signer, ACCOUNT_LIST, authorization=auth)
    assert r.status_code == 401
    body = r.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == "invalid_token"
    assert body["error_description"].startswith("Invalid access token: ")
    assert 'error="invalid_token"' in r.headers.get("WWW-Authenticate", "")


def test_refresh_token_as_bearer(psu_factory, signer):
    tok = tokens(psu_factory())
    assert_bearer_401(api_get(signer, ACCOUNT_LIST, tok["refresh_token"]),
                      "Invalid access token: " + tok["refresh_token"])


def test_expired_token_with_short_client(psu_factory, signer):
    short = sandbox_client(short=True)
    tok = tokens(psu_factory(), short)
    assert tok["expires_in"] == 5
    assert api_get(signer, ACCOUNT_LIST, tok["access_token"]).status_code \
        == 200
    time.sleep(6)
    assert_bearer_401(api_get(signer, ACCOUNT_LIST, tok["access_token"]),
                      "Access token expired: " + tok["access_token"])
    # The refresh token still works and yields a fresh access token.
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, short)
    assert r.status_code == 200, r.text
    new = r.json()
    assert new["expires_in"] == 5
    assert api_get(signer, ACCOUNT_LIST, new["access_token"]).status_code \
        == 200


def test_expired_then_revoked_is_invalid(psu_factory, signer):
    short = sandbox_client(short=True)
    tok = tokens(psu_factory(), short)
    time.sleep(6)
    assert revoke_request({"token": tok["access_token"]}, short)\
        .status_code == 200
    r = api_get(signer, ACCOUNT_LIST, tok["access_token"])
    assert r.status_code == 401
    assert r.json()["error"] == "invalid_token"


# -- revocation ---------------------------------------------------------------

def test_revoke_access_token(psu_factory, signer):
    tok = tokens(psu_factory())
    r = revoke_request({"token": tok["access_token"],
                        "token_type_hint": "access_token"}, SC)
    assert r.status_code == 200, r.text
    assert_bearer_401(api_get(signer, ACCOUNT_LIST, tok["access_token"]),
                      "Invalid access token: " + tok["access_token"])
    # Revoking is idempotent.
    assert revoke_request({"token": tok["access_token"]}, SC)\
        .status_code == 200


def test_revoke_refresh_token_revokes_family(psu_factory, signer):
    tok = tokens(psu_factory())
    r = revoke_request({"token": tok["refresh_token"],
                        "token_type_hint": "refresh_token"}, SC)
    assert r.status_code == 200
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, SC)
    assert_oauth_error(r, 400, "invalid_grant")
    assert_bearer_401(api_get(signer, ACCOUNT_LIST, tok["access_token"]),
                      "Invalid access token: " + tok["access_token"])


def test_revoke_refresh_after_rotation_revokes_newest(psu_factory, signer):
    tok = tokens(psu_factory())
    new = token_request({"grant_type": "refresh_token",
                         "refresh_token": tok["refresh_token"]}, SC).json()
    assert revoke_request({"token": new["refresh_token"]}, SC)\
        .status_code == 200
    assert api_get(signer, ACCOUNT_LIST, new["access_token"]).status_code \
        == 401


def test_revoke_with_wrong_hint_still_revokes(psu_factory, signer):
    tok = tokens(psu_factory())
    r = revoke_request({"token": tok["access_token"],
                        "token_type_hint": "refresh_token"}, SC)
    assert r.status_code == 200
    assert api_get(signer, ACCOUNT_LIST, tok["access_token"]).status_code \
        == 401


@pytest.mark.parametrize("t", [str(uuid.uuid4()), "garbage"])
def test_revoke_unknown_token_is_200(t):
    r = revoke_request({"token": t}, SC)
    assert r.status_code == 200


def test_revoke_needs_client_auth(psu_factory, signer):
    tok = tokens(psu_factory())
    r = revoke_request({"token": tok["access_token"]}, auth="")
    assert_invalid_client(r)
    r = revoke_request({"token": tok["access_token"]},
                       auth=basic_auth(SC.client_id, "wrong"))
    assert_invalid_client(r)
    assert api_get(signer, ACCOUNT_LIST, tok["access_token"]).status_code \
        == 200


def test_revoke_client_id_in_the_body(psu_factory, client_factory, signer):
    """A body client_id is the authenticated client's (as at the token
    endpoint); alone, over plain HTTP, it authenticates nobody (RFC 8705
    tls_client_auth needs the QWAC: tests/prod)."""
    tok = tokens(psu_factory())
    other = client_factory()
    r = revoke_request({"token": tok["access_token"],
                        "client_id": other.client_id}, SC)
    assert_invalid_client(r)
    r = revoke_request({"token": tok["access_token"],
                        "client_id": SC.client_id}, auth="")
    assert_invalid_client(r)
    assert api_get(signer, ACCOUNT_LIST, tok["access_token"]).status_code \
        == 200
    r = revoke_request({"token": tok["access_token"],
                        "client_id": SC.client_id}, SC)
    assert r.status_code == 200, r.text
    assert api_get(signer, ACCOUNT_LIST, tok["access_token"]).status_code \
        == 401


def test_revoke_other_clients_token_has_no_effect(psu_factory,
                                                  client_factory, signer):
    other = client_factory()
    tok = tokens(psu_factory())
    # RFC 7009 2.2: a token the caller may not revoke is answered like an
    # unknown one (200, nothing revealed) and stays valid.
    r = revoke_request({"token": tok["access_token"]}, other)
    assert r.status_code == 200, r.text
    assert api_get(signer, ACCOUNT_LIST, tok["access_token"]).status_code \
        == 200
    r = revoke_request({"token": tok["refresh_token"]}, other)
    assert r.status_code == 200, r.text
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, SC)
    assert r.status_code == 200, r.text


def test_revoke_missing_token_parameter(psu_factory):
    r = revoke_request({}, SC)
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_request"



GRANT = ("SELECT result, description, rotated FROM "
         "oauth_refresh_grant_bound(%s, %s, %s, %s, 900, NULL)")


def grant_row(cur, hashed, client_id):
    cur.execute(GRANT, (hashed, client_id, os.urandom(32), os.urandom(32)))
    return cur.fetchone()


def while_a_grant_is_open(dbinfo, hashed, client_id, rotated, second):
    """A refresh grant of the token with digest hashed, held open between
    its statement and its commit (the service's grant runs the same
    function); meanwhile second(cursor) on a connection of its own, in a
    thread, which must wait for the grant's lock. Returns what second
    returned, once the grant has committed, and that connection."""
    grant = psd2lib.db_connect(psd2lib.as_superuser(dbinfo))
    other = psd2lib.db_connect(psd2lib.as_superuser(dbinfo))
    grant.autocommit = False
    other.autocommit = True
    with grant.cursor() as cur:
        assert grant_row(cur, hashed, client_id) == ("ok", None, rotated)
    done = []

    def run():
        with other.cursor() as cur:
            done.append(second(cur))

    t = threading.Thread(target=run)
    t.start()
    with psd2lib.db_connect(psd2lib.as_superuser(dbinfo)) as watch:
        for _ in range(100):
            with watch.cursor() as cur:
                cur.execute("SELECT wait_event_type FROM pg_stat_activity "
                            "WHERE pid = %s", (other.get_backend_pid(),))
                if cur.fetchone()[0] == "Lock":
                    break
            time.sleep(0.05)
        else:
            pytest.fail("the second never waited for the grant")
    grant.commit()
    t.join(10)
    grant.close()
    assert done, "the second did not finish"
    return done[0], other


def family_rows(conn, hashed):
    """(kind, used, revoked) of every token of hashed's family."""
    with conn.cursor() as cur:
        cur.execute("SELECT kind, used_at IS NOT NULL, revoked_at IS NOT "
                    "NULL FROM token WHERE family = (SELECT family FROM "
                    "token WHERE token_hash = %s) ORDER BY kind",
                    (hashed,))
        return cur.fetchall()


def revoke(hashed, client_id):
    return lambda cur: cur.execute("SELECT oauth_revoke(%s, %s)",
                                   (hashed, client_id))


def test_revoke_waiting_for_a_refresh_takes_what_it_issued(psu_factory,
                                                           dbinfo):
    """A revocation that arrives while a refresh grant of the family is
    in flight revokes the tokens that grant issues too: it waits for the
    grant."""
    tok = tokens(psu_factory())
    spent = hashlib.sha256(tok["refresh_token"].encode()).digest()
    _, conn = while_a_grant_is_open(dbinfo, spent, SC.client_id, True,
                                    revoke(spent, SC.client_id))
    rows = family_rows(conn, spent)
    conn.close()
    # The code grant's pair and the grant's pair.
    assert len(rows) == 4, rows
    assert all(revoked for _, _, revoked in rows), rows


def test_same_refresh_token_twice_at_once(psu_factory, dbinfo):
    """Two grants of one refresh token at the same time: the second waits
    for the first (the spent token's row lock), then finds the token spent
    and revokes the family, what the first issued included (RFC 9700
    4.14.2)."""
    tok = tokens(psu_factory())
    spent = hashlib.sha256(tok["refresh_token"].encode()).digest()
    second, conn = while_a_grant_is_open(
        dbinfo, spent, SC.client_id, True,
        lambda cur: grant_row(cur, spent, SC.client_id))
    rows = family_rows(conn, spent)
    conn.close()
    assert second == ("invalid_grant", "The refresh token was already used.",
                      True)
    assert len(rows) == 4, rows
    assert all(revoked for _, _, revoked in rows), rows
    # Only the spent token is marked used.
    assert sum(used for _, used, _ in rows) == 1, rows


def test_revoke_waits_for_a_grant_without_rotation(psu_factory,
                                                   client_factory, dbinfo):
    """The same for a client without rotation (migration 192): its grant
    spends nothing, but holds its refresh token's row (FOR KEY SHARE)
    until it commits, so the revocation waits and takes the access token
    the grant issued."""
    c = client_factory()
    psd2lib.psd2ctl("tpp", "refresh-rotation", c.client_id, "off")
    tok = tokens(psu_factory(), client=c)
    kept = hashlib.sha256(tok["refresh_token"].encode()).digest()
    _, conn = while_a_grant_is_open(dbinfo, kept, c.client_id, False,
                                    revoke(kept, c.client_id))
    rows = family_rows(conn, kept)
    conn.close()
    # The code grant's pair and the grant's access token, none spent.
    assert [k for k, _, _ in rows] == ["access", "access", "refresh"], rows
    assert all(revoked and not used for _, used, revoked in rows), rows
