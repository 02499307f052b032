"""HTTP/1.1 on the wire, against the running psd2gate:
pipelining (also async database routes and leftovers as large as the
header buffer), idle keep-alive connections closed quietly, strict
Content-Length, case-sensitive methods, control bytes in header fields,
HEAD wherever GET. Raw sockets: an HTTP library would hide what is on the
wire. The Kore side of each fix is a patch in conf/kore-patches/ (0011 to
0015) with its own tests in tests/kore/.
"""

import json
import re
import socket
import time
import urllib.parse
import uuid

import pytest

import psd2lib
from psd2lib import MAIN_PORT, MAIN_URL

HEADER_MAX = 16384      # http_header_max in conf/base.conf
API_LIST = "/auth/v1/psd2/account/account-list"
SHORT_KEEPALIVE = 2     # the short-timeout instance below
SHORT_HEADER = 3
SHORT_BODY = 3


# --------------------------------------------------------------------------
# a raw HTTP/1.1 connection

class Conn:
    def __init__(self, port=MAIN_PORT, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=timeout)
        self.buf = b""
        self.eof = False

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        try:
            b = self.sock.recv(65536)
        except ConnectionResetError:
            b = b""
        if not b:
            self.eof = True
        self.buf += b
        return bool(b)

    def response(self, head=False):
        """One response: (status, headers (lower-case name -> last value),
        body). head: the request was HEAD (no body whatever the
        content-length says)."""
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                raise AssertionError("connection closed before a complete "
                                     "response: %r" % self.buf[:300])
        raw, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3}) ", lines[0])
        assert m, "bad status line %r" % lines[0]
        h = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            h[k.strip().lower()] = v.strip()
        n = 0 if head else int(h.get("content-length", "0"))
        while len(self.buf) < n:
            if not self._fill():
                raise AssertionError("connection closed inside a body")
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(m.group(1)), h, body

    def responses(self, n, head=()):
        return [self.response(head=i in head) for i in range(n)]

    def closed_quietly(self, within):
        """True when the server closes the connection within `within`
        seconds without sending a byte; the bytes otherwise."""
        self.sock.settimeout(within)
        try:
            while self._fill():
                pass
        except socket.timeout:
            return "still open after %.1f s, got %r" % (within, self.buf)
        return True if self.buf == b"" else self.buf


def req(method="GET", path="/health", headers=(), body=b"", host=None):
    h = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (
        method, path, host or "127.0.0.1:%d" % MAIN_PORT)
    for k, v in headers:
        h += "%s: %s\r\n" % (k, v)
    if body:
        h += "Content-Length: %d\r\n" % len(body)
    return h.encode("latin-1") + b"\r\n" + body


def raw_head(lines):
    """A request from raw header lines (bytes), ended by an empty line."""
    return b"\r\n".join(lines) + b"\r\n\r\n"


def assert_kore_error(status, h, body, want):
    """Kore's own error answer: the JSON tppMessages body (patch 0006 hook)
    and connection: close."""
    assert status == want, (status, body)
    assert h.get("content-type") == "application/json", h
    assert h.get("connection") == "close", h
    msgs = json.loads(body)["tppMessages"]
    assert len(msgs) == 1 and msgs[0]["category"] == "ERROR", body
    assert msgs[0]["code"] and msgs[0]["text"], body


def log_lines(server, since, pattern, n=1, wait=5.0):
    """The log lines since `since` matching pattern, once there are n."""
    deadline = time.time() + wait
    while True:
        found = [ln for ln in server.log_text(since).splitlines()
                 if re.search(pattern, ln)]
        if len(found) >= n or time.time() > deadline:
            return found
        time.sleep(0.1)


def token_form(client, code):
    body = urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": code,
        "redirect_uri": client.redirect_uri}).encode()
    return req("POST", "/auth/oauth/token", headers=[
        ("Authorization", psd2lib.basic_auth(client.client_id,
                                             client.secret)),
        ("Content-Type", "application/x-www-form-urlencoded")], body=body)


# --------------------------------------------------------------------------
# connections spread over the workers

def test_pooled_connections_spread_over_workers(server):
    """A load balancer's pool grows one keep-alive connection at a time:
    those connections are spread over the instance's workers (Kore patch
    0031 with conf/base.conf's worker_accept_threshold 1), not all held
    by whichever worker had Kore's accept lock first while the others
    idle."""
    kids = psd2lib.children(server.proc.pid)
    conns = []
    try:
        for _ in range(24):
            c = Conn(server.port)
            c.send(req())
            assert c.response()[0] == 200
            conns.append(c)
        held = psd2lib.connections_held(
            server.port, [c.sock.getsockname()[1] for c in conns], kids)
    finally:
        for c in conns:
            c.close()
    assert sum(held.values()) == len(conns), held
    workers = sorted(n for n in held.values() if n)
    # conf/test.conf runs 2 workers: 12 each (patch 0031), give or take
    # a deferral that timed out.
    assert len(workers) == 2, held
    assert workers[1] - workers[0] <= 2, held


# --------------------------------------------------------------------------
# pipelining

def test_pipelined_health_all_answered_in_order():
    with Conn(timeout=5) as c:
        t0 = time.time()
        c.send(req() * 3)
        got = c.responses(3)
        took = time.time() - t0
    for status, h, body in got:
        assert status == 200 and json.loads(body) == {"status": "ok"}
        assert h["connection"] == "keep-alive"
    # Not one answer and then a wait for the next worker wake-up.
    assert took < 2.0, took


def test_pipelined_consents_page():
    with Conn(timeout=5) as c:
        c.send(req(path="/auth/consents") * 3)
        got = c.responses(3)
    assert [g[0] for g in got] == [got[0][0]] * 3
    assert got[0][0] in (200, 302)
    for _, h, _ in got:
        assert h["connection"] == "keep-alive"


def test_pipelined_database_routes(client_factory):
    """The token endpoint (client check and code lookup in PostgreSQL,
    asynchronously) three times on one connection, between /health."""
    client = client_factory()
    codes = ["nosuchcode%s" % uuid.uuid4().hex for _ in range(3)]
    data = req()
    for code in codes:
        data += token_form(client, code)
    data += req()
    with Conn(timeout=10) as c:
        c.send(data)
        got = c.responses(5)
    assert got[0][0] == 200 and got[4][0] == 200
    for status, h, body in got[1:4]:
        assert status == 400, body
        assert json.loads(body)["error"] == "invalid_grant"
        assert h["connection"] == "keep-alive"


def test_pipelined_signed_account_list(psu_factory, signer):
    """Three signed AIS calls (bearer check, signature replay marks and
    the accounts, all in PostgreSQL) pipelined with a real token."""
    psu = psu_factory()
    client = psd2lib.sandbox_client()
    code, _, _, _ = psd2lib.run_code_flow(client, psu)
    r = psd2lib.exchange_code(client, code)
    assert r.status_code == 200, r.text
    token = r.json()["access_token"]
    sig = signer.for_token(token)
    url = MAIN_URL + API_LIST
    data = b""
    for _ in range(3):
        h = sig.headers("GET", url, b"", {
            "Authorization": "Bearer " + token,
            "Content-Type": "application/json"})
        data += req(path=API_LIST, headers=list(h.items()))
    with Conn(timeout=10) as c:
        c.send(data)
        got = c.responses(3)
    ibans = sorted(a[0] for a in psu.accounts)
    for status, h, body in got:
        assert status == 200, body
        assert sorted(a["iban"] for a in json.loads(body)["accounts"]) == \
            ibans
        assert h["connection"] == "keep-alive"


def test_pipelined_leftover_fills_header_buffer():
    """More pipelined requests than the header buffer holds: the first
    read fills the buffer (16 KiB) with requests; every one is answered,
    in order."""
    n = HEADER_MAX // len(req()) + 60
    with Conn(timeout=10) as c:
        c.send(req() * n)
        got = c.responses(n)
    assert len(got) == n
    assert all(g[0] == 200 and g[2] == b'{"status":"ok"}' for g in got)


def test_pipelined_large_header_block_after_small_request():
    """A second request whose header block almost fills the header buffer,
    sent with the first in one write: the leftover after the first request
    is nearly the whole buffer."""
    small = req()
    big = req(headers=[("X-Pad", "p" * (HEADER_MAX - len(small) - 200))])
    assert HEADER_MAX - 300 < len(big) < HEADER_MAX
    with Conn(timeout=10) as c:
        c.send(small + big + small)
        got = c.responses(3)
    assert [g[0] for g in got] == [200, 200, 200]


def test_pipelined_error_ends_connection_after_earlier_answers(server):
    """A malformed request after a good one: the good one is answered,
    then Kore's 400 with its JSON body, then the connection closes. The
    400's log line is its own (no method and path), not the earlier
    request's."""
    since = server.log_size()
    with Conn(timeout=5) as c:
        c.send(req() + b"get /health HTTP/1.1\r\nHost: x\r\n\r\n" + req())
        s1, _, _ = c.response()
        s2, h2, b2 = c.response()
        assert c.closed_quietly(5) is True
    assert s1 == 200
    assert_kore_error(s2, h2, b2, 400)
    lines = log_lines(server, since, r"status=400")
    assert len(lines) == 1, lines
    assert "method=- path=- status=400" in lines[0], lines


# --------------------------------------------------------------------------
# Content-Length (RFC 9112 6.3)

CL_BAD = [
    ("two values 0 then 30", ["0", "30"]),
    ("two values 30 then 0", ["30", "0"]),
    ("plus sign", ["+3"]),
    ("minus sign", ["-3"]),
    ("hex", ["0x3"]),
    ("list", ["3, 3"]),
    ("inner space", ["3 3"]),
]


@pytest.mark.parametrize("method,path", [("GET", "/health"),
                                         ("POST", "/auth/oauth/token")])
@pytest.mark.parametrize("name,values", CL_BAD, ids=[c[0] for c in CL_BAD])
def test_bad_content_length_is_400_and_close(server, method, path, name,
                                             values):
    since = server.log_size()
    lines = [("%s %s HTTP/1.1" % (method, path)).encode(), b"Host: x",
             b"Content-Type: application/x-www-form-urlencoded"]
    lines += [b"Content-Length: " + v.encode() for v in values]
    with Conn(timeout=5) as c:
        c.send(raw_head(lines) + b"a=b" + b"x" * 27 + req())
        status, h, body = c.response()
        assert c.closed_quietly(5) is True
    assert_kore_error(status, h, body, 400)
    assert log_lines(server, since, r"status=400"), "no log line"


def test_identical_content_length_lines_accepted():
    """Identical repeated lines count as one value (RFC 9110 8.6 allows
    either): the token endpoint itself answers (no client: 401)."""
    body = b"grant_type=client_credentials"
    lines = [b"POST /auth/oauth/token HTTP/1.1", b"Host: x",
             b"Content-Type: application/x-www-form-urlencoded",
             b"Content-Length: %d" % len(body),
             b"Content-Length: %d" % len(body)]
    with Conn(timeout=5) as c:
        c.send(raw_head(lines) + body + req())
        status, h, rbody = c.response()
        s2, _, _ = c.response()
    assert status == 401, rbody
    assert json.loads(rbody)["error"] == "invalid_client"
    assert s2 == 200


# --------------------------------------------------------------------------
# methods and control bytes

@pytest.mark.parametrize("line", [
    b"get /health HTTP/1.1", b"Get /health HTTP/1.1",
    b"head /health HTTP/1.1", b"post /auth/oauth/token HTTP/1.1",
    b"GET /health http/1.1",
])
def test_lower_case_method_or_version_refused(server, line):
    since = server.log_size()
    with Conn(timeout=5) as c:
        c.send(raw_head([line, b"Host: x"]))
        status, h, body = c.response()
        assert c.closed_quietly(5) is True
    assert_kore_error(status, h, body, 400)
    assert log_lines(server, since, r"status=400"), "no log line"


@pytest.mark.parametrize("value", [
    b"a\x00b", b"\x00", b"abc\x00", b"a\rb", b"a\rHost: evil",
    b"a\x01b", b"a\x1fb", b"a\x7fb", b"a\x0bb",
], ids=["nul", "nul-only", "nul-end", "bare-cr", "bare-cr-header",
        "soh", "us", "del", "vt"])
def test_control_bytes_in_header_value_refused(server, value):
    since = server.log_size()
    with Conn(timeout=5) as c:
        c.send(raw_head([b"GET /health HTTP/1.1", b"Host: x",
                         b"X-Probe: " + value]))
        status, h, body = c.response()
        assert c.closed_quietly(5) is True
    assert_kore_error(status, h, body, 400)
    assert log_lines(server, since, r"status=400"), "no log line"


def test_nul_in_request_line_refused():
    with Conn(timeout=5) as c:
        c.send(raw_head([b"GET /health\x00x HTTP/1.1", b"Host: x"]))
        status, h, body = c.response()
    assert_kore_error(status, h, body, 400)


# --------------------------------------------------------------------------
# HEAD wherever GET

HEAD_PATHS = ["/health", "/assets/style.css", "/auth/consents",
              "/auth/consents?lang=de",
              "/auth/oauth/authorize?response_type=code&client_id=sandbox-tpp"
              "&redirect_uri=http%3A%2F%2F127.0.0.1%3A8000%2Fcallback"
              "&scope=ACCOUNT_INFORMATION&state=xyz"]


@pytest.mark.parametrize("path", HEAD_PATHS)
def test_head_like_get_without_body(path):
    """HEAD gives GET's status and header fields and no body; the next
    pipelined answer follows directly (so no body bytes were sent)."""
    with Conn(timeout=5) as c:
        c.send(req("GET", path) + req("HEAD", path) + req())
        gs, gh, gbody = c.response()
        hs, hh, hbody = c.response(head=True)
        ns, _, nbody = c.response()
    assert hs == gs and hs in (200, 302), (gs, hs)
    assert hbody == b""
    assert ns == 200 and nbody == b'{"status":"ok"}'
    for k in ("content-type", "content-length", "cache-control",
              "content-security-policy"):
        assert hh.get(k) == gh.get(k), (k, gh.get(k), hh.get(k))
    assert int(hh["content-length"]) == len(gbody)


def test_head_signed_account_list(signer):
    """An API route: HEAD runs the same checks as GET (here: no token,
    401 with the bearer challenge), without a body."""
    url = MAIN_URL + API_LIST
    h = signer.headers("HEAD", url, b"", {"Content-Type":
                                          "application/json"})
    g = signer.headers("GET", url, b"", {"Content-Type":
                                         "application/json"})
    with Conn(timeout=5) as c:
        c.send(req("GET", API_LIST, headers=list(g.items())) +
               req("HEAD", API_LIST, headers=list(h.items())) + req())
        gs, gh, gbody = c.response()
        hs, hh, hbody = c.response(head=True)
        ns, _, _ = c.response()
    assert gs == 401 and hs == 401, (gs, hs, gbody)
    assert hh["content-length"] == gh["content-length"]
    assert hh.get("www-authenticate") == gh.get("www-authenticate")
    assert hbody == b"" and ns == 200


def test_head_on_post_route_still_405():
    with Conn(timeout=5) as c:
        c.send(req("HEAD", "/auth/oauth/token"))
        status, h, body = c.response(head=True)
        assert c.closed_quietly(5) is True
    assert status == 405 and body == b""
    assert int(h["content-length"]) > 0
    assert h["content-type"] == "application/json"


def test_head_unknown_path_404_without_body():
    with Conn(timeout=5) as c:
        c.send(req("HEAD", "/no/such/path"))
        status, h, body = c.response(head=True)
        # Nothing after the header block: the connection just closes.
        assert c.closed_quietly(5) is True
    assert status == 404 and int(h["content-length"]) > 0


# --------------------------------------------------------------------------
# keep-alive and timeouts (an instance with short timeouts)

@pytest.fixture(scope="module")
def short_timeouts(service_setup):
    """psd2gate with http_keepalive_time 2, http_header_timeout 3 and
    http_body_timeout 3 on a free port (a derived copy of
    conf/test.conf)."""
    port = psd2lib.free_port()
    path = psd2lib.derived_conf("conf/test.conf", port, "short-timeouts")
    with open(path, "a") as f:
        f.write("\n# test_http_protocol.py: short timeouts\n"
                "http_keepalive_time\t%d\nhttp_header_timeout\t%d\n"
                "http_body_timeout\t%d\n" %
                (SHORT_KEEPALIVE, SHORT_HEADER, SHORT_BODY))
    srv = psd2lib.Server(path, port, "short-timeouts")
    srv.start()
    yield srv
    # Stopped while a request waits for its body: under the sanitizer
    # build LeakSanitizer reported its header buffer (Kore patch 0016).
    with Conn(port) as c:
        c.send(b"POST /auth/oauth/token HTTP/1.1\r\nHost: x\r\n"
               b"Content-Length: 40\r\n\r\ngrant_type=")
        time.sleep(0.5)
        srv.stop()
    found = srv.sanitizer_reports()
    assert not srv.problems and not found, (srv.problems, found,
                                            srv.tail(40))


def test_idle_keepalive_closed_quietly(short_timeouts):
    with Conn(short_timeouts.port, timeout=5) as c:
        c.send(req())
        status, h, _ = c.response()
        assert status == 200
        assert h["keep-alive"] == "timeout=%d" % SHORT_KEEPALIVE
        t0 = time.time()
        assert c.closed_quietly(SHORT_KEEPALIVE + 4) is True
        took = time.time() - t0
    assert SHORT_KEEPALIVE - 0.5 <= took <= SHORT_KEEPALIVE + 2, took


def test_new_connection_without_request_closed_quietly(short_timeouts):
    with Conn(short_timeouts.port, timeout=5) as c:
        assert c.closed_quietly(SHORT_HEADER + 4) is True


def test_pause_shorter_than_keepalive_keeps_connection(short_timeouts):
    with Conn(short_timeouts.port, timeout=5) as c:
        for _ in range(3):
            c.send(req())
            assert c.response()[0] == 200
            time.sleep(SHORT_KEEPALIVE / 2)


def test_stalled_request_gets_408(short_timeouts):
    """A request that started and stalled gets 408 (JSON body, log line),
    counted from its first byte, not from the previous answer."""
    srv = short_timeouts
    since = srv.log_size()
    with Conn(srv.port, timeout=SHORT_HEADER + 5) as c:
        c.send(req())
        assert c.response()[0] == 200
        time.sleep(SHORT_KEEPALIVE * 0.6)
        t0 = time.time()
        c.send(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        status, h, body = c.response()
        took = time.time() - t0
        assert c.closed_quietly(5) is True
    assert_kore_error(status, h, body, 408)
    assert SHORT_HEADER - 0.5 <= took <= SHORT_HEADER + 2, took
    assert log_lines(srv, since, r"status=408"), "no log line"


def test_stalled_body_gets_408(short_timeouts):
    """http_body_timeout bounds a body that stops arriving."""
    with Conn(short_timeouts.port, timeout=SHORT_BODY + 5) as c:
        t0 = time.time()
        c.send(b"POST /auth/oauth/token HTTP/1.1\r\nHost: x\r\n"
               b"Content-Type: application/x-www-form-urlencoded\r\n"
               b"Content-Length: 40\r\n\r\ngrant_type=")
        status, h, body = c.response()
        took = time.time() - t0
    assert_kore_error(status, h, body, 408)
    assert SHORT_BODY - 0.5 <= took <= SHORT_BODY + 2, took
