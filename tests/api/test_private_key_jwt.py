"""Client authentication by private_key_jwt (RFC 7523 2.2; FAPI 2.0
Security Profile 5.3.2.1): a client's public keys registered with
psd2ctl tpp jwks, its method set with psd2ctl tpp auth-method; Authlib's
client signs the assertions (PS256, ES256 and EdDSA) at the token, PAR
and revocation endpoints; every claim rule refuses and stores nothing;
a jti is spent once."""

import json
import secrets
import time

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

import psd2lib
from psd2lib import (MAIN_URL, PsuBrowser, basic_auth, db_connect,
                     location_params, run_code_flow, s256)
from test_authorize import issuer
from tpp_keys import JWS, DPoPKey, new_key, public_jwk

TOKEN_URL = MAIN_URL + "/auth/oauth/token"
PAR_URL = MAIN_URL + "/auth/oauth/par"
REVOKE_URL = MAIN_URL + "/auth/oauth/revoke"
AUTHZ_URL = MAIN_URL + "/auth/oauth/authorize"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
def register_keys(client, jwks, tmp_path):
    path = tmp_path / ("jwks-%s.json" % secrets.token_hex(4))
    path.write_text(json.dumps(jwks))
    return psd2lib.psd2ctl("tpp", "jwks", client.client_id, str(path),
                           check=False)


class JwtClient:
    """A registered client with one key, authenticating by private_key_jwt."""

    def __init__(self, client, alg, pem, kid):
        self.client, self.alg, self.pem, self.kid = client, alg, pem, kid
        self.client_id = client.client_id

    def assertion(self, aud=None, header=None, **claims):
        now = int(time.time())
        payload = {"iss": self.client_id, "sub": self.client_id,
                   "aud": issuer() if aud is None else aud,
                   "iat": now, "exp": now + 60, "jti": generate_token(24)}
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        h = {"alg": self.alg, "kid": self.kid}
        h.update(header or {})
        return JWS.serialize_compact(h, json.dumps(payload).encode(),
                                     self.pem).decode()

    def form(self, assertion=None, **data):
        data["client_assertion_type"] = ASSERTION_TYPE
        data["client_assertion"] = assertion or self.assertion()
        return data


@pytest.fixture
def jwt_client(client_factory, tmp_path):
    def make(alg="PS256", **kw):
        c = client_factory(**kw)
        pem = new_key(alg)
        kid = "k-" + secrets.token_hex(4)
        r = register_keys(c, {"keys": [public_jwk(pem, kid)]}, tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "%s: public keys registered" % c.client_id
        out = psd2lib.psd2ctl("tpp", "auth-method", c.client_id,
                              "private_key_jwt").stdout
        assert out.strip() == ("%s: authenticates with private_key_jwt"
                               % c.client_id)
        return JwtClient(c, alg, pem, kid)
    return make


# Such a client's tokens must be sender-constrained (FAPI 2.0): on this
# plain-HTTP host, every token request brings a DPoP proof of this key.
DPOP = DPoPKey("ES256")


def dpop_header():
    """A proof for the token endpoint, with a nonce the bank gave."""
    if DPOP.nonce is None:
        DPOP.learn(requests.post(TOKEN_URL, timeout=30, headers={
            "DPoP": DPOP.proof("POST", TOKEN_URL)}))
    return {"DPoP": DPOP.proof("POST", TOKEN_URL)}


def post(url, data, auth="", dpop=True):
    h = {"Authorization": auth} if auth else {}
    if url == TOKEN_URL and dpop:
        h.update(dpop_header())
    r = requests.post(url, data=data, headers=h, timeout=30,
                      allow_redirects=False)
    DPOP.learn(r)
    return r


def assert_invalid_client(r, words=None):
    assert r.status_code == 401, (r.status_code, r.text)
    body = r.json()
    assert body["error"] == "invalid_client", body
    if words:
        assert words in body["error_description"], body


def tokens_of(dbinfo, client_id):
    with db_connect(dbinfo) as db, db.cursor() as cur:
        cur.execute("SELECT count(*) FROM token WHERE client_id = %s",
                    (client_id,))
        return cur.fetchone()[0]


def spent(dbinfo, client_id):
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("SELECT count(*) FROM client_assertion WHERE "
                    "client_id = %s", (client_id,))
        return cur.fetchone()[0]


@pytest.mark.parametrize("alg", ["PS256", "ES256", "EdDSA"])
def test_authlib_code_flow_refresh_and_revoke(jwt_client, psu_factory,
                                              dbinfo, alg):
    """Authlib's own PrivateKeyJWT (aud the issuer, no kid, an hour's
    exp) through the code grant, a refresh and a revocation."""
    jc = jwt_client(alg)
    auth = PrivateKeyJWT(issuer(), alg=alg)
    sess = OAuth2Session(jc.client_id, jc.pem, scope="ACCOUNT_INFORMATION",
                         redirect_uri=jc.client.redirect_uri,
                         code_challenge_method="S256",
                         token_endpoint_auth_method=auth,
                         revocation_endpoint_auth_method=auth)
    verifier = generate_token(48)
    url, _ = sess.create_authorization_url(AUTHZ_URL, code_verifier=verifier)
    b = PsuBrowser()
    b.login_to_consent(url, psu_factory())
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    tok = sess.fetch_token(TOKEN_URL, authorization_response=r.headers[
        "Location"], code_verifier=verifier, headers=dpop_header())
    assert tok["token_type"] == "DPoP" and tok["refresh_token"]
    tok2 = sess.refresh_token(TOKEN_URL, refresh_token=tok["refresh_token"],
                              headers=dpop_header())
    assert tok2["access_token"] != tok["access_token"]
    assert spent(dbinfo, jc.client_id) == 2
    r = sess.revoke_token(REVOKE_URL, tok2["refresh_token"],
                          token_type_hint="refresh_token")
    assert r.status_code == 200, r.text
    assert spent(dbinfo, jc.client_id) == 3
    r = post(TOKEN_URL, jc.form(grant_type="refresh_token",
                                refresh_token=tok2["refresh_token"]))
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("aud", ["token", "par", "revoke", "list",
                                 "list of one", "issuer slash"])
def test_only_the_issuer_is_the_audience(jwt_client, dbinfo, aud):
    """FAPI 2.0 5.3.2.1 item 8 (the conformance suite's
    *-as-audience-fails modules): the issuer, as a string, and nothing
    else."""
    jc = jwt_client("ES256")
    value = {"token": issuer() + "/auth/oauth/token",
             "par": issuer() + "/auth/oauth/par",
             "revoke": issuer() + "/auth/oauth/revoke",
             "list": [issuer(), "https://other.example"],
             "list of one": [issuer()],
             "issuer slash": issuer() + "/"}[aud]
    r = post(TOKEN_URL, jc.form(jc.assertion(aud=value),
                                grant_type="client_credentials"))
    assert_invalid_client(r, "aud must be the issuer")
    assert spent(dbinfo, jc.client_id) == 0
    r = post(TOKEN_URL, jc.form(jc.assertion(aud=issuer()),
                                grant_type="client_credentials"))
    assert r.status_code == 200, r.text


def test_a_jti_is_spent_once(jwt_client, psu_factory, dbinfo):
    jc = jwt_client("EdDSA")
    a = jc.assertion()
    code, _, _, _ = run_code_flow(jc.client, psu_factory())
    data = dict(grant_type="authorization_code", code=code,
                redirect_uri=jc.client.redirect_uri)
    r = post(TOKEN_URL, jc.form(a, **data))
    assert r.status_code == 200, r.text
    code2, _, _, _ = run_code_flow(jc.client, psu_factory())
    data["code"] = code2
    before = tokens_of(dbinfo, jc.client_id)
    assert_invalid_client(post(TOKEN_URL, jc.form(a, **data)),
                          "used before")
    assert tokens_of(dbinfo, jc.client_id) == before
    # The code was not spent by the refused request.
    r = post(TOKEN_URL, jc.form(**data))
    assert r.status_code == 200, r.text


def _sign_other(jc, alg):
    """An assertion of jc's claims signed otherwise."""
    now = int(time.time())
    claims = json.dumps({"iss": jc.client_id, "sub": jc.client_id,
                         "aud": issuer(), "exp": now + 60,
                         "jti": generate_token(24)}).encode()
    if alg == "none":
        import base64
        enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
        return enc(b'{"alg":"none"}') + "." + enc(claims) + "."
    if alg == "HS256":
        return JWS.serialize_compact({"alg": "HS256"}, claims,
                                     jc.client.secret.encode()).decode()
    if alg == "RS256":
        return JWS.serialize_compact({"alg": "RS256", "kid": jc.kid},
                                     claims, jc.pem).decode()
    # Another key of the same type, under the registered kid.
    return JWS.serialize_compact({"alg": jc.alg, "kid": jc.kid}, claims,
                                 new_key(jc.alg)).decode()


REFUSALS = {
    "aud other server": ({"aud": "https://other.example"}, "aud"),
    "aud endpoint of another host": (
        {"aud": "https://other.example/auth/oauth/token"}, "aud"),
    "aud empty": ({"aud": ""}, "aud"),
    # The iss names the client whose keys verify: another is unknown.
    "iss not the client": ({"iss": "someone-else"}, "authentication failed"),
    "sub not the client": ({"sub": "someone-else"}, "iss and sub"),
    "expired": ({"exp": -20}, "expired"),
    "exp too far": ({"exp": 3700}, "more than an hour"),
    "no exp": ({"exp": None}, "exp is required"),
    "exp text": ({"exp": "soon"}, "exp is required"),
    "iat future": ({"iat": 61}, "iat"),
    "nbf future": ({"nbf": 61}, "nbf"),
    "no jti": ({"jti": None}, "jti"),
    "jti too long": ({"jti": "j" * 257}, "jti"),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_claim_refusals_store_nothing(jwt_client, psu_factory, dbinfo, name):
    jc = jwt_client("PS256")
    change, words = REFUSALS[name]
    now = int(time.time())
    claims = {}
    for k, v in change.items():
        claims[k] = now + v if k in ("exp", "iat", "nbf") and \
            isinstance(v, int) else v
    if "aud" in claims:
        aud = claims.pop("aud")
    else:
        aud = None
    code, _, _, _ = run_code_flow(jc.client, psu_factory())
    data = dict(grant_type="authorization_code", code=code,
                redirect_uri=jc.client.redirect_uri)
    r = post(TOKEN_URL, jc.form(jc.assertion(aud=aud, **claims), **data))
    assert_invalid_client(r, words)
    assert tokens_of(dbinfo, jc.client_id) == 0
    assert spent(dbinfo, jc.client_id) == 0
    # The code is still good for a proper assertion.
    assert post(TOKEN_URL, jc.form(**data)).status_code == 200


def test_clock_skew_of_ten_seconds_is_accepted(jwt_client, psu_factory):
    jc = jwt_client("ES256")
    now = int(time.time())
    code, _, _, _ = run_code_flow(jc.client, psu_factory())
    r = post(TOKEN_URL, jc.form(jc.assertion(iat=now + 10, nbf=now + 10,
                                             exp=now + 3600),
                                grant_type="authorization_code", code=code,
                                redirect_uri=jc.client.redirect_uri))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("alg,words", [
    ("none", "not a compact JWS"), ("HS256", "alg must be"),
    ("RS256", "alg must be"), ("other key", "does not verify")])
def test_signature_refusals(jwt_client, dbinfo, alg, words):
    jc = jwt_client("PS256")
    r = post(TOKEN_URL, jc.form(_sign_other(jc, alg),
                                grant_type="client_credentials"))
    assert_invalid_client(r, words)
    assert tokens_of(dbinfo, jc.client_id) == 0
    assert spent(dbinfo, jc.client_id) == 0


def test_one_method_per_request_and_per_client(jwt_client, dbinfo):
    jc = jwt_client("EdDSA")
    # The client's secret no longer counts.
    r = post(TOKEN_URL, {"grant_type": "client_credentials"},
             auth=basic_auth(jc.client_id, jc.client.secret))
    assert_invalid_client(r)
    # Basic beside an assertion: two methods in one request.
    r = post(TOKEN_URL, jc.form(grant_type="client_credentials"),
             auth=basic_auth(jc.client_id, jc.client.secret))
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    # A body client_id that is not the assertion's.
    r = post(TOKEN_URL, jc.form(grant_type="client_credentials",
                                client_id="sandbox-tpp"))
    assert_invalid_client(r, "does not match")
    # The wrong assertion type, or an assertion without it.
    d = jc.form(grant_type="client_credentials")
    d["client_assertion_type"] = "urn:ietf:params:oauth:grant-type:saml2"
    assert_invalid_client(post(TOKEN_URL, d), "client_assertion_type")
    d.pop("client_assertion_type")
    assert_invalid_client(post(TOKEN_URL, d), "client_assertion_type")
    # A repeated assertion.
    a = jc.assertion()
    r = post(TOKEN_URL, [("grant_type", "client_credentials"),
                         ("client_assertion_type", ASSERTION_TYPE),
                         ("client_assertion", a), ("client_assertion", a)])
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    assert tokens_of(dbinfo, jc.client_id) == 0
    # A Basic client's assertion counts for nothing.
    other = psd2lib.make_client()
    r = post(TOKEN_URL, {"grant_type": "client_credentials",
                         "client_assertion_type": ASSERTION_TYPE,
                         "client_assertion": JwtClient(
                             other, jc.alg, jc.pem, jc.kid).assertion()})
    assert_invalid_client(r)
    # And the right one works.
    r = post(TOKEN_URL, jc.form(grant_type="client_credentials"))
    assert r.status_code == 200, r.text


def test_holder_of_key_required(jwt_client, dbinfo):
    """FAPI 2.0 5.3.2.1 (the conformance suite's
    ensure-holder-of-key-required): without a DPoP proof, and not on the
    mTLS host, such a client gets no token."""
    jc = jwt_client("PS256")
    r = post(TOKEN_URL, jc.form(grant_type="client_credentials"),
             dpop=False)
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    assert "sender-constrained" in r.json()["error_description"]
    assert tokens_of(dbinfo, jc.client_id) == 0
    r = post(TOKEN_URL, jc.form(grant_type="client_credentials"))
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP"


def test_a_suspended_tpp_is_refused(jwt_client):
    jc = jwt_client("ES256")
    psd2lib.psd2ctl("tpp", "suspend", jc.client.org_id)
    assert_invalid_client(post(TOKEN_URL,
                               jc.form(grant_type="client_credentials")))


def test_pushed_request_with_an_assertion(jwt_client, psu_factory):
    jc = jwt_client("PS256")
    verifier = secrets.token_urlsafe(48)
    r = post(PAR_URL, jc.form(
        jc.assertion(),
        response_type="code", redirect_uri=jc.client.redirect_uri,
        scope="ACCOUNT_INFORMATION", state="st-jwt",
        code_challenge=s256(verifier), code_challenge_method="S256"))
    assert r.status_code == 201, r.text
    b = PsuBrowser()
    b.login_to_consent(AUTHZ_URL + "?client_id=%s&request_uri=%s" % (
        jc.client_id, requests.utils.quote(r.json()["request_uri"])),
        psu_factory())
    r = b.submit_consent("approve")
    q = location_params(r)[1]
    r = post(TOKEN_URL, jc.form(grant_type="authorization_code",
                                code=q["code"][0], code_verifier=verifier,
                                redirect_uri=jc.client.redirect_uri))
    assert r.status_code == 200, r.text
    # Without authentication, nothing is pushed.
    r = post(PAR_URL, {"client_id": jc.client_id, "response_type": "code",
                       "redirect_uri": jc.client.redirect_uri,
                       "scope": "ACCOUNT_INFORMATION"})
    assert_invalid_client(r)


def test_key_rotation_replaces_the_set(jwt_client, tmp_path):
    """The registered set is the whole truth: a key left out of the new
    set signs nothing more; two keys, kids distinct, both serve."""
    jc = jwt_client("ES256")
    old = jc.assertion()
    pem2 = new_key("EdDSA")
    r = register_keys(jc.client, {"keys": [public_jwk(pem2, "k2"),
                                           public_jwk(jc.pem, jc.kid)]},
                      tmp_path)
    assert r.returncode == 0, r.stderr
    assert post(TOKEN_URL, jc.form(old, grant_type="client_credentials")) \
        .status_code == 200
    jc2 = JwtClient(jc.client, "EdDSA", pem2, "k2")
    assert post(TOKEN_URL, jc2.form(grant_type="client_credentials")) \
        .status_code == 200
    r = register_keys(jc.client, {"keys": [public_jwk(pem2, "k2")]},
                      tmp_path)
    assert r.returncode == 0, r.stderr
    assert_invalid_client(post(TOKEN_URL, jc.form(
        grant_type="client_credentials")), "no registered key")


def test_cached_keys_follow_the_registry(jwt_client, dbinfo, tmp_path):
    """A worker keeps a client's keys a few seconds (client_auth.c), but
    the grant checks in its own transaction that they are still the
    client's (oauth_assertion_take): a key added leaves the others
    working, a key left out or a change of method counts at the very next
    request on every worker, and a refusal issues nothing."""
    jc = jwt_client("ES256")
    form = lambda c: c.form(grant_type="client_credentials")
    # Enough requests, each on a new connection, to reach both workers.
    many = 8
    for _ in range(many):
        assert post(TOKEN_URL, form(jc)).status_code == 200
    pem2 = new_key("ES256")
    jc2 = JwtClient(jc.client, "ES256", pem2, "k2")
    r = register_keys(jc.client, {"keys": [public_jwk(jc.pem, jc.kid),
                                           public_jwk(pem2, "k2")]},
                      tmp_path)
    assert r.returncode == 0, r.stderr
    for c in (jc, jc2) * many:
        r = post(TOKEN_URL, form(c))
        assert r.status_code == 200, r.text
    r = register_keys(jc.client, {"keys": [public_jwk(pem2, "k2")]},
                      tmp_path)
    assert r.returncode == 0, r.stderr
    issued = tokens_of(dbinfo, jc.client_id)
    for _ in range(many):
        assert_invalid_client(post(TOKEN_URL, form(jc)), "no registered key")
    assert tokens_of(dbinfo, jc.client_id) == issued
    psd2lib.psd2ctl("tpp", "auth-method", jc.client_id,
                    "client_secret_basic")
    for _ in range(many):
        assert_invalid_client(post(TOKEN_URL, form(jc2)))
    assert tokens_of(dbinfo, jc.client_id) == issued


def test_registration_refusals_and_audit(client_factory, dbinfo, tmp_path):
    c = client_factory()
    pem = new_key("PS256")
    # No keys yet: the method is refused, and nothing changes.
    r = psd2lib.psd2ctl("tpp", "auth-method", c.client_id,
                        "private_key_jwt", check=False)
    assert r.returncode == 1 and "has no keys" in r.stderr, r.stderr
    private = JsonWebKey.import_key(pem).as_dict(is_private=True)
    bad = {
        "a private key": {"keys": [private]},
        "an RS256 key": {"keys": [dict(public_jwk(pem), alg="RS256")]},
        "an empty set": {"keys": []},
        "a secret key": {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]},
        "a short RSA key": {"keys": [JsonWebKey.import_key(
            rsa.generate_private_key(public_exponent=65537, key_size=1024)
            .public_key().public_bytes(
                serialization.Encoding.PEM,
                serialization.PublicFormat.SubjectPublicKeyInfo))
            .as_dict()]},
    }
    for name, jwks in bad.items():
        r = register_keys(c, jwks, tmp_path)
        assert r.returncode == 1 and r.stderr.strip(), (name, r.stderr)
    path = tmp_path / "not.json"
    path.write_text("{keys")
    r = psd2lib.psd2ctl("tpp", "jwks", c.client_id, str(path), check=False)
    assert r.returncode == 1 and "not JSON" in r.stderr
    r = register_keys(psd2lib.Client("no-such-client", "", "", "", ["x"]),
                      {"keys": [public_jwk(pem, "a")]}, tmp_path)
    assert r.returncode == 1 and "no client no-such-client" in r.stderr
    r = psd2lib.psd2ctl("tpp", "auth-method", c.client_id, "client_secret_jwt",
                        check=False)
    assert r.returncode == 2
    with db_connect(dbinfo) as db, db.cursor() as cur:
        cur.execute("SELECT count(*) FROM audit_log WHERE detail->>"
                    "'client_id' = %s AND action IN ('tpp.client_jwks', "
                    "'tpp.client_auth')", (c.client_id,))
        assert cur.fetchone()[0] == 0
    r = register_keys(c, {"keys": [public_jwk(pem, "a")]}, tmp_path)
    assert r.returncode == 0, r.stderr
    psd2lib.psd2ctl("tpp", "auth-method", c.client_id, "private_key_jwt")
    with db_connect(dbinfo) as db, db.cursor() as cur:
        cur.execute("SELECT action, detail FROM audit_log WHERE detail->>"
                    "'client_id' = %s AND action <> 'tpp.client_add' "
                    "ORDER BY id", (c.client_id,))
        rows = cur.fetchall()
    assert [a for a, _ in rows] == ["tpp.client_jwks", "tpp.client_auth"]
    assert rows[0][1]["keys"] == [{"kty": "RSA", "kid": "a"}]
    assert len(rows[0][1]["sha256"]) == 64
    assert rows[1][1]["auth_method"] == "private_key_jwt"


def test_metadata_lists_the_method_and_algorithms():
    doc = requests.get(MAIN_URL + "/.well-known/oauth-authorization-server",
                       timeout=10).json()
    for ep in ("token", "revocation"):
        assert "private_key_jwt" in doc["%s_endpoint_auth_methods_supported"
                                        % ep]
        assert doc["%s_endpoint_auth_signing_alg_values_supported" % ep] == \
            ["PS256", "ES256", "EdDSA"]


def test_the_purge_takes_expired_jtis(jwt_client, dbinfo):
    jc = jwt_client("ES256")
    for _ in range(2):
        assert post(TOKEN_URL, jc.form(grant_type="client_credentials")) \
            .status_code == 200
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("UPDATE client_assertion SET expires_at = now() - "
                    "interval '1 second' WHERE ctid = (SELECT ctid FROM "
                    "client_assertion WHERE client_id = %s LIMIT 1)",
                    (jc.client_id,))
        assert cur.rowcount == 1
        cur.execute("SELECT psd2_purge()")
    assert spent(dbinfo, jc.client_id) == 1
