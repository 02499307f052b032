"""Prepares a pool for tests/bench/pool_post.lua: COUNT refresh grants of
a FAPI 2.0 client (private_key_jwt, RFC 7523; DPoP, RFC 9449), one per
line, round-robin over the refresh tokens of TOKENS (one a line; the
client's are not rotated, so each is presented again and again). Each
request has its own client assertion (jti, aud BENCH_ISSUER, iat
BENCH_DPOP_IAT, exp ten minutes later) and its own DPoP proof of the
same key (BENCH_DPOP_KEY: both sign with it; htu BENCH_DPOP_BASE's token
endpoint, the server's nonce BENCH_DPOP_NONCE, iat BENCH_DPOP_IAT: the
pool must be used within the service's 60 s).

usage: presign_token.py CLIENT_ID TOKENS COUNT OUT
"""

import multiprocessing
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpop  # noqa: E402

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
client_id, tokens_path, count, out = sys.argv[1:5]
with open(tokens_path) as f:
    TOKENS = [ln.strip() for ln in f if ln.strip()]
KEY = dpop.load(os.environ["BENCH_DPOP_KEY"])
JWK = dpop.public_jwk(KEY)
NONCE = os.environ["BENCH_DPOP_NONCE"]
URL = os.environ["BENCH_DPOP_BASE"] + "/auth/oauth/token"
IAT = int(os.environ["BENCH_DPOP_IAT"])
ISSUER = os.environ["BENCH_ISSUER"]


def line(i):
    body = urllib.parse.urlencode({
        "grant_type": "refresh_token",
        "refresh_token": TOKENS[i % len(TOKENS)],
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": dpop.assertion(KEY, client_id, ISSUER, IAT)})
    return "\t".join([
        "POST /auth/oauth/token",
        "Content-Type: application/x-www-form-urlencoded",
        "DPoP: " + dpop.proof(KEY, JWK, "POST", URL, IAT, NONCE),
        "X-Body: " + body])


if __name__ == "__main__":
    with multiprocessing.Pool() as p, open(out, "w") as f:
        for ln in p.imap(line, range(int(count)), chunksize=500):
            f.write(ln + "\n")
