"""OAuth 2.0 authorization server metadata (RFC 8414) at
/.well-known/oauth-authorization-server: Authlib's RFC 8414 class
validates it, and an Authlib client configured from this document alone
runs the code flow with PKCE, the refresh grant, revocation and a signed
account list. The test instance sets no psd2_issuer: the issuer is the
request's own scheme and Host (production sets it; see test_production)."""

import os
import subprocess

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

import psd2lib
from psd2lib import PsuBrowser, make_client, make_psu

WELL_KNOWN = "/.well-known/oauth-authorization-server"


def metadata(base):
    r = requests.get(base + WELL_KNOWN, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/json"
    return r.json()


def test_document_is_valid_rfc8414(server):
    doc = metadata(server.url)
    AuthorizationServerMetadata(doc).validate()
    assert doc["issuer"] == server.url
    assert doc["authorization_endpoint"] == \
        server.url + "/auth/oauth/authorize"
    assert doc["token_endpoint"] == server.url + "/auth/oauth/token"
    assert doc["revocation_endpoint"] == server.url + "/auth/oauth/revoke"
    assert doc["response_types_supported"] == ["code"]
    assert doc["grant_types_supported"] == ["authorization_code",
                                            "refresh_token",
                                            "client_credentials"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["token_endpoint_auth_methods_supported"] == \
        ["client_secret_basic", "private_key_jwt"]
    for key in ("token_endpoint_auth_signing_alg_values_supported",
                "dpop_signing_alg_values_supported"):
        assert doc[key] == ["PS256", "ES256", "EdDSA"]
    assert sorted(doc["scopes_supported"]) == [
        "ACCOUNT_INFORMATION", "FUND_AVAILABILITY", "PAYMENT_INITIATION",
        "xs2a"]
    # Plain HTTP: no certificate-bound tokens, so no aliases.
    assert "mtls_endpoint_aliases" not in doc
    assert "tls_client_certificate_bound_access_tokens" not in doc


def test_a_host_header_that_is_no_host_is_refused(server):
    r = requests.get(server.url + WELL_KNOWN, timeout=10,
                     headers={"Host": "evil.example/x?y"})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_request"


def test_authlib_client_from_the_document_alone(server, signer):
    doc = metadata(server.url)
    meta = AuthorizationServerMetadata(doc)
    meta.validate()
    client = make_client(redirect_uris=("http://127.0.0.1:8000/callback",))
    psu = make_psu(1)
    sess = OAuth2Session(
        client.client_id, client.secret,
        scope=doc["scopes_supported"][0],
        redirect_uri=client.redirect_uri,
        code_challenge_method=doc["code_challenge_methods_supported"][0],
        token_endpoint_auth_method=meta[
            "token_endpoint_auth_methods_supported"][0],
        revocation_endpoint_auth_method=meta[
            "revocation_endpoint_auth_methods_supported"][0])
    verifier = os.urandom(32).hex()
    url, state = sess.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=verifier)
    b = PsuBrowser(server.url)
    b.login_to_consent(url, psu)
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    # RFC 9207 2.4: the client compares iss with the metadata's issuer.
    assert psd2lib.location_params(r)[1]["iss"] == [doc["issuer"]]
    tok = sess.fetch_token(meta["token_endpoint"],
                           authorization_response=r.headers["Location"],
                           state=state, code_verifier=verifier)
    assert tok["scope"] == "ACCOUNT_INFORMATION"
    psd2lib.register_tokens(tok, client)
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, tok["access_token"])
    assert r.status_code == 200, r.text
    assert [a["iban"] for a in r.json()["accounts"]] == \
        [psu.accounts[0][0]]
    new = sess.refresh_token(meta["token_endpoint"],
                             refresh_token=tok["refresh_token"])
    assert new["access_token"] != tok["access_token"]
    r = sess.revoke_token(meta["revocation_endpoint"],
                          token=new["refresh_token"],
                          token_type_hint="refresh_token")
    assert r.status_code == 200, r.text
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, new["access_token"])
    assert r.status_code == 401, r.text


def check(conf_text, tmp_path, drop=()):
    """psd2ctl check-settings of conf/test.conf with conf_text's settings
    in place of its own, and without the settings named in drop."""
    conf = tmp_path / "x.conf"
    base = open(os.path.join(psd2lib.TOP, "conf", "test.conf")).read()
    given = {ln.split()[0] for ln in conf_text.splitlines() if ln.strip()}
    given |= set(drop)
    base = "\n".join(ln for ln in base.splitlines()
                     if not ln.split()[:1] or ln.split()[0] not in given) + \
        "\n"
    conf.write_text(base.replace("include common.conf", "include %s" %
                                 os.path.join(psd2lib.TOP, "conf",
                                              "common.conf")) + conf_text)
    return subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl"), "-c",
                           str(conf), "check-settings"], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=30)


@pytest.mark.parametrize("value", [
    "http://bank.example", "https://bank.example/", "https://bank.example/x",
    "https://bank.example?x", "https://bank.example#f", "https://",
    "ftp://bank.example", "http://127.0.0.1.evil.example",
    "https://bank.example@evil.example"])
def test_issuer_must_be_an_https_origin(tmp_path, value):
    p = check("psd2_issuer %s\n" % value, tmp_path)
    assert p.returncode == 1
    assert "psd2_issuer: \"%s\" is not https://host" % value in p.stderr


def test_issuer_is_required_in_production(tmp_path):
    p = check("psd2_environment production\n", tmp_path)
    assert p.returncode == 1
    assert "psd2_issuer is required in production" in p.stderr
    p = check("psd2_environment production\n"
              "psd2_issuer https://psd2.bank.example:8443\n"
              "psd2_mtls_base https://api.psd2.bank.example\n"
              "psd2_webauthn_origin https://psd2.bank.example:8443\n"
              "psd2_staff_webauthn_origin https://staff.bank.internal\n",
              tmp_path)
    assert p.returncode == 0, p.stderr


def test_staff_webauthn_origin_is_https_in_production(tmp_path):
    """Staff security keys on http://localhost are for the sandbox too."""
    p = check("psd2_environment production\n"
              "psd2_issuer https://psd2.bank.example\n"
              "psd2_webauthn_origin https://psd2.bank.example\n", tmp_path)
    assert p.returncode == 1
    assert "psd2_staff_webauthn_origin must be https in production" in \
        p.stderr


@pytest.mark.parametrize("missing", ["psd2_staff_webauthn_origin",
                                     "psd2_staff_key_roots",
                                     "psd2_staff_key_aaguids"])
def test_staff_key_settings_go_together(tmp_path, missing):
    p = check("", tmp_path, drop=[missing])
    assert p.returncode == 1
    assert "go together: all three, or none" in p.stderr
    p = check("", tmp_path, drop=["psd2_staff_webauthn_origin",
                                  "psd2_staff_key_roots",
                                  "psd2_staff_key_aaguids"])
    assert p.returncode == 0, p.stderr


def test_webauthn_origin_is_https_in_production(tmp_path):
    """Passkeys on http://localhost are for trying the sandbox."""
    p = check("psd2_environment production\n"
              "psd2_issuer https://psd2.bank.example\n"
              "psd2_webauthn_origin http://localhost:8080\n", tmp_path)
    assert p.returncode == 1
    assert "psd2_webauthn_origin must be https in production" in p.stderr
