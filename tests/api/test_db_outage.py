"""A database outage under traffic.

The real test cluster is stopped with `pg_ctl stop -m fast`
(tests/pgcluster.sh stop) while signed account-list calls and token grants
keep arriving, and started again. While PostgreSQL is away each request
that needs it must answer at once with 503, Retry-After and the spec's
error body (errorId, timestamp, message; the errorId in the log); once it
is back, every worker must serve normally within 5 s, with its
connections again in pg_stat_activity. /health (no database) must stay
fast all along, and an unreachable database (a peer that never answers)
must not stall a worker's event loop: Kore's pgsql layer connects
asynchronously, with a deadline and a backoff (conf/kore-patches/0020).

Every test here leaves the shared cluster running (a finally starts it).
"""

import os
import re
import socket
import subprocess
import threading
import time

import pytest
import requests

import psd2_fixtures
import psd2lib
from psd2lib import (ACCOUNT_LIST, MAIN_URL, UUID_RE, exchange_code,
                     make_client, make_psu, run_code_flow)

TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$")
# Times are seen by the client, on a busy 2-core machine: the bounds are
# loose for single requests, tight for the median.
REQUEST_TIMEOUT = 5.0       # a hang shows as an exception, not a pass
# Any error answer while the database is away: a query that queued just
# before its connection broke waits for the next wake-up of the queue,
# at most one backoff period (2 s, patch 0020); seen once in a full run
# at 2.0 s. The median below is what "at once" means.
FAST = 3.0
FAST_MEDIAN = 0.3           # their median
HEALTH_FAST = 1.0           # /health, whatever the database does
RECOVERY = 5.0              # Serve normally within 5 s


def cluster(cmd):
    """tests/pgcluster.sh on this session's port (PGPORT, set by the
    pgcluster fixture)."""
    env = dict(os.environ, PSD2_PGPORT=os.environ["PGPORT"])
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pgcluster.sh"),
                    cmd], check=True, cwd=psd2lib.TOP, env=env,
                   stdout=subprocess.DEVNULL, timeout=120)


@pytest.fixture
def cluster_restored():
    """Whatever happens in the test, the shared cluster runs afterwards."""
    yield
    cluster("start")


@pytest.fixture(scope="module")
def grant(service_setup):
    client = make_client()
    psu = make_psu(1)
    code, _, _, _ = run_code_flow(client, psu)
    r = exchange_code(client, code)
    assert r.status_code == 200, r.text
    return client, r.json()


def ais_call(signer, token, base=MAIN_URL):
    """A signed account-list call, on a new connection each time: the
    workers take turns (Kore patch 0031 gives each new connection to the
    worker holding the fewest)."""
    h = {"Content-Type": "application/json",
         "Authorization": "Bearer " + token,
         "PSU-IP-Address": "192.0.2.10"}
    return signer.for_token(token).request(
        "GET", base + ACCOUNT_LIST, headers=h, timeout=REQUEST_TIMEOUT)


def token_call(client, base=MAIN_URL):
    """A refresh grant with an unknown refresh token: the database decides
    (400 invalid_grant when it is up)."""
    return requests.post(
        base + "/auth/oauth/token",
        data={"grant_type": "refresh_token",
              "refresh_token": "not-a-token-" + os.urandom(8).hex()},
        auth=(client.client_id, client.secret), timeout=REQUEST_TIMEOUT)


def served(kind, r):
    if kind == "ais":
        return r.status_code == 200 and "accounts" in r.json()
    if kind == "token":
        return r.status_code == 400 and r.json().get("error") == \
            "invalid_grant"
    return r.status_code == 200 and r.json() == {"status": "ok"}


def error_body(r):
    assert r.headers.get("Content-Type", "").startswith("application/json")
    body = r.json()
    assert set(body) == {"errorId", "timestamp", "message"}, body
    assert UUID_RE.match(body["errorId"]), body
    assert TIMESTAMP_RE.match(body["timestamp"]), body
    assert isinstance(body["message"], str) and body["message"], body
    return body


def unavailable(r, server=None):
    """503, Retry-After in seconds, the spec's error body; the errorId is
    in the service's log."""
    assert r.status_code == 503, (r.status_code, r.text[:300])
    ra = r.headers.get("Retry-After", "")
    assert ra.isdigit() and 1 <= int(ra) <= 5, r.headers
    body = error_body(r)
    assert "temporarily unavailable" in body["message"], body
    if server is not None:
        deadline = time.time() + 3
        while body["errorId"] not in server.log_text():
            assert time.time() < deadline, "errorId not in the log"
            time.sleep(0.1)
    return body


class Load:
    """Threads sending requests in a loop; every answer (or exception)
    is kept with its send and answer times (time.monotonic())."""

    def __init__(self):
        self.results = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = []

    def add(self, kind, fn, pause=0.05):
        def loop():
            while not self.stop.is_set():
                t0 = time.monotonic()
                try:
                    r, exc = fn(), None
                except requests.RequestException as e:
                    r, exc = None, e
                with self.lock:
                    self.results.append((kind, t0, time.monotonic(), r, exc))
                time.sleep(pause)
        t = threading.Thread(target=loop, daemon=True)
        self.threads.append(t)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(REQUEST_TIMEOUT + 5)

    def between(self, start, end, kinds=("ais", "token")):
        """Requests sent at or after start and answered by end."""
        with self.lock:
            return [x for x in self.results if x[0] in kinds and
                    x[1] >= start and x[2] <= end]


def gate_backends(dbinfo):
    """psd2gate's connections: it connects over TCP (conf/test.conf),
    the test's own connection over the Unix socket."""
    c = psd2lib.db_connect(psd2lib.as_superuser(dbinfo))
    try:
        cur = c.cursor()
        cur.execute("""SELECT count(*) FROM pg_stat_activity
                       WHERE usename = 'psd2_service' AND client_addr IS NOT NULL
                         AND backend_type = 'client backend'""")
        return cur.fetchone()[0]
    finally:
        c.close()


def no_hangs(load, t_base):
    """No request without an answer; /health always fast (times in the
    messages: seconds since t_base)."""
    hung = [(k, round(t0 - t_base, 2), repr(e))
            for k, t0, _, _, e in load.results if e is not None]
    assert not hung, "requests without an answer within %.0f s: %s" % (
        REQUEST_TIMEOUT, hung[:5])
    slow = [(k, round(t0 - t_base, 2), round(t1 - t0, 2))
            for k, t0, t1, _, _ in load.results
            if k == "health" and t1 - t0 > HEALTH_FAST]
    assert not slow, "/health was slow (sent, took): %s" % slow[:5]


def test_outage_under_load_then_recovery(server, signer, grant, dbinfo,
                                         cluster_restored):
    client, tok = grant
    assert served("ais", ais_call(signer, tok["access_token"]))
    assert gate_backends(dbinfo) >= 1

    load = Load()
    for _ in range(2):
        load.add("ais", lambda: ais_call(signer, tok["access_token"]))
    load.add("token", lambda: token_call(client))
    load.add("health", lambda: requests.get(MAIN_URL + "/health",
                                            timeout=REQUEST_TIMEOUT), 0.1)
    with load:
        time.sleep(2)
        t_stop0 = time.monotonic()
        cluster("stop")
        t_stop1 = time.monotonic()
        time.sleep(10)
        t_start0 = time.monotonic()
        cluster("start")
        t_start1 = time.monotonic()
        time.sleep(RECOVERY + 4)
        t_end = time.monotonic()

    no_hangs(load, t_stop0)

    before = load.between(0, t_stop0)
    assert len(before) >= 5
    assert all(served(k, r) for k, _, _, r, _ in before), \
        [(k, r.status_code) for k, _, _, r, _ in before if not served(k, r)]

    # In flight while PostgreSQL stopped: served, or the documented error.
    for k, _, _, r, _ in load.between(t_stop0, t_start1):
        if not served(k, r):
            assert r.status_code in (500, 503), (k, r.status_code, r.text)
            error_body(r)

    after = load.between(t_start1 + RECOVERY, t_end)
    kinds = {k for k, _, _, _, _ in after}
    assert kinds == {"ais", "token"} and len(after) >= 10, after
    bad = [(k, r.status_code, r.text[:200]) for k, _, _, r, _ in after
           if not served(k, r)]
    assert not bad, "not served %.0f s after PostgreSQL was back: %s" % (
        RECOVERY, bad[:5])
    assert gate_backends(dbinfo) >= 1

    # A burst of new connections is served throughout.
    for _ in range(20):
        assert served("ais", ais_call(signer, tok["access_token"]))

    # While PostgreSQL was away: at once, 503 with the error body.
    down = load.between(t_stop1, t_start0)
    assert len(down) >= 20, len(down)
    for k, t0, t1, r, _ in down:
        unavailable(r)
        assert t1 - t0 < FAST, (k, t1 - t0)
    took = sorted(t1 - t0 for _, t0, t1, _, _ in down)
    assert took[len(took) // 2] < FAST_MEDIAN, took
    unavailable(down[-1][3], server)


def conf_with(port, name, replace):
    """A derived test configuration on port with some lines replaced
    (first word -> whole new line)."""
    path = psd2lib.derived_conf("conf/test.conf", port, name)
    with open(path) as f:
        lines = f.readlines()
    out = []
    for line in lines:
        words = line.split()
        if words and words[0] in replace:
            line = replace[words[0]] + "\n"
        out.append(line)
    with open(path, "w") as f:
        f.writelines(out)
    return path


def test_first_connection_while_database_down(service_setup, signer, grant,
                                              dbinfo, cluster_restored):
    """A worker that never had a connection: the database is down when
    the first request needs it. Worker 1 also runs the purge every second
    here (a query bound to a callback, not to a request) through the
    outage (about 3 s) and after it."""
    client, tok = grant
    port = psd2lib.free_port()
    cluster("stop")
    conf = conf_with(port, "psd2gate-dbdown",
                     {"psd2_purge_interval": "psd2_purge_interval 1"})
    srv = psd2_fixtures._start(conf, port, "psd2gate-dbdown", None)
    try:
        down = time.monotonic()
        while time.monotonic() - down < 3:
            t0 = time.monotonic()
            unavailable(ais_call(signer, tok["access_token"], srv.url), srv)
            unavailable(token_call(client, srv.url))
            assert time.monotonic() - t0 < 2 * FAST
            time.sleep(0.1)
        cluster("start")
        back = time.monotonic()
        # Until then each worker answers 503 (the error body) until its
        # backoff has passed and its next query has reconnected; the
        # calls alternate between the two workers (Kore patch 0031).
        while time.monotonic() - back < RECOVERY:
            r = ais_call(signer, tok["access_token"], srv.url)
            if not served("ais", r):
                unavailable(r)
            time.sleep(0.1)
        # From RECOVERY s after PostgreSQL is back, every worker serves.
        for _ in range(10):
            assert served("ais", ais_call(signer, tok["access_token"],
                                          srv.url))
            assert served("token", token_call(client, srv.url))
        # Worker 1 (the purge, if not requests) failed to connect during
        # the outage and is connected again.
        while "[wrk 1]: pgsql: database db is back" not in srv.log_text():
            assert time.monotonic() - back < RECOVERY, \
                "worker 1 did not reconnect within %.0f s" % RECOVERY
            time.sleep(0.1)
    finally:
        psd2_fixtures._stop(srv)


def test_unreachable_database_does_not_stall_the_worker(service_setup,
                                                        signer, grant):
    """A database peer that accepts TCP and then never answers (a network
    black hole, a hung server): one worker, whose connection attempt must
    not block its event loop. /health is served meanwhile; the request
    waiting for the database gets 503 at the connect deadline
    (connect_timeout=3 in psd2_db)."""
    client, tok = grant
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(64)             # the kernel completes handshakes; no reply
    port = psd2lib.free_port()
    conf = conf_with(port, "psd2gate-blackhole", {
        "workers": "workers 1",
        "psd2_db": "psd2_db host=127.0.0.1 port=%d dbname=psd2gate "
                   "user=psd2_service sslmode=disable gssencmode=disable "
                   "connect_timeout=3" % hole.getsockname()[1]})
    srv = psd2_fixtures._start(conf, port, "psd2gate-blackhole", None)
    try:
        out = {}

        def waiting():
            t0 = time.monotonic()
            try:
                out["r"] = token_call(client, srv.url)
            except requests.RequestException as e:
                out["e"] = e
            out["t"] = time.monotonic() - t0

        t = threading.Thread(target=waiting)
        t.start()
        time.sleep(0.2)
        slow = []
        while t.is_alive():
            t0 = time.monotonic()
            try:
                r = requests.get(srv.url + "/health", timeout=3)
                assert r.status_code == 200
            except requests.RequestException as e:
                slow.append(repr(e))
            if time.monotonic() - t0 > HEALTH_FAST:
                slow.append(round(time.monotonic() - t0, 2))
            time.sleep(0.1)
        t.join()
        assert not slow, "/health stalled while connecting: %s" % slow[:5]
        assert "e" not in out, out.get("e")
        unavailable(out["r"], srv)
        assert 2.5 <= out["t"] < 6, out["t"]
    finally:
        psd2_fixtures._stop(srv)
        hole.close()
