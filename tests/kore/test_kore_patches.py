"""Regression tests for the project's Kore 4.1.0 patches (conf/kore-patches/).

Run through `make test-kore` (builds tests/kore/echo_app.c against the
patched Kore objects), or directly:

    KT_ECHO_APP=build/tests/kore/echo_app /usr/bin/python3 -m pytest -q \
        tests/kore/test_kore_patches.py

The echo app runs as root with -f -n -r, two workers, seccomp on (unless
the binary was built with -DKORE_NO_SECCOMP: KT_SANITIZE=1), a plain-HTTP
and a TLS listener on free loopback ports, accesslog on. A second instance
runs without -n/-r (chroot + runas nobody, keymgr_root/keymgr_runas).
"""

import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from psd2lib import children, connections_held, free_port  # noqa: E402

APP = os.environ.get("KT_ECHO_APP", "build/tests/kore/echo_app")
SANITIZE = bool(os.environ.get("KT_SANITIZE"))
HOSTS = ("rsa.test", "ec.test", "mtls.test")
BODY_MAX = 4096
HEADER_MAX = 16384
START_TIMEOUT = 60 if SANITIZE else 20
HEADER_TIMEOUT = 3      # http_header_timeout and http_body_timeout
KEEPALIVE = 2           # http_keepalive_time


def sh(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_pki(d):
    """Throwaway CA, RSA and EC server certificates, a client certificate."""
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
       "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
       "-subj", "/CN=kt test CA", cwd=d)
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
       "-keyout", "rsa.key", "-out", "rsa.pem", "-days", "2",
       "-subj", "/CN=rsa.test", "-addext", "subjectAltName=DNS:rsa.test",
       cwd=d)
    sh("openssl", "req", "-x509", "-newkey", "ec",
       "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-keyout", "ec.key", "-out", "ec.pem", "-days", "2",
       "-subj", "/CN=ec.test", "-addext", "subjectAltName=DNS:ec.test",
       cwd=d)
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
       "-keyout", "mtls.key", "-out", "mtls.pem", "-days", "2",
       "-subj", "/CN=mtls.test", "-addext", "subjectAltName=DNS:mtls.test",
       cwd=d)
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes",
       "-keyout", "client.key", "-out", "client.csr",
       "-subj", "/O=kt/CN=tpp-client", cwd=d)
    sh("openssl", "x509", "-req", "-in", "client.csr", "-CA", "ca.pem",
       "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.pem",
       "-days", "2", cwd=d)
    sh("openssl", "genpkey", "-genparam", "-algorithm", "DH",
       "-pkeyopt", "group:ffdhe2048", "-out", "dh.pem", cwd=d)
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)


def write_conf(d, tls_port, plain_port, keydir, privsep=False):
    key = (lambda n: "/" + n) if privsep else (lambda n: os.path.join(keydir, n))
    priv = ""
    if privsep:
        priv = ("root %s\nrunas nobody\nkeymgr_root %s\nkeymgr_runas nobody\n"
                % (os.path.join(d, "root"), keydir))
    domains = ""
    # With keymgr_root the keymgr reads certfile and certkey inside its
    # chroot; workers read the client_verify CA file inside theirs.
    certdir = "" if privsep else keydir
    cadir = "" if privsep else keydir
    for name in HOSTS:
        extra = ""
        if name == "mtls.test":
            extra = "\tclient_verify %s/ca.pem\n" % cadir
        domains += """
domain %(name)s {
	attach tls
	certfile %(cd)s/%(base)s.pem
	certkey %(key)s
%(extra)s	accesslog %(d)s/access.log
	route /echo page_echo
	route /static page_static
	restrict /static get
}
""" % {"name": name, "cd": certdir, "base": name.split(".")[0],
       "key": key(name.split(".")[0] + ".key"), "extra": extra, "d": d}
    conf = """workers 2
worker_max_connections 128
worker_accept_threshold 1
pidfile %(d)s/kt.pid
tls_dhparam %(kd)s/dh.pem
http_header_max %(hm)d
http_body_max %(bm)d
http_header_timeout %(ht)d
http_body_timeout %(ht)d
http_keepalive_time %(ka)d
http_hsts_enable 31536000
%(priv)s
server tls {
	bind 127.0.0.1 %(tp)d
}
server plain {
	bind 127.0.0.1 %(pp)d
	tls no
}
%(domains)s
domain * {
	attach plain
	accesslog %(d)s/access.log
	route /echo page_echo
	route /static page_static
	restrict /static get
}
""" % {"d": d, "kd": keydir, "hm": HEADER_MAX, "bm": BODY_MAX,
       "priv": priv, "tp": tls_port, "pp": plain_port, "domains": domains,
       "ht": HEADER_TIMEOUT, "ka": KEEPALIVE}
    path = os.path.join(d, "kt.conf")
    with open(path, "w") as f:
        f.write(conf)
    return path


class Server:
    def __init__(self, d, keydir, privsep=False):
        self.d = d
        self.tls_port = free_port()
        self.plain_port = free_port((self.tls_port,))
        self.conf = write_conf(d, self.tls_port, self.plain_port, keydir,
                               privsep)
        if privsep:
            os.makedirs(os.path.join(d, "root"), exist_ok=True)
            shutil.copy(os.path.join(keydir, "ca.pem"),
                        os.path.join(d, "root", "ca.pem"))
        self.logpath = os.path.join(d, "server.log")
        self.log = open(self.logpath, "wb")
        args = ["stdbuf", "-oL", "-eL", os.path.abspath(APP), "-f"]
        if not privsep:
            args += ["-n", "-r"]
        env = dict(os.environ)
        # stdbuf works by LD_PRELOAD, which ASan wants to come after it.
        env["ASAN_OPTIONS"] = ":".join(filter(None, [
            env.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
        self.proc = subprocess.Popen(args + [self.conf], cwd=d, env=env,
                                     stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("echo_app exited: " + self.text())
            # parent: 2 workers + keymgr
            if len(children(self.proc.pid)) >= 3 and self._accepting():
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("echo_app did not start: " + self.text())
        # Workers get their certificates from the keymgr after start-up
        # ("TLS configuration for ... not yet complete"): wait for TLS.
        ready = 0
        while time.time() < deadline and ready < 6:
            ready = ready + 1 if self._tls_ready(keydir) else 0
            if not ready:
                time.sleep(0.2)
        if ready < 6:
            raise RuntimeError("TLS not ready: " + self.text())
        self.pids = children(self.proc.pid)

    def _tls_ready(self, keydir):
        for kind in ("rsa", "ec"):
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(os.path.join(keydir, kind + ".pem"))
            try:
                with socket.create_connection(("127.0.0.1", self.tls_port),
                                              timeout=5) as raw:
                    with ctx.wrap_socket(raw, server_hostname=kind + ".test"):
                        pass
            except (OSError, ssl.SSLError):
                return False
        return True

    def _accepting(self):
        for p in (self.tls_port, self.plain_port):
            try:
                socket.create_connection(("127.0.0.1", p), timeout=1).close()
            except OSError:
                return False
        return True

    def text(self):
        with open(self.logpath, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        kids = children(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # a SIGTERM during start-up can leave a worker behind: ours only
        for pid in kids:
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if b"echo_app" not in f.read():
                        continue
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.log.close()


@pytest.fixture(scope="session")
def pki():
    d = tempfile.mkdtemp(prefix="kt-pki-")
    os.chmod(d, 0o755)
    make_pki(d)
    yield d
    if not os.environ.get("KT_KEEP"):
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def srv(pki):
    d = tempfile.mkdtemp(prefix="kt-srv-")
    s = Server(d, pki)
    yield s
    s.stop()
    if not os.environ.get("KT_KEEP"):
        shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------------
# HTTP helpers (raw sockets: we want to see exactly what Kore sends)

def parse(raw):
    head, sep, rest = raw.partition(b"\r\n\r\n")
    assert sep, "no complete response: %r" % raw[:200]
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ", lines[0])
    assert m, lines[0]
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers.setdefault(k.strip().lower(), []).append(v.strip())
    h = {k: v[-1] for k, v in headers.items()}
    n = int(h.get("content-length", "0"))
    return int(m.group(1)), h, rest[:n], headers


def recv_all(sock, timeout=10):
    sock.settimeout(timeout)
    out = b""
    while True:
        try:
            b = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            break  # Kore closes after an error answer; data already read
        except socket.timeout:
            break
        if not b:
            break
        out += b
        if b"\r\n\r\n" in out:
            head, _, rest = out.partition(b"\r\n\r\n")
            m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            if m and len(rest) >= int(m.group(1)):
                break
    return out


def request(port, data, tls=None, host=None):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if tls is not None:
        sock = tls.wrap_socket(sock, server_hostname=host)
    try:
        sock.sendall(data)
        return parse(recv_all(sock))
    finally:
        sock.close()


def build(method="GET", path="/echo", host="x", headers=(), body=b""):
    h = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, path, host)
    for k, v in headers:
        h += "%s: %s\r\n" % (k, v)
    if body:
        h += "Content-Length: %d\r\n" % len(body)
    return h.encode() + b"\r\n" + body


def tls_ctx(pki, version, cafile, client=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = version
    ctx.maximum_version = version
    ctx.load_verify_locations(os.path.join(pki, cafile))
    if client:
        ctx.load_cert_chain(os.path.join(pki, "client.pem"),
                            os.path.join(pki, "client.key"))
    return ctx


def assert_json_error(status, h, body, want):
    assert status == want, (status, body)
    assert h.get("content-type") == "application/json"
    assert int(h["content-length"]) == len(body) > 0
    assert body.startswith(b'{"tppMessages":[{"category":"ERROR","code":"')
    assert ("%d " % want).encode() in body


# --------------------------------------------------------------------------
# 1. TLS under OpenSSL 3

VERSIONS = [("1.2", ssl.TLSVersion.TLSv1_2), ("1.3", ssl.TLSVersion.TLSv1_3)]


@pytest.mark.parametrize("vname,version", VERSIONS, ids=[v[0] for v in VERSIONS])
@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_tls_handshake(srv, pki, kind, vname, version):
    host = kind + ".test"
    ctx = tls_ctx(pki, version, kind + ".pem")
    sock = ctx.wrap_socket(socket.create_connection(
        ("127.0.0.1", srv.tls_port), timeout=10), server_hostname=host)
    try:
        assert sock.version() == "TLSv" + vname
        der = sock.getpeercert(binary_form=True)
        with open(os.path.join(pki, kind + ".pem")) as f:
            assert der == ssl.PEM_cert_to_DER_cert(f.read())
        if vname == "1.2":
            assert ("ECDSA" in sock.cipher()[0]) == (kind == "ec")
        sock.sendall(build(host=host, body=b'{"tls":true}'))
        status, h, body, _ = parse(recv_all(sock))
    finally:
        sock.close()
    assert status == 200
    assert body == b'{"tls":true}'
    assert "strict-transport-security" in h


@pytest.mark.parametrize("vname,version", VERSIONS, ids=[v[0] for v in VERSIONS])
def test_mtls_client_certificate_seen(srv, pki, vname, version):
    ctx = tls_ctx(pki, version, "mtls.pem", client=True)
    status, h, body, _ = request(srv.tls_port, build(host="mtls.test"),
                                 tls=ctx, host="mtls.test")
    assert status == 200
    assert "CN=tpp-client" in h.get("x-client-subject", "")


@pytest.mark.parametrize("vname,version", VERSIONS, ids=[v[0] for v in VERSIONS])
def test_mtls_without_client_certificate_refused(srv, pki, vname, version):
    """The server ends the handshake with an alert naming the missing
    certificate (TLS 1.2: handshake_failure during the handshake; TLS 1.3:
    certificate_required, which the client reads after its side of the
    handshake is done) and never sends an HTTP byte. The client reads
    before it writes: a request written after the server has closed makes
    the server's kernel answer with a reset, which can discard the alert
    before the client reads it (an EOF instead of the alert)."""
    ctx = tls_ctx(pki, version, "mtls.pem", client=False)
    raw = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
    got = b""
    try:
        with pytest.raises(ssl.SSLError) as refused:
            sock = ctx.wrap_socket(raw, server_hostname="mtls.test")
            while True:
                b = sock.recv(65536)
                if not b:
                    break
                got += b
    finally:
        raw.close()
    assert got == b""
    want = {"1.2": "SSLV3_ALERT_HANDSHAKE_FAILURE",
            "1.3": "TLSV13_ALERT_CERTIFICATE_REQUIRED"}[vname]
    assert refused.value.reason == want, refused.value


def test_no_client_cert_requested_without_client_verify(srv, pki):
    ctx = tls_ctx(pki, ssl.TLSVersion.TLSv1_3, "rsa.pem")
    status, h, _, _ = request(srv.tls_port, build(host="rsa.test"),
                              tls=ctx, host="rsa.test")
    assert status == 200 and "x-client-subject" not in h


# --------------------------------------------------------------------------
# 2. bodies on GET (and any method)

@pytest.mark.parametrize("method", ["GET", "DELETE", "POST", "PUT", "PATCH"])
def test_body_echoed_any_method(srv, method):
    body = b'{"iban":"DE02120300000000202051","n":1}'
    status, h, got, _ = request(srv.plain_port, build(
        method, headers=[("Content-Type", "application/json")], body=body))
    assert status == 200
    assert h["x-method"] == method
    assert got == body


def test_get_body_sent_after_headers(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n")
        time.sleep(0.2)
        sock.sendall(b'{"late":1}\n')
        status, h, got, _ = parse(recv_all(sock))
    finally:
        sock.close()
    assert status == 200 and got == b'{"late":1}\n'


def test_get_content_length_zero(srv):
    status, h, got, _ = request(srv.plain_port, build(
        headers=[("Content-Length", "0")]))
    assert status == 200 and got == b""


def test_get_body_over_max_is_413(srv):
    status, h, body, _ = request(srv.plain_port,
                                 build("GET", body=b"x" * (BODY_MAX + 1)))
    assert_json_error(status, h, body, 413)


def test_post_body_over_max_is_413(srv):
    status, h, body, _ = request(srv.plain_port,
                                 build("POST", body=b"x" * (BODY_MAX + 1)))
    assert_json_error(status, h, body, 413)


def test_chunked_refused(srv):
    data = (b"GET /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"\r\n3\r\nabc\r\n0\r\n\r\n")
    status, h, body, _ = request(srv.plain_port, data)
    assert_json_error(status, h, body, 411)
    data = (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Length: 3\r\n\r\nabc")
    status, h, body, _ = request(srv.plain_port, data)
    assert_json_error(status, h, body, 400)


# --------------------------------------------------------------------------
# 4. request header limits

def test_40_headers_delivered(srv):
    hdrs = [("X-Psd2-%02d" % i, "v%d" % i) for i in range(40)]
    status, h, _, _ = request(srv.plain_port, build(headers=hdrs))
    assert status == 200
    assert int(h["x-header-count"]) == 40
    assert int(h["x-header-bytes"]) == sum(len(k) + len(v) for k, v in hdrs)


def test_64_header_lines_delivered(srv):
    # Host + 63 more = 64 header lines (HTTP_REQ_HEADER_MAX); the last one
    # (a late Authorization header used to be dropped) must arrive.
    hdrs = [("X-H-%02d" % i, "v") for i in range(62)] + [("Authorization", "Bearer t")]
    status, h, _, _ = request(srv.plain_port, build(headers=hdrs))
    assert status == 200 and int(h["x-header-count"]) == 63
    assert int(h["x-header-bytes"]) == sum(len(k) + len(v) for k, v in hdrs)


def test_8k_header_block_delivered(srv):
    cert = "A" * 6000
    hdrs = [("TPP-Signature-Certificate", cert), ("Digest", "SHA-256=" + "b" * 44),
            ("X-Request-ID", "99391c7e-ad88-49ec-a2ad-99ddcb1f7721")]
    data = build(headers=hdrs + [("X-Pad", "p" * 2500)])
    assert 8000 < len(data) < HEADER_MAX
    status, h, _, _ = request(srv.plain_port, data)
    assert status == 200
    assert int(h["x-header-count"]) == 4


def test_20k_header_block_is_431(srv):
    hdrs = [("X-Big-%d" % i, "z" * 1000) for i in range(20)]
    status, h, body, _ = request(srv.plain_port, build(headers=hdrs))
    assert_json_error(status, h, body, 431)


def test_70_header_lines_is_431(srv):
    hdrs = [("X-H-%02d" % i, "v") for i in range(70)]
    data = build(headers=hdrs)
    assert len(data) < 2048
    status, h, body, _ = request(srv.plain_port, data)
    assert_json_error(status, h, body, 431)


# --------------------------------------------------------------------------
# 5. error bodies from the application hook

def test_unknown_route_404(srv):
    status, h, body, _ = request(srv.plain_port, build(path="/nope"))
    assert_json_error(status, h, body, 404)
    assert h["connection"] == "close"


def test_wrong_method_405(srv):
    status, h, body, _ = request(srv.plain_port, build("POST", "/static",
                                                       body=b"{}"))
    assert_json_error(status, h, body, 405)


def test_malformed_request_line_400(srv):
    status, h, body, _ = request(srv.plain_port, b"GARBAGE\r\nHost: x\r\n\r\n")
    assert_json_error(status, h, body, 400)


def test_missing_host_400(srv):
    status, h, body, _ = request(srv.plain_port, b"GET /echo HTTP/1.1\r\n\r\n")
    assert_json_error(status, h, body, 400)


def test_uri_too_long_414(srv):
    status, h, body, _ = request(srv.plain_port, build(path="/echo?" + "q" * 2100))
    assert_json_error(status, h, body, 414)


def test_error_over_tls(srv, pki):
    ctx = tls_ctx(pki, ssl.TLSVersion.TLSv1_3, "rsa.pem")
    status, h, body, _ = request(srv.tls_port, build(host="rsa.test", path="/nope"),
                                 tls=ctx, host="rsa.test")
    assert_json_error(status, h, body, 404)


def test_static_ok_and_keepalive(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        for _ in range(3):
            sock.sendall(build(path="/static"))
            status, h, body, _ = parse(recv_all(sock))
            assert status == 200 and body == b"ok"
            assert h["connection"] == "keep-alive"
    finally:
        sock.close()


# --------------------------------------------------------------------------
# pipelining (patch 0008)

def read_responses(sock, n, timeout=10):
    sock.settimeout(timeout)
    buf, out = b"", []
    while len(out) < n:
        while True:
            head, sep, rest = buf.partition(b"\r\n\r\n")
            if not sep:
                break
            m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            ln = int(m.group(1)) if m else 0
            if len(rest) < ln:
                break
            out.append(parse(head + b"\r\n\r\n" + rest[:ln]))
            buf = rest[ln:]
        if len(out) >= n:
            break
        b = sock.recv(65536)
        if not b:
            break
        buf += b
    return out


def test_pipelining_in_order(srv):
    data = (build(path="/static") + build(body=b"abc") + build(path="/static")
            + build("POST", body=b"hi") + build(path="/nope"))
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(data)
        got = read_responses(sock, 5)
    finally:
        sock.close()
    assert [(r[0], r[2]) for r in got[:4]] == [
        (200, b"ok"), (200, b"abc"), (200, b"ok"), (200, b"hi")]
    assert len(got) == 5 and got[4][0] == 404


def test_pipelining_after_split_body(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3000\r\n\r\n"
                     + b"a" * 1000)
        time.sleep(0.2)
        sock.sendall(b"a" * 2000 + build(path="/static") + build(body=b"zz"))
        got = read_responses(sock, 3)
    finally:
        sock.close()
    assert [(r[0], r[2]) for r in got] == [
        (200, b"a" * 3000), (200, b"ok"), (200, b"zz")]


def test_pipelining_many_requests_over_header_buffer(srv):
    """More pipelined requests than the 16 KiB header buffer holds, with
    the worker's timer armed (patch 0011): all answered, in order."""
    one = build(path="/static")
    n = HEADER_MAX // len(one) + 50
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        t0 = time.time()
        sock.sendall(one * n)
        got = read_responses(sock, n)
        took = time.time() - t0
    finally:
        sock.close()
    assert len(got) == n and all(r[0] == 200 and r[2] == b"ok" for r in got)
    assert took < 5, took


def test_pipelining_large_leftover(srv):
    small = build(path="/static")
    big = build(path="/static", headers=[("X-Pad", "p" * (HEADER_MAX - 300))])
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(small + big + small)
        got = read_responses(sock, 3)
    finally:
        sock.close()
    assert [(r[0], r[2]) for r in got] == [(200, b"ok")] * 3


# --------------------------------------------------------------------------
# idle keep-alive and stalled requests (patch 0012)

def read_until_close(sock, timeout):
    """(bytes received, seconds until the server closed); fails when the
    connection is still open after timeout."""
    sock.settimeout(timeout)
    t0, out = time.time(), b""
    while True:
        try:
            b = sock.recv(65536)
        except ConnectionResetError:
            b = b""
        except socket.timeout:
            raise AssertionError("still open after %d s" % timeout)
        if not b:
            return out, time.time() - t0
        out += b


def test_idle_keepalive_closed_quietly(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(build(path="/static"))
        status, h, _, _ = parse(recv_all(sock))
        assert status == 200 and h["keep-alive"] == "timeout=%d" % KEEPALIVE
        out, took = read_until_close(sock, KEEPALIVE + 5)
    finally:
        sock.close()
    assert out == b"", out
    assert KEEPALIVE - 0.5 <= took <= KEEPALIVE + 2, took


def test_unused_connection_closed_quietly(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        out, took = read_until_close(sock, HEADER_TIMEOUT + 5)
    finally:
        sock.close()
    assert out == b"" and took <= HEADER_TIMEOUT + 2, (out, took)


def test_stalled_request_408_from_first_byte(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(build(path="/static"))
        assert parse(recv_all(sock))[0] == 200
        time.sleep(KEEPALIVE * 0.6)
        t0 = time.time()
        sock.sendall(b"GET /static HTTP/1.1\r\nHost: x\r\n")
        out, _ = read_until_close(sock, HEADER_TIMEOUT + 5)
        took = time.time() - t0
    finally:
        sock.close()
    status, h, body, _ = parse(out)
    assert_json_error(status, h, body, 408)
    assert HEADER_TIMEOUT - 0.5 <= took <= HEADER_TIMEOUT + 2, took


def test_stalled_body_408(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 10\r\n\r\nabc")
        out, took = read_until_close(sock, HEADER_TIMEOUT + 5)
    finally:
        sock.close()
    status, h, body, _ = parse(out)
    assert_json_error(status, h, body, 408)


# --------------------------------------------------------------------------
# Content-Length (patch 0013)

@pytest.mark.parametrize("values", [
    ["0", "30"], ["30", "0"], ["+3"], ["-3"], ["0x3"], ["3, 3"], ["3 3"],
    [""],
], ids=["0-30", "30-0", "plus", "minus", "hex", "list", "space", "empty"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_bad_content_length_400(srv, method, values):
    data = ("%s /echo HTTP/1.1\r\nHost: x\r\n" % method).encode()
    for v in values:
        data += b"Content-Length: " + v.encode() + b"\r\n"
    data += b"\r\n" + b"abc" + b"x" * 27
    status, h, body, _ = request(srv.plain_port, data)
    assert_json_error(status, h, body, 400)
    assert h["connection"] == "close"


def test_identical_content_length_lines_one_value(srv):
    data = (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            b"Content-Length: 3\r\n\r\nabc")
    status, h, body, _ = request(srv.plain_port, data)
    assert status == 200 and body == b"abc"


def test_huge_content_length_413(srv):
    data = (b"POST /echo HTTP/1.1\r\nHost: x\r\n"
            b"Content-Length: 99999999999999999999999999\r\n\r\nabc")
    status, h, body, _ = request(srv.plain_port, data)
    assert_json_error(status, h, body, 413)


# --------------------------------------------------------------------------
# methods, version, control bytes (patch 0014)

@pytest.mark.parametrize("line", [
    b"get /echo HTTP/1.1", b"Post /echo HTTP/1.1", b"GET /echo http/1.1",
    b"GET /echo HTTP/1.1x", b"GET /echo HTTP/11"])
def test_case_sensitive_method_and_version_400(srv, line):
    status, h, body, _ = request(srv.plain_port, line + b"\r\nHost: x\r\n\r\n")
    assert_json_error(status, h, body, 400)


def test_unsupported_version_505(srv):
    status, _, _, _ = request(srv.plain_port,
                              b"GET /echo HTTP/2.0\r\nHost: x\r\n\r\n")
    assert status == 505


@pytest.mark.parametrize("value", [b"a\x00b", b"a\rX-Evil: 1", b"a\x01b",
                                   b"a\x7f"],
                         ids=["nul", "bare-cr", "soh", "del"])
def test_control_bytes_in_value_400(srv, value):
    data = b"GET /echo HTTP/1.1\r\nHost: x\r\nX-V: " + value + b"\r\n\r\n"
    status, h, body, _ = request(srv.plain_port, data)
    assert_json_error(status, h, body, 400)


def test_nul_value_not_truncated_silently(srv):
    """Before patch 0014 "X-V: a\0b" reached the handler as "a"."""
    data = b"GET /echo HTTP/1.1\r\nHost: x\r\nX-V: ab\x00\r\n\r\n"
    status, _, _, _ = request(srv.plain_port, data)
    assert status == 400


# --------------------------------------------------------------------------
# HEAD wherever GET (patch 0015)

def test_head_on_get_only_route(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(build("HEAD", "/static") + build(path="/static"))
        sock.settimeout(10)
        buf = b""
        while buf.count(b"\r\n\r\n") < 2 or not buf.endswith(b"ok"):
            b = sock.recv(65536)
            if not b:
                break
            buf += b
    finally:
        sock.close()
    head, _, rest = buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert re.search(rb"(?im)^content-length: 2$", head)
    # No body after the HEAD answer: the GET answer follows directly.
    assert rest.startswith(b"HTTP/1.1 200 ") and rest.endswith(b"\r\n\r\nok")


def test_head_error_answer_has_no_body(srv):
    sock = socket.create_connection(("127.0.0.1", srv.plain_port), timeout=10)
    try:
        sock.sendall(build("HEAD", "/nope"))
        out, _ = read_until_close(sock, 10)
    finally:
        sock.close()
    head, _, rest = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404 ")
    assert int(re.search(rb"(?im)^content-length: (\d+)", head).group(1)) > 0
    assert rest == b""


# --------------------------------------------------------------------------
# 7. HSTS

def test_no_hsts_on_plain_http(srv):
    status, h, _, _ = request(srv.plain_port, build(path="/static"))
    assert status == 200
    assert "strict-transport-security" not in h
    status, h, _, _ = request(srv.plain_port, build(path="/nope"))
    assert "strict-transport-security" not in h


# --------------------------------------------------------------------------
# New connections to the worker holding the fewest (patch 0031)

def test_accept_spreads_serial_connections(srv):
    """Keep-alive connections opened one after another (a load
    balancer's pool) are spread evenly over the two workers; stock Kore
    gave them all, or nearly all, to one worker."""
    socks = []
    try:
        for _ in range(24):
            s = socket.create_connection(("127.0.0.1", srv.plain_port),
                                         timeout=10)
            socks.append(s)
            s.sendall(build(path="/static"))
            assert parse(recv_all(s))[0] == 200
        held = connections_held(
            srv.plain_port, [s.getsockname()[1] for s in socks], srv.pids)
    finally:
        for s in socks:
            s.close()
    counts = sorted(n for n in held.values() if n)
    assert sum(counts) == 24 and len(counts) == 2, held
    assert counts[1] - counts[0] <= 2, held


# --------------------------------------------------------------------------
# 3/6. access log on, seccomp on, no worker died (keep these last)

def test_zz_accesslog_and_workers_alive(srv, pki):
    ctx = tls_ctx(pki, ssl.TLSVersion.TLSv1_2, "ec.pem")
    for i in range(20):
        assert request(srv.plain_port, build(body=b"%d" % i))[0] == 200
        assert request(srv.tls_port, build(host="ec.test", path="/static"),
                       tls=ctx, host="ec.test")[0] == 200
    path = os.path.join(srv.d, "access.log")
    deadline = time.time() + 20
    lines = []
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                lines = f.read().splitlines()
            if sum('"GET /static HTTP/1.1" 200' in l for l in lines) >= 20:
                break
        time.sleep(0.25)
    assert sum('"GET /static HTTP/1.1" 200' in l for l in lines) >= 20, lines[-5:]
    assert any("tpp-client" in l for l in lines)  # mTLS CN logged
    assert srv.proc.poll() is None
    assert children(srv.proc.pid) == srv.pids
    log = srv.text()
    assert not re.search(r"exited with status|\) gone|sandbox violation|"
                         r"AddressSanitizer|runtime error", log), log[-3000:]


# --------------------------------------------------------------------------
# keymgr_root / keymgr_runas (chroot + privilege drop, separate instance)

def test_keymgr_root_and_runas(pki):
    d = tempfile.mkdtemp(prefix="kt-priv-")
    os.chmod(d, 0o755)
    s = Server(d, pki, privsep=True)
    try:
        for kind in ("rsa", "ec"):
            for _, version in VERSIONS:
                ctx = tls_ctx(pki, version, kind + ".pem")
                status, _, body, _ = request(
                    s.tls_port, build(host=kind + ".test", body=b"priv"),
                    tls=ctx, host=kind + ".test")
                assert status == 200 and body == b"priv"
        ctx = tls_ctx(pki, ssl.TLSVersion.TLSv1_3, "mtls.pem", client=True)
        status, h, _, _ = request(s.tls_port, build(host="mtls.test"),
                                  tls=ctx, host="mtls.test")
        assert status == 200 and "CN=tpp-client" in h["x-client-subject"]
        assert children(s.proc.pid) == s.pids
        assert not re.search(r"exited with status|\) gone|sandbox violation",
                             s.text()), s.text()[-3000:]
    finally:
        s.stop()
        if not os.environ.get("KT_KEEP"):
            shutil.rmtree(d, ignore_errors=True)
