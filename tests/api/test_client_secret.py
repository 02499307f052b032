"""Client secrets are stored as HMAC-SHA256 under a server key (the client
key file, outside the database) over a per-secret random salt and the
secret: operators may choose weak secrets, and a copy of the database
alone must not let anyone test guesses. Rows of the earlier unsalted
SHA-256 form are refused, with a log line naming the client and the
command, until `psd2ctl tpp rehash` converts them (it needs no secret)."""

import hashlib
import secrets

import pytest

import psd2lib
from psd2lib import (CtlError, basic_auth, db_connect, make_client, psd2ctl,
                     run_code_flow, token_request)
from test_basics import _log_lines_with


def client_row(dbinfo, client_id):
    c = psd2lib.db_connect(dbinfo)
    try:
        cur = c.cursor()
        cur.execute("SELECT secret_hash, secret_salt, secret_key_id FROM "
                    "oauth_client WHERE client_id = %s", (client_id,))
        row = cur.fetchone()
        return (bytes(row[0]), row[1] and bytes(row[1]), row[2])
    finally:
        c.close()


def db_exec(dbinfo, sql, *args):
    c = psd2lib.db_connect(dbinfo)
    try:
        c.cursor().execute(sql, args)
    finally:
        c.close()


def assert_token_ok(client, psu):
    code, _, _, _ = run_code_flow(client, psu)
    r = token_request({"grant_type": "authorization_code", "code": code,
                       "redirect_uri": client.redirect_uri}, client)
    assert r.status_code == 200, r.text
    return r


def test_chosen_secret_is_salted_and_keyed(dbinfo, psu_factory):
    a = make_client(secret="weak-secret-1")
    b = make_client(secret="weak-secret-1")
    ha, sa, ka = client_row(dbinfo, a.client_id)
    hb, sb, kb = client_row(dbinfo, b.client_id)
    assert len(ha) == 32 and len(sa) == 16 and ka
    assert ha != hashlib.sha256(b"weak-secret-1").digest()
    assert sa != sb and ha != hb
    assert_token_ok(a, psu_factory())
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": "x"},
                      auth=basic_auth(a.client_id, "weak-secret-2"))
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"


def test_tpp_add_prints_the_secret_once_and_stores_no_plain_digest(dbinfo):
    c = make_client()
    h, s, k = client_row(dbinfo, c.client_id)
    assert h != hashlib.sha256(c.secret.encode()).digest()
    assert s and k
    assert c.secret not in psd2ctl("tpp", "list").stdout


def test_sandbox_client_is_keyed(dbinfo):
    h, s, k = client_row(dbinfo, "sandbox-tpp")
    assert s and k
    assert h != hashlib.sha256(b"sandbox-secret").digest()


def test_legacy_row_is_refused_with_a_log_line_until_rehashed(
        server, dbinfo, psu_factory):
    secret = "legacy-secret-9"
    c = make_client(secret=secret)
    db_exec(dbinfo, "UPDATE oauth_client SET secret_hash = %s, "
            "secret_salt = NULL, secret_key_id = NULL WHERE client_id = %s",
            hashlib.sha256(secret.encode()).digest(), c.client_id)
    since = server.log_size()
    code, _, _, _ = run_code_flow(c, psu_factory())
    r = token_request({"grant_type": "authorization_code", "code": code,
                       "redirect_uri": c.redirect_uri}, c)
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"
    # Waited for by its own words: other lines may name the client first.
    lines = _log_lines_with(server, "unsalted form", since)
    assert any(c.client_id in ln and "psd2ctl tpp rehash" in ln
               for ln in lines), server.tail(since=since)
    assert secret not in server.log_text(since)
    # an upgrade (migrate) says so too
    p = psd2ctl("migrate")
    assert "unsalted form are refused" in p.stderr
    assert "psd2ctl tpp rehash" in p.stderr
    out = psd2ctl("tpp", "rehash").stdout
    assert "rehashed" in out
    h, s, k = client_row(dbinfo, c.client_id)
    assert s and k and h != hashlib.sha256(secret.encode()).digest()
    assert_token_ok(c, psu_factory())
    # the conversion is an audit row; a second run changes nothing
    conn = psd2lib.db_connect(dbinfo)
    try:
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM audit_log WHERE action = "
                    "'tpp.client_rehash' AND detail->>'client_id' = %s",
                    (c.client_id,))
        assert cur.fetchone()[0] == 1
    finally:
        conn.close()
    again = client_row(dbinfo, c.client_id)
    psd2ctl("tpp", "rehash")
    assert client_row(dbinfo, c.client_id) == again


def test_tpp_add_refuses_an_empty_secret():
    try:
        psd2ctl("tpp", "add", "--name", "x", "--org-id", "PSDDE-BAFIN-1",
                "--redirect-uri", "https://tpp.example/cb", "--secret", "")
    except CtlError:
        return
    raise AssertionError("an empty secret was accepted")


@pytest.mark.parametrize("uri", [
    "http://tpp.example/cb", "http://127.0.0.1.evil.example/cb",
    "http://localhost@evil.example/cb", "https://tpp.example/cb#frag"])
def test_tpp_add_refuses_a_redirect_uri_a_client_may_not_have(uri, dbinfo):
    """https, or http on the loopback outside production
    (src/common/redirect_uri.h); the sandbox takes loopback http."""
    org = "PSDDE-BAFIN-%d" % secrets.randbelow(10 ** 9)
    p = psd2ctl("tpp", "add", "--name", "x", "--org-id", org,
                "--redirect-uri", uri, check=False)
    assert p.returncode != 0 and "redirect URI must be https" in p.stderr
    with db_connect(dbinfo) as c, c.cursor() as cur:
        cur.execute("SELECT count(*) FROM tpp WHERE org_id = %s", (org,))
        assert cur.fetchone()[0] == 0
    psd2ctl("tpp", "add", "--name", "x", "--org-id", org,
            "--redirect-uri", "http://[::1]:8000/cb")
