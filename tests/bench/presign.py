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

usage: presign.py signed|unsigned KIND TOKENS COUNT OUT
"""

import base64
import datetime
import email.utils
import hashlib
import multiprocessing
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


def line(i):
    token, account, consent = TOKENS[i % len(TOKENS)][:3]
    path = PATHS[kind](account)
    rid = str(uuid.uuid4())
    fields = [path, "Authorization: Bearer " + token, "X-Request-ID: " + rid,
              "PSU-IP-Address: 192.0.2.%d" % (1 + i % 250)]
    if XS2A:
        fields.append("Consent-ID: " + consent)
    if mode == "signed":
        date = email.utils.formatdate(usegmt=True)
        s = "digest: %s\nx-request-id: %s\ndate: %s" % (DIGEST, rid, date)
        sig = base64.b64encode(KEY.sign(s.encode(), padding.PKCS1v15(),
                                        hashes.SHA256())).decode()
        fields += ["Digest: " + DIGEST, "Date: " + date,
                   ("TPP-Signature-Certificate: " if XS2A else
                    "TPP-Signing-Certificate: ") + CERT_B64,
                   'Signature: keyId="%s",algorithm="rsa-sha256",'
                   'headers="digest x-request-id date",signature="%s"'
                   % (KEY_ID, sig)]
    return "\t".join(fields)


if __name__ == "__main__":
    with multiprocessing.Pool() as p, open(out, "w") as f:
        for ln in p.imap(line, range(int(count)), chunksize=500):
            f.write(ln + "\n")
