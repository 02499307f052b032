#!/usr/bin/python3
"""Writes tests/unit/jws_vectors.h: JWS vectors for test_jws.c, made with
Python's cryptography (an implementation other than the one under test).

Each run makes new keys (and PS256 and ES256 signatures are randomised),
so a new run gives other, equally valid vectors.
Run: /usr/bin/python3 tests/unit/jws_vectors.py > tests/unit/jws_vectors.h
"""
import base64
import json
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def intbytes(n, size=None):
    size = size or (n.bit_length() + 7) // 8
    return n.to_bytes(size, "big")


def compact(header, payload, signer):
    h = b64(json.dumps(header, separators=(",", ":")).encode())
    p = b64(json.dumps(payload, separators=(",", ":")).encode())
    return h + "." + p + "." + b64(signer((h + "." + p).encode()))


def main():
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    ed_key = ed25519.Ed25519PrivateKey.generate()
    rn = rsa_key.public_key().public_numbers()
    en = ec_key.public_key().public_numbers()
    ed_raw = ed_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    jwks = {"keys": [
        {"kty": "RSA", "kid": "r1", "use": "sig", "n": b64(intbytes(rn.n)),
         "e": b64(intbytes(rn.e))},
        {"kty": "EC", "kid": "e1", "crv": "P-256",
         "x": b64(intbytes(en.x, 32)), "y": b64(intbytes(en.y, 32))},
        {"kty": "OKP", "kid": "o1", "crv": "Ed25519", "x": b64(ed_raw)},
    ]}
    payload = {"iss": "client-1", "sub": "client-1", "jti": "j1"}

    def pss(salt):
        return lambda m: rsa_key.sign(m, padding.PSS(
            mgf=padding.MGF1(hashes.SHA256()), salt_length=salt),
            hashes.SHA256())

    def es(m):
        r, s = decode_dss_signature(ec_key.sign(m, ec.ECDSA(hashes.SHA256())))
        return intbytes(r, 32) + intbytes(s, 32)

    vectors = [
        ("JWS_PS256", compact({"alg": "PS256", "kid": "r1"}, payload, pss(32))),
        ("JWS_PS256_NOKID", compact({"alg": "PS256"}, payload, pss(32))),
        ("JWS_ES256", compact({"alg": "ES256", "kid": "e1"}, payload, es)),
        ("JWS_EDDSA", compact({"alg": "EdDSA", "kid": "o1"}, payload,
                              ed_key.sign)),
        # The same key, refused forms: RS256, a PSS salt not 32 bytes.
        ("JWS_RS256", compact({"alg": "RS256", "kid": "r1"}, payload,
                              lambda m: rsa_key.sign(m, padding.PKCS1v15(),
                                                     hashes.SHA256()))),
        ("JWS_PS256_SALT_MAX", compact({"alg": "PS256", "kid": "r1"}, payload,
                                       pss(padding.PSS.MAX_LENGTH))),
        # Signed by the EC key but claiming the RSA key's kid.
        ("JWS_ES256_WRONG_KID", compact({"alg": "ES256", "kid": "r1"},
                                        payload, es)),
    ]
    # A P-256 key with a coordinate of a leading zero byte, written short
    # (as Authlib 1.2 writes it): accepted, padded.
    while True:
        short_key = ec.generate_private_key(ec.SECP256R1())
        sn = short_key.public_key().public_numbers()
        if sn.x < 2 ** 248 or sn.y < 2 ** 248:
            break
    short_jwks = {"keys": [{"kty": "EC", "crv": "P-256",
                            "x": b64(intbytes(sn.x)),
                            "y": b64(intbytes(sn.y))}]}

    def es_short(m):
        r, s = decode_dss_signature(short_key.sign(m, ec.ECDSA(
            hashes.SHA256())))
        return intbytes(r, 32) + intbytes(s, 32)

    vectors.append(("JWS_ES256_SHORT_COORDINATE",
                    compact({"alg": "ES256"}, payload, es_short)))
    # DPoP proofs (RFC 9449 4.2): each key in its own header, and the
    # RFC 7638 thumbprints as Authlib computes them.
    from authlib.jose import JsonWebKey
    dpop = {"jti": "d1", "htm": "POST", "htu": "https://bank.example/t",
            "iat": 1700000000}
    thumbs = []
    for i, (alg, jwk, signer) in enumerate([
            ("PS256", jwks["keys"][0], pss(32)),
            ("ES256", jwks["keys"][1], es),
            ("EdDSA", jwks["keys"][2], ed_key.sign)]):
        own = {k: v for k, v in jwk.items() if k not in ("kid", "use")}
        vectors.append(("JWS_DPOP_%d" % i, compact(
            {"typ": "dpop+jwt", "alg": alg, "jwk": own}, dpop, signer)))
        thumbs.append(("JWS_DPOP_%d_THUMB" % i,
                       JsonWebKey.import_key(own).thumbprint()))
    vectors.extend(thumbs)
    vectors.append(("JWS_DPOP_NO_TYP", compact(
        {"alg": "EdDSA", "jwk": {k: v for k, v in jwks["keys"][2].items()
                                 if k != "kid"}}, dpop, ed_key.sign)))
    out = sys.stdout
    out.write("/* Written by tests/unit/jws_vectors.py: do not edit. */\n")
    out.write("#define JWS_VECTOR_JWKS \\\n\t%s\n"
              % json.dumps(json.dumps(jwks, separators=(",", ":"))))
    out.write("#define JWS_VECTOR_DPOP_PAYLOAD \\\n\t%s\n"
              % json.dumps(json.dumps(dpop, separators=(",", ":"))))
    out.write("#define JWS_VECTOR_JWKS_SHORT \\\n\t%s\n"
              % json.dumps(json.dumps(short_jwks, separators=(",", ":"))))
    out.write("#define JWS_VECTOR_PAYLOAD \\\n\t%s\n"
              % json.dumps(json.dumps(payload, separators=(",", ":"))))
    for name, value in vectors:
        out.write("#define %s \\\n\t\"%s\"\n" % (name, value))


main()
