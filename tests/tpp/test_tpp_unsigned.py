"""Unsigned requests. psd2_signing_required is on unless a
configuration turns it off explicitly, and an unsigned request never
holds a PSD2 role it has not proven: with signing off it holds only the
roles psd2_unsigned_roles names (none by default). It still acts only as
the TPP of its bearer token (the token decides the consent; there is no
certificate to compare), and a signed request is verified all the same.

Each case runs its own psd2gate (a derived conf/test.conf) on
$PSD2_TEST_RL_PORT, one after the other."""

import json
import os
import uuid

import pytest
import requests

import psd2lib
import psd2_fixtures
from psd2lib import exchange_code, make_psu, run_code_flow, sandbox_client
from tpp_signing import Identity, sign_request

from conftest import PKI_DIR, SANDBOX_DIR

PORT = psd2lib.RATELIMIT_PORT
BASE = "http://127.0.0.1:%d" % PORT
LIST = BASE + "/auth/v1/psd2/account/account-list"
FUNDS = BASE + "/auth/v1/psd2/funds-confirmations"


def instance(name, extra):
    """conf/test.conf on PORT without its psd2_signing_required line, plus
    the lines of extra."""
    conf = psd2lib.derived_conf("conf/test.conf", PORT, name)
    with open(conf) as f:
        lines = [ln for ln in f
                 if ln.split()[:1] != ["psd2_signing_required"]]
    lines += [ln + "\n" for ln in extra]
    lines.append("psd2_trust_dir %s\n" % os.path.join(SANDBOX_DIR, "trust"))
    with open(conf, "w") as f:
        f.writelines(lines)
    return psd2_fixtures._start(conf, PORT, name, None)


@pytest.fixture(scope="module")
def tok(service_setup):
    """An AIS token of the sandbox TPP and the IBAN of its account."""
    psu = make_psu(1)
    code, _, _, _ = run_code_flow(sandbox_client(), psu,
                                  "ACCOUNT_INFORMATION")
    r = exchange_code(sandbox_client(), code)
    assert r.status_code == 200, r.text
    return r.json()["access_token"], psu.accounts[0][0]


@pytest.fixture(scope="module")
def sandbox():
    return Identity.load(SANDBOX_DIR, "tpp")


def unsigned(url, token, body=b"", method="GET"):
    h = {"Authorization": "Bearer " + token,
         "Content-Type": "application/json",
         "X-Request-ID": str(uuid.uuid4())}
    return requests.request(method, url, headers=h, data=body or None,
                            timeout=30)


def signed(ident, url, token, **kw):
    h = sign_request(ident, **kw)
    h["Authorization"] = "Bearer " + token
    return requests.get(url, headers=h, timeout=30)


def funds_body(iban):
    return json.dumps({"account": {"iban": iban}, "instructedAmount": {
        "currency": "EUR", "amount": "1.00"}}).encode()


def tpp_msg(r, status, code):
    assert r.status_code == status, r.text
    body = r.json()
    assert list(body) == ["tppMessages"], body
    assert body["tppMessages"][0]["code"] == code, body
    return body["tppMessages"][0]["text"]


@pytest.fixture
def stop_after():
    started = []
    yield started
    for srv in started:
        psd2_fixtures._stop(srv)


def test_signing_is_required_by_default(tok, stop_after):
    stop_after.append(instance("unsigned-default", []))
    text = tpp_msg(unsigned(LIST, tok[0]), 401, "SIGNATURE_MISSING")
    assert "must be signed" in text


def test_signing_off_grants_no_role(tok, sandbox, stop_after):
    stop_after.append(instance("unsigned-off", [
        "psd2_signing_required no"]))
    text = tpp_msg(unsigned(LIST, tok[0]), 401, "SIGNATURE_MISSING")
    assert text == ("The request is not signed, so it proves no PSD2 "
                    "role, and this service needs PSP_AI: sign it with the "
                    "TPP's QSealC.")
    tpp_msg(unsigned(FUNDS, tok[0], funds_body(tok[1]), "POST"), 401,
            "SIGNATURE_MISSING")
    # A signed request is verified as ever, and then holds its roles.
    assert signed(sandbox, LIST, tok[0]).status_code == 200
    tpp_msg(signed(sandbox, LIST, tok[0], key=Identity.load(PKI_DIR, "pi")),
            401, "SIGNATURE_INVALID")


def test_signing_off_with_named_roles(tok, sandbox, stop_after):
    stop_after.append(instance("unsigned-ai", [
        "psd2_signing_required no", "psd2_unsigned_roles PSP_AI"]))
    r = unsigned(LIST, tok[0])
    assert r.status_code == 200, r.text
    # The token's TPP and consent, nothing else.
    assert [a["iban"] for a in r.json()["accounts"]] == [tok[1]]
    # PSP_IC was not granted: funds confirmation needs it.
    text = tpp_msg(unsigned(FUNDS, tok[0], funds_body(tok[1]), "POST"), 401,
                   "SIGNATURE_MISSING")
    assert "PSP_IC" in text
    # The certificate of another TPP is refused although signing is off.
    tpp_msg(signed(Identity.load(PKI_DIR, "other"), LIST, tok[0]), 401,
            "CERTIFICATE_INVALID")
    # A bad bearer token is still answered first.
    r = unsigned(LIST, str(uuid.uuid4()))
    assert r.status_code == 401 and r.json()["error"] == "invalid_token"
