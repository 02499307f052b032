"""DPoP (RFC 9449): a proof at the token endpoint binds the access token
to the client's key (token_type DPoP); the account list then takes the
token only with the DPoP scheme and a fresh proof of that key (ath,
htm, htu, iat, this server's nonce), signed along with the request; a
proof is used once; every refusal answers what RFC 9449 names."""

import time

import pytest
import requests
from authlib.jose import JsonWebKey

import psd2lib
from psd2lib import (ACCOUNT_LIST, MAIN_URL, db_connect, run_code_flow,
                     token_request)
from tpp_keys import DPoPKey, b64url_sha256, dpop_token_request, new_key

TOKEN_URL = MAIN_URL + "/auth/oauth/token"


def token_with(key, data, client, proof=None):
    """A token request with a DPoP proof (a fresh one of key, with the
    nonce the bank asks for, or the given proof, sent once)."""
    if proof is None:
        return dpop_token_request(key, data, client, token_request,
                                  TOKEN_URL)
    r = token_request(data, client, headers={"DPoP": proof})
    key.learn(r)
    return r


def account_list(signer, token, key=None, proof=None, scheme="DPoP",
                 url=MAIN_URL + ACCOUNT_LIST, sign_dpop=True):
    h = {"Content-Type": "application/json",
         "Authorization": "%s %s" % (scheme, token)}
    if key is not None or proof is not None:
        h["DPoP"] = proof or key.proof("GET", url, token=token)
    signer = signer.for_token(token)
    if not sign_dpop:
        return _signed_without_dpop(signer, url, h)
    r = signer.request("GET", url, headers=h, timeout=10)
    if key is not None:
        key.learn(r)
    return r


def _signed_without_dpop(signer, url, h):
    proof = h.pop("DPoP")
    signed = signer.headers("GET", url, headers=h)
    signed["DPoP"] = proof
    return requests.get(url, headers=signed, timeout=10)


def dpop_code_token(client, psu, key):
    code, _, _, _ = run_code_flow(client, psu)
    r = token_with(key, {"grant_type": "authorization_code", "code": code,
                         "redirect_uri": client.redirect_uri}, client)
    assert r.status_code == 200, r.text
    return r.json()


def cnf_of(dbinfo, token):
    import hashlib
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("SELECT cnf FROM token WHERE token_hash = %s",
                    (hashlib.sha256(token.encode()).digest(),))
        return cur.fetchone()[0]


def assert_dpop_401(r, error):
    assert r.status_code == 401, (r.status_code, r.text)
    assert r.headers["WWW-Authenticate"].startswith(
        'DPoP error="%s"' % error), r.headers["WWW-Authenticate"]
    assert r.json()["error"] == error


def test_token_endpoint_asks_for_a_nonce_then_binds(client_factory,
                                                    psu_factory, dbinfo):
    c = client_factory()
    key = DPoPKey("ES256")
    code, _, _, _ = run_code_flow(c, psu_factory())
    data = {"grant_type": "authorization_code", "code": code,
            "redirect_uri": c.redirect_uri}
    r = token_request(data, c, headers={"DPoP": key.proof("POST",
                                                          TOKEN_URL)})
    assert r.status_code == 400 and r.json()["error"] == "use_dpop_nonce"
    assert r.headers["DPoP-Nonce"]
    key.learn(r)
    # The refusal spent neither the code nor anything else.
    r = token_request(data, c, headers={"DPoP": key.proof("POST",
                                                          TOKEN_URL)})
    assert r.status_code == 200, r.text
    tok = r.json()
    assert tok["token_type"] == "DPoP"
    assert r.headers["DPoP-Nonce"]
    assert cnf_of(dbinfo, tok["access_token"]) == "jkt:" + key.thumbprint()


@pytest.mark.parametrize("alg", ["PS256", "ES256", "EdDSA"])
def test_account_list_with_a_dpop_bound_token(client_factory, psu_factory,
                                              signer, alg):
    c = client_factory()
    key = DPoPKey(alg)
    tok = dpop_code_token(c, psu_factory(), key)
    r = account_list(signer, tok["access_token"], key)
    assert r.status_code == 200, r.text
    assert r.headers["DPoP-Nonce"]
    assert r.json()["accounts"]


def test_resource_refusals(client_factory, psu_factory, signer):
    c = client_factory()
    key = DPoPKey("ES256")
    tok = dpop_code_token(c, psu_factory(), key)
    t = tok["access_token"]
    url = MAIN_URL + ACCOUNT_LIST
    # As a bearer token, it is no use (RFC 9449 7.2).
    r = account_list(signer, t, scheme="Bearer")
    assert r.status_code == 401 and r.json()["error"] == "invalid_token"
    # The DPoP scheme without a proof.
    assert_dpop_401(account_list(signer, t), "invalid_dpop_proof")
    # Another key's proof.
    other = DPoPKey("ES256")
    other.nonce = key.nonce
    r = account_list(signer, t, proof=other.proof("GET", url, token=t))
    assert r.status_code == 401 and r.json()["error"] == "invalid_token"
    # Each claim wrong in turn.
    wrong = {
        "htm": {"htm": "POST"},
        "htu": {"htu": MAIN_URL + "/auth/v1/psd2/account/other"},
        "ath": {"ath": b64url_sha256("another token")},
        "iat old": {"iat": int(time.time()) - 120},
        "iat ahead": {"iat": int(time.time()) + 60},
        "no jti": {"jti": None},
    }
    for name, claims in wrong.items():
        r = account_list(signer, t, proof=key.proof("GET", url, token=t,
                                                     **claims))
        assert_dpop_401(r, "invalid_dpop_proof")
    # Not a proof: no typ, a private key in the header, alg none.
    for header in ({"typ": None}, {"typ": "JWT"},
                   {"jwk": JsonWebKey.import_key(key.pem).as_dict(
                       is_private=True)}):
        r = account_list(signer, t, proof=key.proof("GET", url, token=t,
                                                     header=header))
        assert_dpop_401(r, "invalid_dpop_proof")
    # A nonce that is not this server's, or none.
    r = account_list(signer, t, proof=key.proof("GET", url, token=t,
                                                 nonce="made-up"))
    assert_dpop_401(r, "use_dpop_nonce")
    assert r.headers["DPoP-Nonce"]
    r = account_list(signer, t, proof=key.proof("GET", url, token=t,
                                                 nonce=None))
    assert_dpop_401(r, "use_dpop_nonce")
    # The proof must be signed with the request.
    r = account_list(signer, t, key, sign_dpop=False)
    assert r.status_code == 401, r.text
    assert r.json()["tppMessages"][0]["code"] == "SIGNATURE_INVALID"
    # And after all that, a good proof works.
    assert account_list(signer, t, key).status_code == 200


def test_a_proof_is_used_once(client_factory, psu_factory, signer, dbinfo):
    c = client_factory()
    key = DPoPKey("EdDSA")
    tok = dpop_code_token(c, psu_factory(), key)
    t = tok["access_token"]
    proof = key.proof("GET", MAIN_URL + ACCOUNT_LIST, token=t)
    assert account_list(signer, t, proof=proof).status_code == 200
    r = account_list(signer, t, proof=proof)
    assert r.status_code == 401 and r.json()["error"] == "invalid_token"
    # At the token endpoint as well.
    proof = key.proof("POST", TOKEN_URL)
    data = {"grant_type": "refresh_token",
            "refresh_token": tok["refresh_token"]}
    r = token_with(key, data, c, proof=proof)
    assert r.status_code == 200, r.text
    r = token_with(key, {"grant_type": "refresh_token",
                         "refresh_token": r.json()["refresh_token"]}, c,
                   proof=proof)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_dpop_proof"


def test_refresh_binds_the_new_token_to_the_proof(client_factory,
                                                  psu_factory, signer,
                                                  dbinfo):
    """A confidential client's refresh token is bound to its
    authentication (RFC 9449 5); each access token to the key of the
    proof that came with its grant."""
    c = client_factory()
    key = DPoPKey("PS256")
    tok = dpop_code_token(c, psu_factory(), key)
    key2 = DPoPKey("ES256")
    r = token_with(key2, {"grant_type": "refresh_token",
                          "refresh_token": tok["refresh_token"]}, c)
    assert r.status_code == 200, r.text
    t2 = r.json()
    assert t2["token_type"] == "DPoP"
    assert cnf_of(dbinfo, t2["access_token"]) == "jkt:" + key2.thumbprint()
    assert account_list(signer, t2["access_token"], key2).status_code == 200
    key.nonce = key2.nonce
    r = account_list(signer, t2["access_token"], key)
    assert r.status_code == 401


def test_token_endpoint_refusals(client_factory, dbinfo):
    c = client_factory()
    key = DPoPKey("ES256")
    data = {"grant_type": "client_credentials"}
    r = token_with(key, data, c)
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP"
    bad = {
        "htu": key.proof("POST", MAIN_URL + "/auth/oauth/par"),
        "htm": key.proof("GET", TOKEN_URL),
        "nonce": key.proof("POST", TOKEN_URL, nonce="made-up"),
        "alg": key.proof("POST", TOKEN_URL, header={"alg": "RS256"},
                         key=new_key("RS256")),
        "signature": key.proof("POST", TOKEN_URL, key=new_key("ES256")),
        "not a jwt": "not-a-jwt",
    }
    for name, proof in bad.items():
        r = token_request(data, c, headers={"DPoP": proof})
        assert r.status_code == 400, (name, r.text)
        assert r.json()["error"] == ("use_dpop_nonce" if name == "nonce"
                                     else "invalid_dpop_proof"), name
    with db_connect(dbinfo) as db, db.cursor() as cur:
        cur.execute("SELECT count(*) FROM token WHERE client_id = %s",
                    (c.client_id,))
        assert cur.fetchone()[0] == 1


def test_a_bearer_token_is_not_used_with_the_dpop_scheme(psu_factory,
                                                         signer):
    tok_code, _, _, _ = run_code_flow(psd2lib.sandbox_client(),
                                      psu_factory())
    r = psd2lib.exchange_code(psd2lib.sandbox_client(), tok_code)
    t = r.json()["access_token"]
    key = DPoPKey("ES256")
    r = account_list(signer, t, key)
    assert_dpop_401(r, "use_dpop_nonce")
    r = account_list(signer, t, key)
    assert r.status_code == 401 and r.json()["error"] == "invalid_token"
    assert account_list(signer, t, scheme="Bearer").status_code == 200


def test_metadata_lists_the_proof_algorithms():
    doc = requests.get(MAIN_URL + "/.well-known/oauth-authorization-server",
                       timeout=10).json()
    assert doc["dpop_signing_alg_values_supported"] == \
        ["PS256", "ES256", "EdDSA"]


def test_the_purge_takes_spent_proofs(client_factory, dbinfo):
    c = client_factory()
    key = DPoPKey("ES256")
    assert token_with(key, {"grant_type": "client_credentials"},
                      c).status_code == 200
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("SELECT count(*) FROM dpop_proof WHERE expires_at "
                    "BETWEEN now() + interval '60 seconds' AND now() + "
                    "interval '90 seconds'")
        assert cur.fetchone()[0] >= 1
        cur.execute("UPDATE dpop_proof SET expires_at = now() - "
                    "interval '1 second'")
        cur.execute("SELECT psd2_purge()")
        cur.execute("SELECT count(*) FROM dpop_proof")
        assert cur.fetchone()[0] == 0


PAR_URL = MAIN_URL + "/auth/oauth/par"


def _approved_code(url, psu):
    b = psd2lib.PsuBrowser()
    b.login_to_consent(url, psu)
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    return psd2lib.location_params(r)[1]["code"][0]


def _exchange(c, code, proof=None):
    h = {"DPoP": proof} if proof else {}
    return token_request({"grant_type": "authorization_code", "code": code,
                          "redirect_uri": c.redirect_uri}, c, headers=h)


def test_dpop_jkt_binds_the_code(client_factory, psu_factory):
    """RFC 9449 10: a code asked for with dpop_jkt is exchanged only with
    a proof of that key; a refused exchange leaves it unspent."""
    c = client_factory()
    key = DPoPKey("EdDSA")
    code = _approved_code(psd2lib.authorize_url(
        MAIN_URL, c.client_id, c.redirect_uri, "ACCOUNT_INFORMATION",
        "st-jkt", dpop_jkt=key.thumbprint()), psu_factory())
    r = _exchange(c, code)
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    assert "DPoP" in r.json()["error_description"]
    other = DPoPKey("EdDSA")
    r = _exchange(c, code, other.proof("POST", TOKEN_URL))
    other.learn(r)
    r = _exchange(c, code, other.proof("POST", TOKEN_URL))
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    key.nonce = other.nonce
    r = _exchange(c, code, key.proof("POST", TOKEN_URL))
    assert r.status_code == 200, r.text
    assert r.json()["token_type"] == "DPoP"


def test_a_proof_at_par_binds_the_code(client_factory, psu_factory):
    c = client_factory()
    key = DPoPKey("ES256")
    data = {"response_type": "code", "redirect_uri": c.redirect_uri,
            "scope": "ACCOUNT_INFORMATION", "state": "st-par-dpop"}
    auth = psd2lib.basic_auth(c.client_id, c.secret)

    def push(proof, **extra):
        return requests.post(PAR_URL, data=dict(data, **extra), timeout=30,
                             headers={"Authorization": auth,
                                      "DPoP": proof})
    r = push(key.proof("POST", PAR_URL))
    assert r.status_code == 400 and r.json()["error"] == "use_dpop_nonce"
    key.learn(r)
    # A dpop_jkt that is not the proof's key.
    r = push(key.proof("POST", PAR_URL),
             dpop_jkt=DPoPKey("ES256").thumbprint())
    assert r.status_code == 400 and r.json()["error"] == \
        "invalid_dpop_proof"
    r = push(key.proof("POST", PAR_URL))
    assert r.status_code == 201, r.text
    code = _approved_code(MAIN_URL + "/auth/oauth/authorize?" +
                          requests.compat.urlencode({
                              "client_id": c.client_id,
                              "request_uri": r.json()["request_uri"]}),
                          psu_factory())
    assert _exchange(c, code).status_code == 400
    r = _exchange(c, code, key.proof("POST", TOKEN_URL))
    assert r.status_code == 200, r.text


def test_dpop_jkt_must_be_a_thumbprint(client_factory):
    c = client_factory()
    r = requests.post(PAR_URL, timeout=30, data={
        "response_type": "code", "redirect_uri": c.redirect_uri,
        "scope": "ACCOUNT_INFORMATION", "dpop_jkt": "not-a-thumbprint"},
        headers={"Authorization": psd2lib.basic_auth(c.client_id,
                                                     c.secret)})
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
