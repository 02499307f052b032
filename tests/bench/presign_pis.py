"""Prepares a pool of signed payment initiations for
tests/bench/pool_post.lua: COUNT requests, one per line (method and path,
then tab-separated headers, the JSON body last as "X-Body: ..."), spread
round-robin over the tokens of TOKENS (lines "token<TAB>debtor IBAN": the
bench PSUs, each with a PAYMENT_INITIATION consent and an active
authenticator, so each initiation commits a payment, its authorisation
and a device challenge). Each request has its own x-request-id and body
(amounts vary) and a draft-cavage rsa-sha256 signature of the sandbox
TPP's QSealC over digest, x-request-id and date (the date being the
moment of signing: the run must end within the clock skew).

usage: presign_pis.py TOKENS COUNT OUT
"""

import base64
import email.utils
import hashlib
import json
import multiprocessing
import sys
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

PATH = "/auth/v1/psd2/payments/sepa-credit-transfers"

tokens_path, count, out = sys.argv[1:4]
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
    token, iban = TOKENS[i % len(TOKENS)]
    body = json.dumps({
        "instructedAmount": {"currency": "EUR",
                             "amount": "%d.%02d" % (1 + i % 500, i % 100)},
        "debtorAccount": {"iban": iban},
        "creditorAccount": {"iban": "DE89370400440532013000"},
        "creditorName": "Bench Creditor %d" % (i % 1000),
        "remittanceInformationUnstructured": "Bench %d" % i},
        separators=(",", ":"))
    digest = "SHA-256=" + base64.b64encode(
        hashlib.sha256(body.encode()).digest()).decode()
    rid = str(uuid.uuid4())
    date = email.utils.formatdate(usegmt=True)
    s = "digest: %s\nx-request-id: %s\ndate: %s" % (digest, rid, date)
    sig = base64.b64encode(KEY.sign(s.encode(), padding.PKCS1v15(),
                                    hashes.SHA256())).decode()
    return "\t".join([
        "POST " + PATH, "Authorization: Bearer " + token,
        "X-Request-ID: " + rid, "PSU-IP-Address: 192.0.2.%d" % (1 + i % 250),
        "TPP-Decoupled-Preferred: true", "Content-Type: application/json",
        "Digest: " + digest, "Date: " + date,
        "TPP-Signing-Certificate: " + CERT_B64,
        'Signature: keyId="%s",algorithm="rsa-sha256",'
        'headers="digest x-request-id date",signature="%s"' % (KEY_ID, sig),
        "X-Body: " + body])


if __name__ == "__main__":
    with multiprocessing.Pool(2) as p:
        lines = p.map(line, range(int(count)), chunksize=500)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
