"""The OpenID Foundation's FAPI 2.0 conformance suite, plan
fapi2-security-profile-final-test-plan, written here as tests of our own
(the suite needs Docker and a Maven build, which CI cannot fetch): one
test per test module that applies to an authorisation server, named
after the module's class (FAPI2SPFinal...), for the variants
client_auth_type=private_key_jwt, sender_constrain=dpop,
fapi_request_method=unsigned, fapi_profile=plain_fapi, openid=plain_oauth.
What each module checks is taken from its summary in the suite's
source; the README lists the modules, which pass and which do not apply.

The client is registered as a FAPI client would be: private_key_jwt
(ES256), pushed authorisation requests required, refresh tokens not
rotated; its tokens are bound to a DPoP key (ES256)."""

import hashlib
import json
import secrets
import time
import urllib.parse

import pytest
import requests

import psd2lib
from psd2lib import (MAIN_URL, ACCOUNT_LIST, PsuBrowser, db_connect,
                     location_params, s256)
from test_authorize import assert_error_page, issuer
from tpp_keys import JWS, DPoPKey, new_key, register_fapi_client

TOKEN_URL = MAIN_URL + "/auth/oauth/token"
PAR_URL = MAIN_URL + "/auth/oauth/par"
AUTHZ_URL = MAIN_URL + "/auth/oauth/authorize"
METADATA_URL = MAIN_URL + "/.well-known/oauth-authorization-server"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class FapiClient:
    """A client registered for FAPI 2.0, and its DPoP key."""

    def __init__(self, client, tmp_path):
        self.client = client
        self.client_id = client.client_id
        self.pem = register_fapi_client(client.client_id, tmp_path)
        self.dpop = DPoPKey("ES256")
        self.verifier = None

    def assertion(self, **claims):
        now = int(time.time())
        payload = {"iss": self.client_id, "sub": self.client_id,
                   "aud": issuer(), "iat": now, "exp": now + 60,
                   "jti": secrets.token_urlsafe(16)}
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        alg = payload.pop("_alg", "ES256")
        key = payload.pop("_key", self.pem)
        return JWS.serialize_compact(
            {"alg": alg}, json.dumps(payload).encode(),
            key).decode()

    def auth(self, **claims):
        return {"client_assertion_type": ASSERTION_TYPE,
                "client_assertion": self.assertion(**claims)}

    def post(self, url, data, dpop=None, proof=True):
        """A request to the token or PAR endpoint with a client
        assertion (unless data has its own) and a DPoP proof of key
        dpop (default the client's; proof=False: none), once more with
        the nonce the bank asks for (the proof is checked first: the
        refusal spends no assertion)."""
        key = dpop or self.dpop
        body = dict(data)
        if "client_assertion" not in body:
            body.update(self.auth())
        for _ in range(2):
            h = {"DPoP": key.proof("POST", url)} if proof else {}
            r = requests.post(url, data=body, headers=h, timeout=30,
                              allow_redirects=False)
            key.learn(r)
            if r.status_code != 400 or r.json().get("error") != \
                    "use_dpop_nonce":
                return r
        return r

    def learn_nonce(self):
        """A nonce for self.dpop: the token endpoint asks for one."""
        self.dpop.learn(requests.post(TOKEN_URL, timeout=30, headers={
            "DPoP": self.dpop.proof("POST", TOKEN_URL)}))

    def par(self, dpop=None, proof=False, **params):
        """Pushes an authorisation request with PKCE; params override
        (None drops one)."""
        self.verifier = secrets.token_urlsafe(48)
        p = {"response_type": "code", "client_id": self.client_id,
             "redirect_uri": self.client.redirect_uri,
             "scope": "ACCOUNT_INFORMATION", "state": "st-fapi",
             "code_challenge": s256(self.verifier),
             "code_challenge_method": "S256"}
        p.update(params)
        p = {k: v for k, v in p.items() if v is not None}
        return self.post(PAR_URL, p, dpop=dpop, proof=proof)

    def authorize_url(self, request_uri):
        return AUTHZ_URL + "?" + urllib.parse.urlencode({
            "client_id": self.client_id, "request_uri": request_uri})

    def code(self, psu, decision="approve", **params):
        """PAR, the PSU's login and decision: the redirect's query."""
        r = self.par(**params)
        assert r.status_code == 201, r.text
        b = PsuBrowser()
        b.login_to_consent(self.authorize_url(r.json()["request_uri"]),
                           psu)
        r = b.submit_consent(decision)
        assert r.status_code == 303, r.text[:500]
        parts, q = location_params(r)
        assert parts.scheme + "://" + parts.netloc + parts.path == \
            self.client.redirect_uri
        assert q["iss"] == [issuer()]
        return q

    def token(self, code, dpop=None, proof=True, **extra):
        data = {"grant_type": "authorization_code", "code": code,
                "redirect_uri": self.client.redirect_uri,
                "code_verifier": self.verifier}
        data.update(extra)
        data = {k: v for k, v in data.items() if v is not None}
        return self.post(TOKEN_URL, data, dpop=dpop, proof=proof)

    def tokens(self, psu):
        r = self.token(self.code(psu)["code"][0])
        assert r.status_code == 200, r.text
        return r.json()

    def resource(self, signer, token, scheme="DPoP", proof=None):
        url = MAIN_URL + ACCOUNT_LIST
        h = {"Content-Type": "application/json",
             "Authorization": "%s %s" % (scheme, token),
             "DPoP": proof or self.dpop.proof("GET", url, token=token)}
        r = signer.for_org(self.client.org_id).request("GET", url,
                                                        headers=h,
                                                        timeout=10)
        self.dpop.learn(r)
        return r


@pytest.fixture
def fapi(client_factory, tmp_path):
    return FapiClient(client_factory(), tmp_path)


def assert_error(r, status, *errors):
    assert r.status_code in (status if isinstance(status, tuple) else
                             (status,)), (r.status_code, r.text)
    assert r.json()["error"] in errors, r.json()


def token_rows(dbinfo, client_id):
    with db_connect(dbinfo) as db, db.cursor() as cur:
        cur.execute("SELECT count(*) FROM token WHERE client_id = %s",
                    (client_id,))
        return cur.fetchone()[0]


# -- Normal, well behaved client cases ---------------------------------

def test_FAPI2SPFinalDiscoveryEndpointVerification():
    doc = requests.get(METADATA_URL, timeout=10).json()
    assert doc["issuer"] == issuer()
    assert doc["pushed_authorization_request_endpoint"] == \
        issuer() + "/auth/oauth/par"
    assert doc["response_types_supported"] == ["code"]
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert "private_key_jwt" in doc["token_endpoint_auth_methods_supported"]
    for key in ("token_endpoint_auth_signing_alg_values_supported",
                "dpop_signing_alg_values_supported"):
        assert set(doc[key]) == {"PS256", "ES256", "EdDSA"}
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert "password" not in doc["grant_types_supported"]


def test_FAPI2SPFinalHappyFlow(fapi, psu_factory, signer):
    tok = fapi.tokens(psu_factory())
    assert tok["token_type"] == "DPoP"
    r = fapi.resource(signer, tok["access_token"])
    assert r.status_code == 200, r.text


def test_FAPI2SPFinalUserRejectsAuthentication(fapi, psu_factory):
    q = fapi.code(psu_factory(), decision="deny")
    assert q["error"] == ["access_denied"] and "code" not in q
    assert q["state"] == ["st-fapi"]


def test_FAPI2SPFinalEnsureAuthorizationRequestWithoutStateSuccess(
        fapi, psu_factory):
    q = fapi.code(psu_factory(), state=None)
    assert "state" not in q and q["code"]
    assert fapi.token(q["code"][0]).status_code == 200


def test_FAPI2SPFinalEnsureAuthorizationRequestWithLongState(
        fapi, psu_factory):
    state = secrets.token_hex(192)
    q = fapi.code(psu_factory(), state=state)
    assert q["state"] == [state]


def test_FAPI2SPFinalAccessTokenTypeHeaderCaseSensitivity(
        fapi, psu_factory, signer):
    """The scheme is case-insensitive (RFC 7235 2.1)."""
    tok = fapi.tokens(psu_factory())
    r = fapi.resource(signer, tok["access_token"], scheme="dpop")
    assert r.status_code == 200, r.text


# -- DPoP ----------------------------------------------------------------

@pytest.mark.parametrize("skew", [-10, 10])
def test_FAPI2SPFinalEnsureDpopProofWithIat10Seconds(fapi, psu_factory,
                                                     skew):
    """Modules ...WithIat10SecondsBeforeSucceeds and ...AfterSucceeds."""
    code = fapi.code(psu_factory())["code"][0]
    fapi.learn_nonce()
    r = requests.post(TOKEN_URL, timeout=30, data=dict(
        fapi.auth(), grant_type="authorization_code", code=code,
        redirect_uri=fapi.client.redirect_uri, code_verifier=fapi.verifier),
        headers={"DPoP": fapi.dpop.proof("POST", TOKEN_URL,
                                         iat=int(time.time()) + skew)})
    assert r.status_code == 200, r.text


def test_FAPI2SPFinalCheckDpopProofNbfExp(fapi, psu_factory, signer):
    """The happy flow with nbf (now) and exp (in five minutes) in every
    DPoP proof, at the token endpoint and the resource: RFC 9449 names
    neither, and a server must accept them."""
    code = fapi.code(psu_factory())["code"][0]
    fapi.learn_nonce()
    now = int(time.time())
    r = requests.post(TOKEN_URL, timeout=30, data=dict(
        fapi.auth(), grant_type="authorization_code", code=code,
        redirect_uri=fapi.client.redirect_uri, code_verifier=fapi.verifier),
        headers={"DPoP": fapi.dpop.proof("POST", TOKEN_URL, nbf=now,
                                         exp=now + 300)})
    assert r.status_code == 200, r.text
    fapi.dpop.learn(r)
    token = r.json()["access_token"]
    url = MAIN_URL + ACCOUNT_LIST
    r = fapi.resource(signer, token, proof=fapi.dpop.proof(
        "GET", url, token=token, nbf=now, exp=now + 300))
    assert r.status_code == 200, r.text


def test_FAPI2SPFinalDpopNegativeTests(fapi, dbinfo):
    """Proofs the token endpoint refuses: another method or URL, no
    jwk, a private jwk, alg none or RS256, an old iat, a bad signature."""
    d = {"grant_type": "client_credentials"}
    k = fapi.dpop
    fapi.learn_nonce()
    bad = [k.proof("GET", TOKEN_URL), k.proof("POST", PAR_URL),
           k.proof("POST", TOKEN_URL, header={"jwk": None}),
           k.proof("POST", TOKEN_URL, header={"typ": "jwt"}),
           k.proof("POST", TOKEN_URL, iat=int(time.time()) - 300),
           k.proof("POST", TOKEN_URL, key=new_key("ES256")),
           k.proof("POST", TOKEN_URL, header={"alg": "RS256"},
                   key=new_key("RS256"))]
    before = token_rows(dbinfo, fapi.client_id)
    for proof in bad:
        r = requests.post(TOKEN_URL, data=dict(d, **fapi.auth()),
                          headers={"DPoP": proof}, timeout=30)
        assert_error(r, 400, "invalid_dpop_proof")
    assert token_rows(dbinfo, fapi.client_id) == before


def test_FAPI2SPFinalEnsureDpopProofAtParEndpointBindingSuccess(
        fapi, psu_factory):
    code = fapi.code(psu_factory(), proof=True)["code"][0]
    r = fapi.token(code)
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP"


def test_FAPI2SPFinalEnsureDpopAuthCodeBindingSuccess(fapi, psu_factory):
    code = fapi.code(psu_factory(),
                     dpop_jkt=fapi.dpop.thumbprint())["code"][0]
    assert fapi.token(code).status_code == 200


def test_FAPI2SPFinalEnsureMismatchedDpopJktFails(fapi):
    """dpop_jkt at PAR that is not the PAR proof's key."""
    r = fapi.par(proof=True, dpop_jkt=DPoPKey("ES256").thumbprint())
    assert_error(r, 400, "invalid_dpop_proof", "invalid_request")


def test_FAPI2SPFinalEnsureTokenEndpointFailsWithMismatchedDpopJkt(
        fapi, psu_factory):
    code = fapi.code(psu_factory(),
                     dpop_jkt=DPoPKey("ES256").thumbprint())["code"][0]
    assert_error(fapi.token(code), 400, "invalid_grant",
                 "invalid_dpop_proof")


def test_FAPI2SPFinalEnsureTokenEndpointFailsWithMismatchedDpopProofJkt(
        fapi, psu_factory):
    code = fapi.code(psu_factory(), proof=True)["code"][0]
    assert_error(fapi.token(code, dpop=DPoPKey("ES256")), 400,
                 "invalid_grant", "invalid_dpop_proof")


# -- The authorisation request -------------------------------------------

def test_FAPI2SPFinalEnsureRedirectUriInAuthorizationRequest(fapi):
    assert_error(fapi.par(redirect_uri=None), 400, "invalid_request")


def test_FAPI2SPFinalEnsureRegisteredRedirectUri(fapi):
    assert_error(fapi.par(redirect_uri="https://attacker.example/cb"), 400,
                 "invalid_request")


@pytest.mark.parametrize("rtype", ["code id_token", "token"])
def test_FAPI2SPFinalEnsureResponseType_Fails(fapi, rtype):
    """Modules ...ResponseTypeCodeIdTokenFails and ...ResponseTypeTokenFails."""
    assert_error(fapi.par(response_type=rtype), 400,
                 "unsupported_response_type", "invalid_request")


def test_FAPI2SPFinalEnsureUnsignedAuthorizationRequestWithoutUsingParFails(
        fapi):
    r = PsuBrowser().get(psd2lib.authorize_url(
        MAIN_URL, fapi.client_id, fapi.client.redirect_uri,
        "ACCOUNT_INFORMATION", "st-plain", code_challenge=s256("v" * 43),
        code_challenge_method="S256"))
    assert r.status_code == 302
    q = location_params(r)[1]
    assert q["error"] == ["invalid_request"] and "code" not in q


# -- The token endpoint --------------------------------------------------

def test_FAPI2SPFinalEnsureClientIdInTokenEndpoint(fapi, psu_factory,
                                                   client_factory):
    code = fapi.code(psu_factory())["code"][0]
    other = client_factory()
    assert_error(fapi.token(code, client_id=other.client_id), 401,
                 "invalid_client")
    assert fapi.token(code).status_code == 200


def test_FAPI2SPFinalEnsureHolderOfKeyRequired(fapi, psu_factory, dbinfo):
    code = fapi.code(psu_factory())["code"][0]
    assert_error(fapi.token(code, proof=False), 400, "invalid_request")
    assert token_rows(dbinfo, fapi.client_id) == 0


def test_FAPI2SPFinalEnsureAuthorizationCodeIsBoundToClient(
        fapi, psu_factory, client_factory, tmp_path):
    code = fapi.code(psu_factory())["code"][0]
    other = FapiClient(client_factory(redirect_uris=[
        fapi.client.redirect_uri]), tmp_path)
    other.verifier = fapi.verifier
    assert_error(other.token(code), 400, "invalid_grant")


def test_FAPI2SPFinalAttemptReuseAuthorizationCodeAfterOneSecond(
        fapi, psu_factory, signer):
    code = fapi.code(psu_factory())["code"][0]
    r = fapi.token(code)
    assert r.status_code == 200
    time.sleep(1)
    assert_error(fapi.token(code), 400, "invalid_grant")
    # The tokens of the first exchange are revoked with it.
    assert fapi.resource(signer, r.json()["access_token"]).status_code == 401


def test_FAPI2SPFinalAttemptToUseExpiredAuthCode(fapi, psu_factory, dbinfo):
    code = fapi.code(psu_factory())["code"][0]
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("UPDATE auth_code SET expires_at = now() - interval "
                    "'1 second' WHERE code_hash = %s",
                    (hashlib.sha256(code.encode()).digest(),))
    assert_error(fapi.token(code), 400, "invalid_grant")


# -- private_key_jwt -----------------------------------------------------

def test_FAPI2SPFinalEnsureSignedClientAssertionWithRS256Fails(fapi):
    a = fapi.assertion(_alg="RS256", _key=new_key("RS256"))
    r = fapi.post(TOKEN_URL, {"grant_type": "client_credentials",
                              "client_assertion_type": ASSERTION_TYPE,
                              "client_assertion": a})
    assert_error(r, (400, 401), "invalid_client", "invalid_request")


def test_FAPI2SPFinalEnsureClientAssertionInTokenEndpoint(fapi):
    r = requests.post(TOKEN_URL, data={"grant_type": "client_credentials",
                                       "client_id": fapi.client_id},
                      timeout=30)
    assert_error(r, (400, 401), "invalid_client", "invalid_request")


@pytest.mark.parametrize("module,claims", [
    ("ClientAssertionWithExpIs5MinutesInPastFails",
     {"exp": lambda now: now - 300, "iat": lambda now: now - 360}),
    ("ClientAssertionWithWrongAudFails",
     {"aud": lambda now: "https://other.example"}),
    ("ClientAssertionWithNoSubFails", {"sub": lambda now: None}),
])
def test_FAPI2SPFinalEnsure_ClientAssertionFails(fapi, module, claims):
    now = int(time.time())
    a = fapi.assertion(**{k: f(now) for k, f in claims.items()})
    r = fapi.post(TOKEN_URL, {"grant_type": "client_credentials",
                              "client_assertion_type": ASSERTION_TYPE,
                              "client_assertion": a})
    assert_error(r, (400, 401), "invalid_client", "invalid_request")


@pytest.mark.parametrize("module,aud", [
    ("PAREndpointAsAudienceFails", "/auth/oauth/par"),
    ("PARTokenEndpointAsAudienceFails", "/auth/oauth/token"),
    ("PAREndpointAsArrayAudienceFails", None),
])
def test_FAPI2SPFinal_AudienceFails(fapi, module, aud):
    value = issuer() + aud if aud else [issuer(), "https://other.example"]
    r = fapi.par(client_assertion_type=ASSERTION_TYPE,
                 client_assertion=fapi.assertion(aud=value))
    assert_error(r, (400, 401), "invalid_client", "invalid_request")


@pytest.mark.parametrize("ahead,ok", [(8, True), (61, False)])
def test_FAPI2SPFinalPAREnsureJWTClientAssertionWithIatNbf(fapi, ahead, ok):
    """Modules ...IatNbf8SecondsInTheFutureIsAccepted and
    ...IatNbfOver60SecondsInTheFutureFails."""
    now = int(time.time())
    r = fapi.par(client_assertion_type=ASSERTION_TYPE,
                 client_assertion=fapi.assertion(iat=now + ahead,
                                                 nbf=now + ahead))
    if ok:
        assert r.status_code == 201, r.text
    else:
        assert_error(r, (400, 401), "invalid_client", "invalid_request")


# -- Refresh tokens ------------------------------------------------------

def test_FAPI2SPFinalRefreshToken(fapi, psu_factory, signer):
    """Not rotated (FAPI 2.0 5.3.2.1), usable again, each new access
    token bound to the proof's key."""
    tok = fapi.tokens(psu_factory())
    for _ in range(2):
        r = fapi.post(TOKEN_URL, {"grant_type": "refresh_token",
                                  "refresh_token": tok["refresh_token"]})
        assert r.status_code == 200, r.text
        assert r.json()["refresh_token"] == tok["refresh_token"]
        assert r.json()["token_type"] == "DPoP"
        assert fapi.resource(signer, r.json()["access_token"]) \
            .status_code == 200


# -- Pushed authorisation requests --------------------------------------

def test_FAPI2SPFinalPARAttemptReuseRequestUri(fapi, psu_factory):
    r = fapi.par()
    uri = r.json()["request_uri"]
    b = PsuBrowser()
    b.login_to_consent(fapi.authorize_url(uri), psu_factory())
    assert b.submit_consent("approve").status_code == 303
    assert_error_page(PsuBrowser().get(fapi.authorize_url(uri)))


def test_FAPI2SPFinalPARAttemptToUseExpiredRequestUri(fapi, dbinfo):
    uri = fapi.par().json()["request_uri"]
    with db_connect(psd2lib.as_superuser(dbinfo)) as db, \
            db.cursor() as cur:
        cur.execute("UPDATE pushed_request SET expires_at = now() - "
                    "interval '1 second' WHERE uri_hash = %s",
                    (hashlib.sha256(uri.encode()).digest(),))
    assert_error_page(PsuBrowser().get(fapi.authorize_url(uri)))


def test_FAPI2SPFinalPAREnsureRequestUriIsBoundToClient(fapi, client_factory,
                                                       tmp_path):
    uri = fapi.par().json()["request_uri"]
    other = FapiClient(client_factory(), tmp_path)
    assert_error_page(PsuBrowser().get(other.authorize_url(uri)))


def test_FAPI2SPFinalPARRejectRequestUriInParAuthorizationFormParams(fapi):
    r = fapi.par(request_uri="urn:ietf:params:oauth:request_uri:" +
                 "a" * 43)
    assert_error(r, 400, "invalid_request")


def test_FAPI2SPFinalPARRejectInvalidHttpVerb():
    r = requests.get(PAR_URL, timeout=10)
    assert r.status_code == 405


def test_FAPI2SPFinalPAREnsurePKCERequired(fapi):
    r = fapi.par(code_challenge=None, code_challenge_method=None)
    assert_error(r, 400, "invalid_request")


def test_FAPI2SPFinalPAREnsurePKCECodeVerifierRequired(fapi, psu_factory):
    code = fapi.code(psu_factory())["code"][0]
    assert_error(fapi.token(code, code_verifier=None), 400, "invalid_grant")


def test_FAPI2SPFinalPARIncorrectPKCECodeVerifierRejected(fapi,
                                                          psu_factory):
    code = fapi.code(psu_factory())["code"][0]
    assert_error(fapi.token(code, code_verifier=secrets.token_urlsafe(48)),
                 400, "invalid_grant")


def test_FAPI2SPFinalPAREnsurePlainPKCERejected(fapi):
    r = fapi.par(code_challenge="p" * 43, code_challenge_method="plain")
    assert_error(r, 400, "invalid_request")


def test_FAPI2SPFinalParWithoutDuplicateParameters(fapi, psu_factory):
    """The authorisation request carries only client_id and
    request_uri; everything else came with the push."""
    r = fapi.par()
    b = PsuBrowser()
    b.login_to_consent(fapi.authorize_url(r.json()["request_uri"]),
                       psu_factory())
    assert b.submit_consent("approve").status_code == 303


def test_FAPI2SPFinalPAREnsureServerAcceptsReusedRequestUriBeforeAuthenticationCompletion(  # noqa: E501
        fapi, psu_factory):
    """Loading the authorisation page twice with one request_uri (a
    reload) before the PSU decides still leads to a code."""
    uri = fapi.par().json()["request_uri"]
    r = PsuBrowser().get(fapi.authorize_url(uri))
    assert r.status_code == 200 and "login-form" in r.text
    b = PsuBrowser()
    b.login_to_consent(fapi.authorize_url(uri), psu_factory())
    r = b.submit_consent("approve")
    assert r.status_code == 303
    assert fapi.token(location_params(r)[1]["code"][0]).status_code == 200
