"""A FAPI 2.0 client nobody here wrote, for the tests: panva's
openid-client (npm, a certified FAPI 2.0 relying party), pinned in
tests/fapi-client and driven by its client.mjs in two steps (the PAR,
then after the PSU's login the code grant and the API calls), and the
TPP's signing gateway its API calls go through: no OAuth library makes
the bank's HTTP request signature."""

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psd2lib
from tpp_keys import b64url_sha256

SRC = os.path.join(psd2lib.TOP, "tests", "fapi-client")
DIR = os.path.join(psd2lib.TOP, "var", "fapi-client")


def install():
    """openid-client as locked in tests/fapi-client, by npm ci (again
    only when the lock changes)."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), "%s not found: the FAPI 2.0 client " \
            "tests need Node.js 20 or later and npm" % tool
    os.makedirs(DIR, exist_ok=True)
    shutil.copy(os.path.join(SRC, "client.mjs"), DIR)
    lock = os.path.join(SRC, "package-lock.json")
    done = os.path.join(DIR, ".installed")
    with open(lock, "rb") as f:
        want = f.read()
    if os.path.exists(done) and open(done, "rb").read() == want:
        return
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(SRC, name), DIR)
    p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                        "--ignore-scripts"], cwd=DIR, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, "npm ci of openid-client failed:\n" + \
        p.stdout[-2000:] + p.stderr[-2000:]
    with open(done, "wb") as f:
        f.write(want)


def node(*args):
    """client.mjs with args: its JSON result."""
    p = subprocess.run(["node", os.path.join(DIR, "client.mjs")] +
                       list(args), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, "openid-client failed:\n" + p.stderr
    return json.loads(p.stdout)


def thumbprint(jwk):
    """RFC 7638: the SHA-256 of an EC key's required members."""
    text = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")},
                      separators=(",", ":"), sort_keys=True)
    return b64url_sha256(text)


class Gateway:
    """The TPP's signing gateway: a call to it, with its target in
    X-Psd2-Target, is signed with the TPP's certificate and sent on
    (with **send: requests' options, such as the QWAC for mTLS); the
    answer comes back as it is."""

    FORWARD = ("authorization", "dpop", "content-type", "accept",
               "tpp-redirect-uri", "psu-ip-address")

    def __init__(self, signer, **send):
        gw = self

        class Handler(BaseHTTPRequestHandler):
            def relay(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                h = {k: v for k, v in self.headers.items()
                     if k.lower() in Gateway.FORWARD}
                r = gw.signer.request(self.command,
                                      self.headers["X-Psd2-Target"],
                                      body=body, headers=h, timeout=30,
                                      **gw.send)
                gw.seen.append((self.command, r.status_code,
                                self.headers.get("DPoP") is not None))
                self.send_response(r.status_code)
                for k in ("Content-Type", "DPoP-Nonce", "WWW-Authenticate",
                          "Location"):
                    if k in r.headers:
                        self.send_header(k, r.headers[k])
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = relay

            def log_message(self, *a):
                pass

        self.signer = signer
        self.send = send
        self.seen = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever,
                         daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
