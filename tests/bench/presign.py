"""Prepares a request pool for tests/bench/pool.lua: COUNT account
information requests, one per line (path, then tab-separated headers),
spread round-robin over the tokens of TOKENS (lines "token<TAB>account
resource id<TAB>consent id": thousands of PSUs, each with its consent and
token). KIND list and transactions are the contract's paths;
xs2a-list and xs2a-transactions the standard interface's
(src/bg/README.md) for the same accounts, consents and tokens: the
consent's id as Consent-ID, the certificate in TPP-Signature-Certificate,
the transactions' first page of booked ones over the contract's default
period (the last 90 days). Each
request has its own x-request-id; signed ones carry a draft-cavage
rsa-sha256 signature of the sandbox TPP's QSealC over digest,
x-request-id and date, the date being the moment of signing (the run
must end within the service's clock skew of it: tests/bench/lib.sh
checks). PSU-IP-Address marks the PSU present, as a TPP does when the
PSU is at the screen, so the unattended-access limit does not apply.

With BENCH_DPOP_KEY (a PEM of tests/bench/dpop.py), the tokens are
DPoP-bound (RFC 9449): each request has the DPoP scheme and its own
proof (jti, htm, htu on BENCH_DPOP_BASE, ath, the server's nonce
BENCH_DPOP_NONCE, iat BENCH_DPOP_IAT: one moment for the whole pool,
which must be used within the service's 60 s), signed along with the
request.

usage: presign.py signed|unsigned KIND TOKENS COUNT OUT
"""

import base64
import datetime
import email.utils
import hashlib
import multiprocessing
import os
import sys
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

LIST = "/auth/v1/psd2/account/account-list"
TX = "/auth/v1/psd2/account/%s/transactions"
XS2A_LIST = "/xs2a/v1/accounts"
XS2A_TX = "/xs2a/v1/accounts/%s/transactions?bookingStatus=booked&dateFrom=%s"
DATE_FROM = (datetime.datetime.now(datetime.timezone.utc).date() -
             datetime.timedelta(days=90)).isoformat()
PATHS = {
    "list": lambda account: LIST,
    "transactions": lambda account: TX % account,
    "xs2a-list": lambda account: XS2A_LIST,
    "xs2a-transactions": lambda account: XS2A_TX % (account, DATE_FROM),
}
DIGEST = "SHA-256=" + base64.b64encode(hashlib.sha256(b"").digest()).decode()

mode, kind, tokens_path, count, out = sys.argv[1:6]
if kind not in PATHS:
    sys.exit("presign.py: KIND is one of " + ", ".join(PATHS))
XS2A = kind.startswith("xs2a-")
with open(tokens_path) as f:
    TOKENS = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
KEY = serialization.load_pem_private_key(
    open("var/sandbox/tpp.key", "rb").read(), None)
CERT = x509.load_pem_x509_certificate(open("var/sandbox/tpp.crt",
                                           "rb").read())
CERT_B64 = base64.b64encode(CERT.public_bytes(
    serialization.Encoding.DER)).decode()
KEY_ID = "SN=%x,CA=%s" % (CERT.serial_number,
                          CERT.issuer.rfc4514_string())
DPOP_KEY = None
if os.environ.get("BENCH_DPOP_KEY"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dpop
    DPOP_KEY = dpop.load(os.environ["BENCH_DPOP_KEY"])
    DPOP_JWK = dpop.public_jwk(DPOP_KEY)
    DPOP_NONCE = os.environ["BENCH_DPOP_NONCE"]
    DPOP_BASE = os.environ["BENCH_DPOP_BASE"]
    DPOP_IAT = int(os.environ["BENCH_DPOP_IAT"])


def line(i):
    token, account, consent = TOKENS[i % len(TOKENS)][:3]
    path = PATHS[kind](account)
    rid = str(uuid.uuid4())
    scheme = "DPoP " if DPOP_KEY else "Bearer "
    fields = [path, "Authorization: " + scheme + token,
              "X-Request-ID: " + rid,
              "PSU-IP-Address: 192.0.2.%d" % (1 + i % 250)]
    if XS2A:
        fields.append("Consent-ID: " + consent)
    signed = "digest x-request-id date"
    extra = ""
    if DPOP_KEY:
        proof = dpop.proof(DPOP_KEY, DPOP_JWK, "GET", DPOP_BASE + path,
                           DPOP_IAT, DPOP_NONCE, token)
        fields.append("DPoP: " + proof)
        signed += " dpop"
        extra = "\ndpop: " + proof
    if mode == "signed":
        date = email.utils.formatdate(usegmt=True)
        s = "digest: %s\nx-request-id: %s\ndate: %s%s" % (DIGEST, rid,
                                                          date, extra)
        sig = base64.b64encode(KEY.sign(s.encode(), padding.PKCS1v15(),
                                        hashes.SHA256())).decode()
        fields += ["Digest: " + DIGEST, "Date: " + date,
                   ("TPP-Signature-Certificate: " if XS2A else
                    "TPP-Signing-Certificate: ") + CERT_B64,
                   'Signature: keyId="%s",algorithm="rsa-sha256",'
                   'headers="%s",signature="%s"'
                   % (KEY_ID, signed, sig)]
    return "\t".join(fields)


if __name__ == "__main__":
    with multiprocessing.Pool() as p, open(out, "w") as f:
        for ln in p.imap(line, range(int(count)), chunksize=500):
            f.write(ln + "\n")
