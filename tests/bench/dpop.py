"""DPoP (RFC 9449) and private_key_jwt (RFC 7523) for the bench's pools:
an ES256 key of the bench TPP, its RFC 7638 thumbprint and public JWK
Set, a server nonce, and proofs and client assertions made with Python's
cryptography.

usage: dpop.py key PEM JWKS   writes a new key and its JWK Set, prints
                              the thumbprint
       dpop.py nonce PEM BASE asks BASE's token endpoint for a nonce
                              (a proof without one is answered
                              use_dpop_nonce with DPoP-Nonce), prints it
"""

import base64
import hashlib
import json
import sys
import urllib.error
import urllib.request
import uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature)


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def load(pem_path):
    return serialization.load_pem_private_key(open(pem_path, "rb").read(),
                                              None)


def public_jwk(key):
    n = key.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256",
            "x": b64url(n.x.to_bytes(32, "big")),
            "y": b64url(n.y.to_bytes(32, "big"))}


def thumbprint(key):
    j = public_jwk(key)
    canon = json.dumps({"crv": j["crv"], "kty": j["kty"], "x": j["x"],
                        "y": j["y"]}, separators=(",", ":"))
    return b64url(hashlib.sha256(canon.encode()).digest())


def es256(key, header, claims):
    signing = b64url(json.dumps(header, separators=(",", ":")).encode()) + \
        "." + b64url(json.dumps(claims, separators=(",", ":")).encode())
    r, s = decode_dss_signature(key.sign(signing.encode(),
                                         ec.ECDSA(hashes.SHA256())))
    return signing + "." + b64url(r.to_bytes(32, "big") +
                                  s.to_bytes(32, "big"))


def proof(key, jwk, method, url, iat, nonce=None, token=None):
    claims = {"jti": str(uuid.uuid4()), "htm": method, "htu": url,
              "iat": iat}
    if nonce:
        claims["nonce"] = nonce
    if token:
        claims["ath"] = b64url(hashlib.sha256(token.encode()).digest())
    return es256(key, {"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk},
                 claims)


def assertion(key, client_id, issuer, iat):
    return es256(key, {"alg": "ES256", "typ": "JWT"}, {
        "iss": client_id, "sub": client_id, "aud": issuer,
        "jti": str(uuid.uuid4()), "iat": iat, "exp": iat + 600})


def nonce(key, base):
    url = base + "/auth/oauth/token"
    body = b"grant_type=client_credentials&scope=xs2a"
    basic = base64.b64encode(b"sandbox-tpp:sandbox-secret").decode()
    import time
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded",
        "Authorization": "Basic " + basic,
        "DPoP": proof(key, public_jwk(key), "POST", url, int(time.time()))})
    try:
        urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as e:
        if e.headers.get("DPoP-Nonce"):
            return e.headers["DPoP-Nonce"]
        sys.exit("dpop.py: no nonce from %s (%d %s)" % (url, e.code,
                                                       e.read()[:200]))
    sys.exit("dpop.py: %s answered a proof without a nonce" % url)


if __name__ == "__main__":
    if sys.argv[1:2] == ["key"] and len(sys.argv) == 4:
        k = ec.generate_private_key(ec.SECP256R1())
        with open(sys.argv[2], "wb") as f:
            f.write(k.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
        jwk = dict(public_jwk(k), alg="ES256", use="sig", kid="bench")
        with open(sys.argv[3], "w") as f:
            json.dump({"keys": [jwk]}, f)
        print(thumbprint(k))
    elif sys.argv[1:2] == ["nonce"] and len(sys.argv) == 4:
        print(nonce(load(sys.argv[2]), sys.argv[3]))
    else:
        sys.exit(__doc__)
