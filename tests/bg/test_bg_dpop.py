"""DPoP (RFC 9449) on the standard interface: the TPP's own token of the
client credentials grant bound to its DPoP key, a consent created with
it (the DPoP scheme, a proof signed with the request), and the
standard interface's refusals: TOKEN_INVALID with WWW-Authenticate
DPoP, and the proof used once."""

import psd2lib
from psd2lib import MAIN_URL, make_client, token_request
from tpp_keys import DPoPKey

from conftest import BG, Api, tpp_error

CONSENTS = BG + "/consents"
TOKEN_URL = MAIN_URL + "/auth/oauth/token"
IP = {"PSU-IP-Address": "192.0.2.10", "TPP-Redirect-URI":
      "https://tpp.example/callback"}
BODY = {"access": {"allPsd2": "allAccounts"}, "recurringIndicator": True,
        "validUntil": "9999-12-31", "frequencyPerDay": 4,
        "combinedServiceIndicator": False}


def dpop_tpp_token(client, key):
    data = {"grant_type": "client_credentials", "scope": "xs2a"}
    r = token_request(data, client, headers={
        "DPoP": key.proof("POST", TOKEN_URL)})
    assert r.status_code == 400 and r.json()["error"] == "use_dpop_nonce"
    key.learn(r)
    r = token_request(data, client, headers={
        "DPoP": key.proof("POST", TOKEN_URL)})
    assert r.status_code == 200, r.text
    assert r.json()["token_type"] == "DPoP"
    key.learn(r)
    return r.json()["access_token"]


def create(api, token, proof=None, scheme="DPoP"):
    h = dict(IP)
    if proof is not None:
        h["DPoP"] = proof
    return api.call("POST", CONSENTS, body=BODY, headers=h,
                    authorization="%s %s" % (scheme, token))


def test_consent_created_with_a_dpop_bound_token(signer):
    client = make_client()
    api = Api(signer.for_org(client.org_id))
    key = DPoPKey("ES256")
    t = dpop_tpp_token(client, key)
    url = MAIN_URL + CONSENTS
    r = create(api, t, key.proof("POST", url, token=t))
    assert r.status_code == 201, r.text
    assert r.headers["DPoP-Nonce"]
    # Refusals: no proof; the token as a bearer token; a replayed proof.
    r = create(api, t)
    tpp_error(r, 401, "TOKEN_INVALID", "DPoP")
    assert r.headers["WWW-Authenticate"].startswith(
        'DPoP error="invalid_dpop_proof"')
    tpp_error(create(api, t, scheme="Bearer"), 401, "TOKEN_INVALID")
    proof = key.proof("POST", url, token=t)
    assert create(api, t, proof).status_code == 201
    tpp_error(create(api, t, proof), 401, "TOKEN_INVALID")
    # A stale nonce: use_dpop_nonce, with a fresh one.
    r = create(api, t, key.proof("POST", url, token=t, nonce="old"))
    tpp_error(r, 401, "TOKEN_INVALID", "DPoP")
    assert r.headers["WWW-Authenticate"].startswith(
        'DPoP error="use_dpop_nonce"')
    key.learn(r)
    assert create(api, t, key.proof("POST", url, token=t)) \
        .status_code == 201


def test_the_sandbox_tpp_token_stays_a_bearer_token(signer):
    """Without a proof at the token endpoint nothing changes."""
    client = psd2lib.sandbox_client()
    r = token_request({"grant_type": "client_credentials"}, client)
    assert r.status_code == 200 and r.json()["token_type"] == "bearer"
    api = Api(signer.for_org(client.org_id))
    assert create(api, r.json()["access_token"], scheme="Bearer") \
        .status_code == 201
