"""Payment initiation with a DPoP-bound token (RFC 9449): the TPP's
token for PAYMENT_INITIATION bound to its key at the token endpoint; the
initiation and the status then need the DPoP scheme and a fresh proof of
that key (signed with the request), the same token as Bearer or with
another key's proof is refused, and a proof is spent once."""

from psd2lib import MAIN_URL, run_code_flow, token_request
from tpp_keys import DPoPKey, dpop_token_request

from conftest import REDIRECT, SCT, payment_body

TOKEN_URL = MAIN_URL + "/auth/oauth/token"


def dpop_payer(payer_factory, key):
    """A payer whose token is bound to key."""
    payer = payer_factory(device=False)
    code, _, _, _ = run_code_flow(payer.client, payer.psu,
                                  "PAYMENT_INITIATION",
                                  accounts=[payer.iban])
    r = dpop_token_request(key, {"grant_type": "authorization_code",
                                 "code": code,
                                 "redirect_uri": payer.client.redirect_uri},
                           payer.client, token_request, TOKEN_URL)
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP", r.text
    payer.token = r.json()["access_token"]
    return payer


def dpop_call(api, payer, key, method, path, body=None, proof=None,
              headers=None):
    """A signed call with the DPoP scheme and a proof of key (once more
    with the bank's nonce when it asks for one)."""
    url = MAIN_URL + path
    for _ in range(2):
        h = {"Authorization": "DPoP " + payer.token,
             "DPoP": proof or key.proof(method, url, token=payer.token),
             "PSU-IP-Address": "192.0.2.10"}
        h.update(headers or {})
        r = api.call(method, path, None, body, headers=h,
                     signer=api.signer.for_token(payer.token))
        key.learn(r)
        if r.status_code != 401 or proof is not None or \
                "use_dpop_nonce" not in r.headers.get("WWW-Authenticate",
                                                      ""):
            return r
    return r


def test_initiation_and_status_with_a_dpop_bound_token(api, db,
                                                       payer_factory):
    key = DPoPKey("ES256")
    payer = dpop_payer(payer_factory, key)
    r = dpop_call(api, payer, key, "POST", SCT, payment_body(payer),
                  headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    assert r.headers["DPoP-Nonce"]
    pid = r.json()["paymentId"]
    r = dpop_call(api, payer, key, "GET", "%s/%s/status" % (SCT, pid))
    assert r.status_code == 200, r.text
    assert r.json()["transactionStatus"] == "RCVD"
    # The same token as a bearer token, or with another key's proof.
    r = api.get("%s/%s/status" % (SCT, pid), payer.token)
    assert r.status_code == 401, r.text
    # Another key's proof: the token is not bound to it (as at the
    # account list, tests/api/test_dpop.py).
    other = DPoPKey("ES256")
    other.nonce = key.nonce
    r = dpop_call(api, payer, other, "GET", "%s/%s/status" % (SCT, pid))
    assert r.status_code == 401, r.text
    assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]


def test_a_payment_proof_is_spent_once(api, db, payer_factory):
    key = DPoPKey("EdDSA")
    payer = dpop_payer(payer_factory, key)
    # A first call learns the nonce.
    r = dpop_call(api, payer, key, "POST", SCT, payment_body(payer),
                  headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    proof = key.proof("POST", MAIN_URL + SCT, token=payer.token)
    r = dpop_call(api, payer, key, "POST", SCT, payment_body(payer),
                  proof=proof, headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    r = dpop_call(api, payer, key, "POST", SCT, payment_body(payer),
                  proof=proof, headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 401, r.text
    assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]
    n = db.cursor()
    n.execute("SELECT count(*) FROM payment p JOIN psu u ON u.id = "
              "p.psu_id WHERE u.username = %s", (payer.psu.username,))
    assert n.fetchone()[0] == 2
