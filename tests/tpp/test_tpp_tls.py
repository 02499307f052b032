"""TLS with client certificates (production set-up): a listener
of tests/tpp/tls.conf on 127.0.0.1:18443 asks for a QWAC chained to the
sandbox CA, and the token endpoint binds access tokens to it (RFC 8705
x5t#S256). Codes come from the plain instance of this suite (same
database)."""

import base64
import hashlib
import os
import signal
import ssl
import socket
import subprocess
import time

import pytest
import requests

import psd2lib
from psd2lib import (basic_auth, db_connect, make_psu, run_code_flow,
                     sandbox_client)
from tpp_signing import Identity, sign_request

from conftest import PKI_DIR, SANDBOX_DIR

TLS_PORT = psd2lib.test_port("PSD2_TEST_TLS_PORT", 18443)
TLS_URL = "https://127.0.0.1:%d" % TLS_PORT
CA = os.path.join(SANDBOX_DIR, "ca", "ca.crt")
QWAC = (os.path.join(PKI_DIR, "qwac.crt"), os.path.join(PKI_DIR, "qwac.key"))
OTHER_CERT = (os.path.join(PKI_DIR, "all.crt"),
              os.path.join(PKI_DIR, "all.key"))
LIST = "/auth/v1/psd2/account/account-list"


def x5t(crt_path):
    der = Identity(crt_path, crt_path.replace(".crt", ".key")).der
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()) \
        .rstrip(b"=").decode()


@pytest.fixture(scope="module")
def tls_server(service_setup):
    if psd2lib.port_open(TLS_PORT):
        pytest.fail("port %d is taken by %s" % (
            TLS_PORT, psd2lib.port_holder(TLS_PORT)))
    log = open(os.path.join(psd2lib.LOG_DIR, "%s-psd2gate-tls.log" %
                            psd2lib.suite_label()), "wb")
    proc = subprocess.Popen(
        [os.path.join(psd2lib.bin_dir(), "psd2gate"), "-c",
         psd2lib.derived_conf("tests/tpp/tls.conf", TLS_PORT, "tls"),
         "-f", "-n", "-r"], cwd=psd2lib.TOP,
        env=psd2lib.sanitizer_env(), stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            r = requests.get(TLS_URL + "/health", cert=QWAC, verify=CA,
                             timeout=2)
            if r.status_code == 200:
                break
        except requests.RequestException:
            pass
        assert proc.poll() is None, "psd2gate (tls.conf) exited"
        time.sleep(0.2)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("TLS listener did not come up")
    yield proc
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    log.close()


@pytest.fixture(scope="module")
def db(dbinfo):
    c = db_connect(dbinfo)
    yield c
    c.close()


def bound_tokens(cert):
    """A code from the plain instance, exchanged over mTLS with cert."""
    client = sandbox_client()
    code, _, _, _ = run_code_flow(client, make_psu(1), "ACCOUNT_INFORMATION")
    r = requests.post(TLS_URL + "/auth/oauth/token", cert=cert, verify=CA,
                      timeout=30, data={
                          "grant_type": "authorization_code", "code": code,
                          "redirect_uri": client.redirect_uri},
                      headers={"Authorization": basic_auth(
                          client.client_id, client.secret)})
    assert r.status_code == 200, r.text
    return r.json()


def cnf_of(db, token):
    cur = db.cursor()
    cur.execute("SELECT cnf FROM token WHERE token_hash = %s",
                (hashlib.sha256(token.encode()).digest(),))
    return cur.fetchone()[0]


def signed_get(url, token, cert):
    ident = Identity.load(SANDBOX_DIR, "tpp")
    h = sign_request(ident)
    h["Authorization"] = "Bearer " + token
    return requests.get(url + LIST, headers=h, cert=cert, verify=CA,
                        timeout=30)


def test_handshake_needs_a_client_certificate(tls_server):
    ctx = ssl.create_default_context(cafile=CA)
    with socket.create_connection(("127.0.0.1", TLS_PORT), 5) as s:
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            with ctx.wrap_socket(s, server_hostname="localhost") as t:
                t.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                if not t.recv(100):
                    raise ConnectionError("closed")


def test_untrusted_client_certificate_is_refused(tls_server):
    untrusted = (os.path.join(PKI_DIR, "untrusted.crt"),
                 os.path.join(PKI_DIR, "untrusted.key"))
    with pytest.raises(requests.exceptions.RequestException):
        requests.get(TLS_URL + "/health", cert=untrusted, verify=CA,
                     timeout=5)


def test_token_is_bound_to_the_qwac(tls_server, db):
    tok = bound_tokens(QWAC)
    assert cnf_of(db, tok["access_token"]) == x5t(QWAC[0])
    # Refresh tokens stay unbound (RFC 8705 3, confidential clients).
    assert cnf_of(db, tok["refresh_token"]) is None
    r = signed_get(TLS_URL, tok["access_token"], QWAC)
    assert r.status_code == 200, r.text


def test_refresh_binds_to_the_certificate_of_the_refresh(tls_server, db):
    tok = bound_tokens(QWAC)
    client = sandbox_client()
    r = requests.post(TLS_URL + "/auth/oauth/token", cert=OTHER_CERT,
                      verify=CA, timeout=30, data={
                          "grant_type": "refresh_token",
                          "refresh_token": tok["refresh_token"]},
                      headers={"Authorization": basic_auth(
                          client.client_id, client.secret)})
    assert r.status_code == 200, r.text
    assert cnf_of(db, r.json()["access_token"]) == x5t(OTHER_CERT[0])


def test_plain_http_tokens_are_unbound(db, server):
    client = sandbox_client()
    code, _, _, _ = run_code_flow(client, make_psu(1), "ACCOUNT_INFORMATION")
    r = psd2lib.exchange_code(client, code)
    assert r.status_code == 200, r.text
    assert cnf_of(db, r.json()["access_token"]) is None


def test_bound_token_with_another_certificate_is_invalid(tls_server, server):
    tok = bound_tokens(QWAC)["access_token"]
    r = signed_get(TLS_URL, tok, OTHER_CERT)
    assert r.status_code == 401, r.text
    assert r.json()["error"] == "invalid_token"
    # Over plain HTTP there is no certificate at all.
    r = signed_get(server.url, tok, None)
    assert r.status_code == 401, r.text
    assert r.json()["error"] == "invalid_token"
