"""A TPP's own keys, as its client library would hold them: new key
pairs of the three algorithms the bank accepts (PS256, ES256, EdDSA),
their public JWKs (Authlib), and DPoP proofs (RFC 9449) made with
Authlib's JWS, for private_key_jwt and DPoP tests on every surface."""

import base64
import hashlib
import json
import time

from authlib.common.security import generate_token
from authlib.jose import JsonWebKey, JsonWebSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

# The bank's three, and the two it must refuse, for tests to sign with.
JWS = JsonWebSignature(algorithms=["PS256", "ES256", "EdDSA", "RS256",
                                   "HS256"])


def new_key(alg):
    """A new private key (PEM) for alg: PS256 and RS256 RSA-2048, ES256
    P-256, EdDSA Ed25519."""
    if alg in ("PS256", "RS256"):
        k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif alg == "ES256":
        k = ec.generate_private_key(ec.SECP256R1())
    else:
        k = ed25519.Ed25519PrivateKey.generate()
    return k.private_bytes(serialization.Encoding.PEM,
                           serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption())


def public_jwk(pem, kid=None):
    jwk = JsonWebKey.import_key(pem).as_dict(is_private=False)
    if kid:
        jwk["kid"] = kid
    return jwk


def b64url_sha256(text):
    return base64.urlsafe_b64encode(hashlib.sha256(
        text.encode()).digest()).rstrip(b"=").decode()


class DPoPKey:
    """A TPP's DPoP key and the nonce the bank last gave it."""

    def __init__(self, alg="ES256"):
        self.alg = alg
        self.pem = new_key(alg)
        self.jwk = public_jwk(self.pem)
        self.nonce = None

    def thumbprint(self):
        return JsonWebKey.import_key(self.jwk).thumbprint()

    def proof(self, method, url, token=None, header=None, key=None,
              **claims):
        """A proof for method and url (its query and fragment are the
        client's to keep or drop), with ath for token; claims set to
        None are left out."""
        payload = {"jti": generate_token(20), "htm": method, "htu": url,
                   "iat": int(time.time())}
        if self.nonce is not None:
            payload["nonce"] = self.nonce
        if token is not None:
            payload["ath"] = b64url_sha256(token)
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        h = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.jwk}
        h.update(header or {})
        h = {k: v for k, v in h.items() if v is not None}
        return JWS.serialize_compact(h, json.dumps(payload).encode(),
                                     key or self.pem).decode()

    def learn(self, r):
        """Keeps the nonce of an answer's DPoP-Nonce header."""
        if r.headers.get("DPoP-Nonce"):
            self.nonce = r.headers["DPoP-Nonce"]


def dpop_token_request(key, data, client, token_request, url):
    """A token request (token_request(data, client, headers=...)) with a
    DPoP proof of key for the token endpoint url, once more with the
    nonce the bank asks for (RFC 9449 8); the last answer."""
    for _ in range(2):
        r = token_request(data, client, headers={
            "DPoP": key.proof("POST", url)})
        key.learn(r)
        if r.status_code != 400 or r.json().get("error") != \
                "use_dpop_nonce":
            return r
    return r


def register_fapi_client(client_id, folder, alg="ES256"):
    """Registers client_id as a FAPI 2.0 client is (psd2ctl):
    private_key_jwt with a new key of alg, PAR required, refresh tokens
    not rotated. Returns the private key (PEM)."""
    import psd2lib
    pem = new_key(alg)
    path = folder / ("jwks-%s.json" % generate_token(8))
    path.write_text(json.dumps({"keys": [public_jwk(pem)]}))
    for args in (("jwks", client_id, str(path)),
                 ("auth-method", client_id, "private_key_jwt"),
                 ("par-required", client_id, "on"),
                 ("refresh-rotation", client_id, "off")):
        psd2lib.psd2ctl("tpp", *args)
    return pem
