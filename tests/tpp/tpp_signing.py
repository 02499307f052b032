"""Request signing for the TPP identity tests: draft-cavage with Debian's
python3-httpsig (RSA; an independent implementation of the draft) and,
where httpsig cannot (ECDSA, the JAdES-style detached JWS), with
python3-cryptography. Certificates and keys come from tests/pki/mint.sh.
"""

import base64
import datetime
import email.utils
import hashlib
import json
import os
import time
import uuid

import httpsig
from requests.structures import CaseInsensitiveDict
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric.utils import \
    decode_dss_signature

JWS_MID = "http://uri.etsi.org/19182/HttpHeaders"


def b64(data):
    return base64.b64encode(data).decode()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Identity:
    """A certificate and its key (PEM files NAME.crt / NAME.key)."""

    def __init__(self, crt_path, key_path):
        with open(crt_path, "rb") as f:
            self.cert_pem = f.read()
        with open(key_path, "rb") as f:
            self.key_pem = f.read()
        self.cert = x509.load_pem_x509_certificate(self.cert_pem)
        self.key = serialization.load_pem_private_key(self.key_pem, None)
        self.der = self.cert.public_bytes(serialization.Encoding.DER)
        self.cert_b64 = b64(self.der)
        self.x5t = b64url(hashlib.sha256(self.der).digest())
        self.key_id = "SN=%X,CA=%s" % (self.cert.serial_number,
                                       self.cert.issuer.rfc4514_string())

    @classmethod
    def load(cls, directory, name):
        return cls(os.path.join(directory, name + ".crt"),
                   os.path.join(directory, name + ".key"))


def signing_string(headers, names):
    low = {k.lower(): v for k, v in headers.items()}
    return "\n".join("%s: %s" % (n, low[n]) for n in names)


def sign_request(ident, body=b"", headers=None, form="cavage",
                 algorithm="rsa-sha256", names=None, key=None, key_id=None,
                 cert_b64=None, date=None, request_id=None, digest_alg="SHA-256",
                 cert_header="TPP-Signing-Certificate", x5t=None,
                 sig_t_offset=0):
    """The signing headers of spec part 5.4 added to headers. form is
    "cavage" (httpsig for RSA, cryptography for ecdsa-sha256) or a JWS
    alg ("RS256", "PS256", "ES256"). key: another Identity to sign with.
    sig_t_offset: seconds added to the JWS sigT (a signature made then)."""
    h = dict(headers or {})
    hfn = hashlib.sha512 if digest_alg.upper() == "SHA-512" else \
        hashlib.sha256
    h["Digest"] = "%s=%s" % (digest_alg, b64(hfn(body or b"").digest()))
    h["X-Request-ID"] = request_id or str(uuid.uuid4())
    h["Date"] = date or email.utils.formatdate(usegmt=True)
    h[cert_header] = cert_b64 if cert_b64 is not None else ident.cert_b64
    if names is None:
        names = ["digest", "x-request-id", "date"]
        for opt in ("psu-id", "psu-corporate-id", "tpp-redirect-uri"):
            if any(k.lower() == opt for k in h):
                names.append(opt)
    signer = key or ident
    if form == "cavage" and algorithm.startswith("rsa-"):
        hs = httpsig.HeaderSigner(key_id or ident.key_id, signer.key_pem,
                                  algorithm=algorithm, headers=names,
                                  sign_header="signature")
        return CaseInsensitiveDict(hs.sign(h, method="GET", path="/"))
    if form == "cavage":
        data = signing_string(h, names).encode()
        sig = signer.key.sign(data, ec.ECDSA(hashes.SHA256()))
        h["Signature"] = ('keyId="%s",algorithm="%s",headers="%s",'
                          'signature="%s"' % (key_id or ident.key_id,
                                              algorithm, " ".join(names),
                                              b64(sig)))
        return CaseInsensitiveDict(h)
    protected = {
        "alg": form, "b64": False, "crit": ["sigT", "sigD", "b64"],
        "x5t#S256": x5t or ident.x5t,
        "sigT": (datetime.datetime.now(datetime.timezone.utc) +
                 datetime.timedelta(seconds=sig_t_offset)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "sigD": {"mId": JWS_MID, "pars": names},
    }
    p64 = b64url(json.dumps(protected, separators=(",", ":")).encode())
    data = (p64 + "." + signing_string(h, names)).encode()
    if form == "RS256":
        sig = signer.key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    elif form == "PS256":
        sig = signer.key.sign(data, padding.PSS(padding.MGF1(hashes.SHA256()),
                                                32), hashes.SHA256())
    elif form == "ES256":
        r, s = decode_dss_signature(signer.key.sign(
            data, ec.ECDSA(hashes.SHA256())))
        sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    else:
        raise ValueError(form)
    h["Signature"] = "%s..%s" % (p64, b64url(sig))
    return CaseInsensitiveDict(h)


def http_date(offset=0):
    return email.utils.formatdate(time.time() + offset, usegmt=True)
