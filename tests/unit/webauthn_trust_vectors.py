#!/usr/bin/python3
"""Writes webauthn_trust_vectors.h: attestation certificates (EC P-256)
made here with Python's cryptography for tests/unit/
test_webauthn_trust.c. A root and an intermediate CA, a second root the
tests do not trust, leaves for each case of WebAuthn Level 2 8.2.1, and
a self-signed batch leaf whose key and subject a separate root also has
(Chromium's virtual authenticator). The keys and serials are fixed; the
signatures are not (cryptography 38 signs ECDSA with random nonces).
Run: /usr/bin/python3 tests/unit/webauthn_trust_vectors.py
> tests/unit/webauthn_trust_vectors.h"""

import datetime
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

AAGUID = bytes(range(0x10, 0x20))
AAGUID_OTHER = bytes(range(0x20, 0x30))
FIDO_AAGUID_OID = x509.ObjectIdentifier("1.3.6.1.4.1.45724.1.1.4")
ATT_OU = "Authenticator Attestation"
FROM = datetime.datetime(2020, 1, 1)
UNTIL = datetime.datetime(2045, 1, 1)
P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551


def key(label):
    d = int.from_bytes(hashlib.sha256(label.encode()).digest(), "big")
    return ec.derive_private_key(d % (P256_N - 1) + 1, ec.SECP256R1())


def name(cn, ou=None, org="psd2gate Test", country="DE"):
    attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, country),
             x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)]
    if ou is not None:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME,
                                        ou))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def cert(subject, k, issuer, ik, serial, ca, aaguid=AAGUID, critical=False,
         valid=(FROM, UNTIL)):
    b = (x509.CertificateBuilder().subject_name(subject)
         .issuer_name(issuer).public_key(k.public_key())
         .serial_number(serial).not_valid_before(valid[0])
         .not_valid_after(valid[1])
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None),
                        critical=True)
         .add_extension(x509.SubjectKeyIdentifier.from_public_key(
             k.public_key()), critical=False))
    if ik is not k:
        b = b.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ik.public_key()), critical=False)
    if aaguid is not None:
        b = b.add_extension(x509.UnrecognizedExtension(
            FIDO_AAGUID_OID, b"\x04\x10" + aaguid), critical=critical)
    return b.sign(ik, hashes.SHA256())


root_key, inter_key, other_key = key("root"), key("inter"), key("other")
leaf_key, batch_key = key("leaf"), key("batch")
ROOT_NAME = name("psd2gate Test Attestation Root")
INTER_NAME = name("psd2gate Test Attestation CA 1")
OTHER_NAME = name("Another Maker Attestation Root", org="Another Maker")
LEAF_NAME = name("psd2gate Test Key", ou=ATT_OU)
BATCH_NAME = name("Batch Certificate", ou=ATT_OU, org="Chromium",
                  country="US")

root = cert(ROOT_NAME, root_key, ROOT_NAME, root_key, 1, True, None)
inter = cert(INTER_NAME, inter_key, ROOT_NAME, root_key, 2, True, None)
other = cert(OTHER_NAME, other_key, OTHER_NAME, other_key, 3, True, None)
# The root a maker of batch certificates publishes: their name and key.
batch_root = cert(BATCH_NAME, batch_key, BATCH_NAME, batch_key, 4, True,
                  None, valid=(datetime.datetime(2021, 6, 1),
                               datetime.datetime(2044, 6, 1)))


def leaf(issuer=(ROOT_NAME, root_key), serial=100, subject=LEAF_NAME,
         **kw):
    return cert(subject, leaf_key, issuer[0], issuer[1], serial, False,
                **kw)


vectors = [
    ("wt_leaf", leaf()),
    ("wt_inter", inter),
    ("wt_leaf_inter", leaf(issuer=(INTER_NAME, inter_key), serial=101)),
    ("wt_leaf_other", leaf(issuer=(OTHER_NAME, other_key), serial=102)),
    ("wt_leaf_aaguid", leaf(serial=103, aaguid=AAGUID_OTHER)),
    ("wt_leaf_ca", cert(LEAF_NAME, leaf_key, ROOT_NAME, root_key, 104,
                        True)),
    ("wt_leaf_ou", leaf(serial=105,
                        subject=name("psd2gate Test Key", ou="Engineering"))),
    ("wt_leaf_no_ou", leaf(serial=106, subject=name("psd2gate Test Key"))),
    ("wt_leaf_expired", leaf(serial=107, valid=(
        FROM, datetime.datetime(2021, 1, 1)))),
    ("wt_leaf_critical", leaf(serial=108, critical=True)),
    ("wt_leaf_no_aaguid", leaf(serial=109, aaguid=None)),
    ("wt_batch", cert(BATCH_NAME, batch_key, BATCH_NAME, batch_key, 200,
                      False)),
    ("wt_batch_expired", cert(BATCH_NAME, batch_key, BATCH_NAME, batch_key,
                              201, False, valid=(
                                  FROM, datetime.datetime(2021, 1, 1)))),
    ("wt_batch_other_key", cert(BATCH_NAME, leaf_key, BATCH_NAME, leaf_key,
                                202, False)),
]


def c_bytes(cname, b):
    out = ["static const unsigned char %s[%d] = {" % (cname, len(b))]
    for i in range(0, len(b), 12):
        out.append("\t" + ", ".join("0x%02x" % x for x in b[i:i + 12]) +
                   ",")
    out.append("};")
    return "\n".join(out)


def c_pem(macro, certs):
    pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)
    lines = ["\t\"%s\\n\"" % s for s in pem.decode().splitlines()]
    return "#define %s \\\n%s" % (macro, " \\\n".join(lines))


def uuid_text(b):
    h = b.hex()
    return "-".join([h[:8], h[8:12], h[12:16], h[16:20], h[20:]])


print("/* Generated by tests/unit/webauthn_trust_vectors.py: do not edit. */")
print("#define WT_AAGUID_TEXT\t\"%s\"" % uuid_text(AAGUID))
print("#define WT_AAGUID_OTHER_UPPER\t\"%s\"" %
      uuid_text(AAGUID_OTHER).upper())
# The roots trusted: the CA and the batch certificates' maker.
print(c_pem("WT_ROOTS_PEM", [root, batch_root]))
print(c_pem("WT_OTHER_ROOT_PEM", [other]))
print(c_bytes("wt_aaguid", AAGUID))
print(c_bytes("wt_aaguid_other", AAGUID_OTHER))
for cname, c in vectors:
    print(c_bytes(cname, c.public_bytes(serialization.Encoding.DER)))
