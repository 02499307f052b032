"""TPP identity on the API: every step of the verification on
GET /auth/v1/psd2/account/account-list (and account-balance for a body),
with the exact status and Berlin Group code of each failure."""

import os

import pytest
import requests

import psd2lib
from psd2lib import (MAIN_URL, exchange_code, make_psu, run_code_flow,
                     sandbox_client)
from tpp_signing import Identity, b64, http_date, sign_request

from conftest import PKI_DIR, SANDBOX_DIR

LIST = MAIN_URL + "/auth/v1/psd2/account/account-list"
BALANCE = MAIN_URL + "/auth/v1/psd2/account/account-balance"


@pytest.fixture(scope="module")
def ids():
    out = {n: Identity.load(PKI_DIR, n) for n in (
        "all", "pi", "ec", "expired", "noqc", "kuenc", "revoked", "other",
        "untrusted")}
    out["sandbox"] = Identity.load(SANDBOX_DIR, "tpp")
    return out


@pytest.fixture(scope="module")
def token(service_setup):
    """An access token of the sandbox TPP (PSDDE-BAFIN-999999)."""
    psu = make_psu(1)
    code, _, _, _ = run_code_flow(sandbox_client(), psu,
                                  "ACCOUNT_INFORMATION")
    r = exchange_code(sandbox_client(), code)
    assert r.status_code == 200, r.text
    return r.json()["access_token"], psu


def get(url, tok, headers, body=b""):
    h = requests.structures.CaseInsensitiveDict(headers)
    h["Authorization"] = "Bearer " + tok
    h.setdefault("Content-Type", "application/json")
    return requests.get(url, headers=h, data=body or None, timeout=30)


def call(ident, tok, url=LIST, body=b"", **kw):
    return get(url, tok, sign_request(ident, body=body, **kw), body)


def expect(r, status, code, text=None):
    assert r.status_code == status, r.text
    msg = r.json()["tppMessages"][0]
    assert msg["code"] == code, r.text
    assert msg["category"] == "ERROR"
    if text is not None:
        assert text in msg["text"], r.text
    return msg


# --- good paths --------------------------------------------------------

def test_sandbox_certificate_rsa_sha256(ids, token):
    r = call(ids["sandbox"], token[0])
    assert r.status_code == 200, r.text
    assert "accounts" in r.json()


@pytest.mark.parametrize("alg,digest", [("rsa-sha256", "sha-256"),
                                        ("rsa-sha512", "SHA-512")])
def test_rsa_algorithms_and_digests(ids, token, alg, digest):
    r = call(ids["all"], token[0], algorithm=alg, digest_alg=digest)
    assert r.status_code == 200, r.text


def test_ecdsa_p256(ids, token):
    r = call(ids["ec"], token[0], algorithm="ecdsa-sha256")
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("alg,who", [("RS256", "all"), ("PS256", "all"),
                                     ("ES256", "ec")])
def test_detached_jws(ids, token, alg, who):
    r = call(ids[who], token[0], form=alg)
    assert r.status_code == 200, r.text


def test_berlin_group_header_name_and_pem(ids, token):
    ident = ids["all"]
    pem = ident.cert_pem.decode().replace("\n", "")
    r = call(ident, token[0], cert_header="TPP-Signature-Certificate",
             cert_b64=pem)
    assert r.status_code == 200, r.text


def test_signed_psu_id(ids, token):
    r = call(ids["all"], token[0], headers={"PSU-ID": "anna"})
    assert r.status_code == 200, r.text


# --- step 1: presence and form ------------------------------------------

def test_missing_signature(ids, token):
    h = sign_request(ids["all"])
    del h["signature"]
    expect(get(LIST, token[0], h), 401, "SIGNATURE_MISSING")


def test_missing_certificate(ids, token):
    h = sign_request(ids["all"])
    del h["TPP-Signing-Certificate"]
    expect(get(LIST, token[0], h), 401, "CERTIFICATE_MISSING")


@pytest.mark.parametrize("header,value", [
    ("X-Request-ID", "not-a-uuid"),
    ("Digest", "MD5=rL0Y20zC+Fzt72VPzMSk2A=="),
    ("Digest", "SHA-256=abc"),
    ("Date", "2024-01-01T00:00:00Z"),
    ("TPP-Signing-Certificate", "bm90IGEgY2VydGlmaWNhdGU="),
])
def test_malformed_header(ids, token, header, value):
    h = sign_request(ids["all"])
    h[header] = value
    msg = expect(get(LIST, token[0], h), 400, "FORMAT_ERROR")
    assert header.lower() in msg["text"].lower(), msg


@pytest.mark.parametrize("header", ["X-Request-ID", "Digest", "Date"])
def test_missing_header(ids, token, header):
    h = sign_request(ids["all"])
    del h[header]
    msg = expect(get(LIST, token[0], h), 400, "FORMAT_ERROR")
    assert header.lower() in msg["text"].lower(), msg


def test_malformed_signature_header(ids, token):
    h = sign_request(ids["all"])
    h["signature"] = 'keyId="SN=1,CA=CN=x",signature="%%%"'
    expect(get(LIST, token[0], h), 400, "FORMAT_ERROR", "signature")


def test_bearer_is_checked_first(ids):
    h = sign_request(ids["all"])
    del h["signature"]
    r = get(LIST, "00000000-0000-4000-8000-000000000000", h)
    assert r.status_code == 401
    assert r.json()["error"] == "invalid_token"


# --- step 2: date ----------------------------------------------------------

def test_date_ten_minutes_old(ids, token):
    expect(call(ids["all"], token[0], date=http_date(-600)), 400,
           "TIMESTAMP_INVALID")


def test_date_ten_minutes_ahead(ids, token):
    expect(call(ids["all"], token[0], date=http_date(600)), 400,
           "TIMESTAMP_INVALID")


# --- step 3: digest ----------------------------------------------------------

def test_body_changed_after_signing(ids, token):
    body = b'{"referenceId":"x"}'
    h = sign_request(ids["all"], body=body)
    msg = expect(get(BALANCE, token[0], h, b'{"referenceId":"y"}'), 401,
                 "SIGNATURE_INVALID")
    assert "digest" in msg["text"].lower()


def test_body_added_after_signing(ids, token):
    h = sign_request(ids["all"])
    expect(get(LIST, token[0], h, b"{}"), 401, "SIGNATURE_INVALID",
           "digest")


# --- step 4: certificate -----------------------------------------------------

@pytest.mark.parametrize("who,code", [
    ("expired", "CERTIFICATE_EXPIRED"),
    ("noqc", "CERTIFICATE_INVALID"),
    ("kuenc", "CERTIFICATE_INVALID"),
    ("untrusted", "CERTIFICATE_INVALID"),
    ("revoked", "CERTIFICATE_BLOCKED"),
])
def test_bad_certificates(ids, token, who, code):
    expect(call(ids[who], token[0]), 401, code)


def test_token_of_tpp_x_with_certificate_of_tpp_y(ids, token):
    # The certificate of PSDDE-BAFIN-888888 is valid in itself.
    expect(call(ids["other"], token[0]), 401, "CERTIFICATE_INVALID")


# --- step 5: role -------------------------------------------------------------

def test_missing_role(ids, token):
    msg = expect(call(ids["pi"], token[0]), 403, "SERVICE_BLOCKED")
    assert "PSP_AI" in msg["text"], msg


# --- step 6: signature ----------------------------------------------------------

def test_header_changed_after_signing(ids, token):
    h = sign_request(ids["all"], headers={"PSU-ID": "anna"})
    h["PSU-ID"] = "bram"
    expect(get(LIST, token[0], h), 401, "SIGNATURE_INVALID")


def test_request_id_changed_after_signing(ids, token):
    h = sign_request(ids["all"])
    h["X-Request-ID"] = "5f1d3c2b-0a9e-4d8c-b7a6-958473625140"
    expect(get(LIST, token[0], h), 401, "SIGNATURE_INVALID")


def test_signature_by_another_key(ids, token):
    expect(call(ids["all"], token[0], key=ids["pi"]), 401,
           "SIGNATURE_INVALID")


def test_key_id_naming_another_certificate(ids, token):
    expect(call(ids["all"], token[0], key_id=ids["pi"].key_id), 401,
           "SIGNATURE_INVALID", "keyId")


def test_key_id_in_openssl_order_is_the_same_certificate(ids, token):
    ident = ids["all"]
    dn = ",".join(reversed(ident.cert.issuer.rfc4514_string().split(",")))
    r = call(ident, token[0],
             key_id="SN=%x,CA=%s" % (ident.cert.serial_number, dn))
    assert r.status_code == 200, r.text


def test_signed_headers_must_include_x_request_id(ids, token):
    expect(call(ids["all"], token[0], names=["digest", "date"]), 401,
           "SIGNATURE_INVALID", "x-request-id")


def test_sent_psu_id_must_be_signed(ids, token):
    expect(call(ids["all"], token[0], headers={"PSU-ID": "anna"},
                names=["digest", "x-request-id", "date"]), 401,
           "SIGNATURE_INVALID", "psu-id")


def test_algorithm_must_fit_the_key(ids, token):
    expect(call(ids["ec"], token[0], algorithm="rsa-sha256", key=ids["all"]),
           401, "SIGNATURE_INVALID")


def test_jws_x5t_of_another_certificate(ids, token):
    expect(call(ids["all"], token[0], form="RS256", x5t=ids["pi"].x5t), 401,
           "SIGNATURE_INVALID", "x5t#S256")


def test_jws_by_another_key(ids, token):
    expect(call(ids["all"], token[0], form="PS256", key=ids["pi"]), 401,
           "SIGNATURE_INVALID")


# --- step 7: replay ---------------------------------------------------------------

def test_replayed_request_id(ids, token):
    rid = "0c3f3a52-4b8f-4f62-9d1e-%012x" % (os.getpid() * 7919 % 2 ** 48)
    r = call(ids["all"], token[0], request_id=rid)
    assert r.status_code == 200, r.text
    msg = expect(call(ids["all"], token[0], request_id=rid), 400,
                 "FORMAT_ERROR", "x-request-id already used")


def test_forged_request_does_not_burn_the_id(ids, token):
    import uuid
    rid = str(uuid.uuid4())
    expect(call(ids["all"], token[0], request_id=rid, key=ids["pi"]), 401,
           "SIGNATURE_INVALID")
    r = call(ids["all"], token[0], request_id=rid)
    assert r.status_code == 200, r.text
