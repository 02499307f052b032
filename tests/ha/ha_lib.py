"""Instances of psd2gate with a metrics listener, on ports of this suite:
PSD2_HA_PORT and the following ones when set, else free ones from the
kernel."""

import os
import re
import secrets
import subprocess

import requests

import psd2lib
from psd2lib import LOG_DIR, TOP, Server, suite_label

PROMTOOL = "/usr/bin/promtool"
_ports = {}


def ha_port(n):
    """The suite's port number n (the same all session)."""
    if os.environ.get("PSD2_HA_PORT"):
        return int(os.environ["PSD2_HA_PORT"]) + n
    if n not in _ports:
        _ports[n] = psd2lib.free_port(set(_ports.values()))
    return _ports[n]


def instance_conf(name, port, metrics_port, extra="", db=None, instance=None):
    """conf/test.conf on port, with the metrics listener of
    conf/metrics.conf on metrics_port (absolute paths, under
    var/test-logs/); instance: its psd2_instance (the KPI minutes' key:
    instances on one host need one each)."""
    cdir = os.path.join(TOP, "conf")
    out = []
    with open(os.path.join(cdir, "test.conf")) as f:
        for line in f:
            words = line.split()
            if words[:1] == ["bind"] and len(words) == 3:
                line = line.replace(words[2], str(port))
            elif words[:1] == ["include"] and len(words) == 2:
                line = "include %s\n" % os.path.join(cdir, words[1])
            elif len(words) == 2 and words[0].startswith("psd2_") and \
                    words[1].startswith(("./", "../")):
                line = "%s %s\n" % (words[0], os.path.normpath(
                    os.path.join(cdir, words[1])))
            elif words[:1] == ["psd2_db"] and db is not None:
                line = "psd2_db\t%s\n" % db
            out.append(line)
    out.append("server metrics {\n\tbind\t127.0.0.1 %d\n\ttls\tno\n}\n"
               % metrics_port)
    out.append("include %s\n" % os.path.join(cdir, "metrics.conf"))
    if instance is not None:
        out.append("psd2_instance\t%s\n" % instance)
    out.append(extra)
    os.makedirs(LOG_DIR, exist_ok=True)
    path = os.path.join(LOG_DIR, "%s-%s.conf" % (suite_label(), name))
    with open(path, "w") as f:
        f.writelines(out)
    return path


class Instance(Server):
    """A psd2gate with its metrics listener."""

    def __init__(self, name, port, metrics_port, extra="", db=None):
        self.instance = "%s-%s" % (name, secrets.token_hex(3))
        super().__init__(instance_conf(name, port, metrics_port, extra, db,
                                       self.instance), port, name)
        self.metrics_url = "http://127.0.0.1:%d/metrics" % metrics_port

    def scrape(self):
        r = requests.get(self.metrics_url, timeout=10)
        assert r.status_code == 200, (r.status_code, r.text[:300])
        assert r.headers["Content-Type"].startswith("text/plain; "
                                                    "version=0.0.4")
        return r.text


def promtool_check(text):
    """promtool check metrics (lint included): exit 0, nothing said."""
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and not p.stdout.strip() and \
        not p.stderr.strip(), (p.returncode, p.stdout, p.stderr)


SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        assert m, line
        labels = frozenset(LABEL_RE.findall(m.group(3) or ""))
        key = (m.group(1), labels)
        assert key not in out, "sample twice: %s" % line
        out[key] = float(m.group(4))
    return out


def value(s, name, **labels):
    return s.get((name, frozenset(labels.items())), 0.0)


def total(s, name, **labels):
    """Sum over every sample of name whose labels include labels."""
    want = set(labels.items())
    return sum(v for (n, ls), v in s.items() if n == name and want <= ls)


def worker_pids_in_log(text, path):
    """Workers whose request lines for path are in the log: Kore writes
    '[wrk N]: ' before each line of worker N."""
    found = set()
    for line in text.splitlines():
        m = re.search(r"\[wrk (\d+)\]: request id=\S+ method=\S+ path=(\S+)",
                      line)
        if m and m.group(2) == path:
            found.add(m.group(1))
    return found




class Daemon:
    """psd2-deviced inside the emulator harness (as device/sandbox-up.sh
    starts it) with emulated authenticators, on the test database, writing
    its metrics file."""

    def __init__(self, name, serials, db=None):
        self.name = name
        self.serials = list(serials)
        self.dir = os.path.join(LOG_DIR, "%s-%s" % (suite_label(), name))
        os.makedirs(self.dir, exist_ok=True)
        self.metrics_path = os.path.join(self.dir, "deviced.prom")
        self.sock = os.path.join(self.dir, "emu.sock")
        self.log_path = os.path.join(self.dir, "emu.log")
        self.conf = os.path.join(self.dir, "psd2-deviced.conf")
        dbs = db or "host=127.0.0.1 dbname=psd2gate user=psd2_daemon " \
            "sslmode=disable gssencmode=disable"
        with open(self.conf, "w") as f:
            f.write("psd2_db\t%s\n"
                    "psd2_device_vidpid\t1209:0001\n"
                    "psd2_device_manufacturer_ca\t%s\n"
                    "psd2_device_host\t%s\n"
                    "psd2_device_lease_seconds\t30\n"
                    "psd2_device_metrics_file\t%s\n" % (
                        dbs, os.path.join(TOP, "device", "testkeys",
                                          "manufacturer-test-ca.pem"),
                        name, self.metrics_path))
        self.proc = None

    def start(self):
        for p in (self.sock, self.metrics_path):
            if os.path.exists(p):
                os.unlink(p)
        env = dict(psd2lib.sanitizer_env(),
                   LD_PRELOAD="libumockdev-preload.so.0")
        b = psd2lib.bin_dir()
        self.logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [os.path.join(b, "psd2-emuhost"), "--state", self.dir,
             "--socket", self.sock, "--manufacturer-key",
             os.path.join(TOP, "device", "testkeys",
                          "manufacturer-test-key.pem"),
             ",".join(self.serials), "--",
             os.path.join(b, "psd2-deviced"), "--foreground", "--conf",
             self.conf], cwd=TOP, env=env, stdout=self.logf,
            stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def emu(self, *args):
        env = dict(os.environ, PSD2_EMU_SOCKET=self.sock)
        return subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2-emu")]
                              + list(args), env=env, capture_output=True,
                              text=True, timeout=20)

    def metrics(self):
        try:
            with open(self.metrics_path) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(5)
        self.proc = None
        self.logf.close()


def wait_for(fn, timeout, what, step=0.1):
    import time
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("timed out (%d s) waiting for %s" %
                                 (timeout, what))
        time.sleep(step)


class HAProxy:
    """Debian's HAProxy in the foreground, round robin over servers
    [(name, port)], no health checks (a check would take a turn of the
    rotation); every answer names its instance in X-Served-By."""

    def __init__(self, name, port, servers, stats_port=None):
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        self.dir = os.path.join(LOG_DIR, "%s-%s" % (suite_label(), name))
        os.makedirs(self.dir, exist_ok=True)
        self.cfg = os.path.join(self.dir, "haproxy.cfg")
        self.log_path = os.path.join(self.dir, "haproxy.log")
        lines = ["global", "\tmaxconn 512", "",
                 "defaults", "\tmode http", "\ttimeout connect 5s",
                 "\ttimeout client 30s", "\ttimeout server 30s", "",
                 "frontend psd2", "\tbind 127.0.0.1:%d" % port,
                 "\tdefault_backend psd2gate", "",
                 "backend psd2gate", "\tbalance roundrobin",
                 "\thttp-response set-header X-Served-By %[srv_name]"]
        for sname, sport in servers:
            lines.append("\tserver %s 127.0.0.1:%d" % (sname, sport))
        if stats_port:
            lines += ["", "frontend stats",
                      "\tbind 127.0.0.1:%d" % stats_port,
                      "\thttp-request use-service prometheus-exporter "
                      "if { path /metrics }"]
        with open(self.cfg, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = None

    def start(self):
        p = subprocess.run(["/usr/sbin/haproxy", "-c", "-f", self.cfg],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stdout + p.stderr
        self.logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["/usr/sbin/haproxy", "-db", "-f",
                                      self.cfg], stdout=self.logf,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        wait_for(lambda: psd2lib.port_open(self.port), 10,
                 "HAProxy listening")
        return self

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        self.logf.close()


class TokenLoad:
    """Refresh grants and signed AIS calls in threads against base (a
    callable, so a test may point them elsewhere). Each chain refreshes its
    own token line: a 200 answer's tokens are recorded as committed (the
    client saw them); after a 503 (the query did not run) the same refresh
    token is sent again; after any other failure the chain stops (the
    grant may or may not have committed: its old token may be spent).

    kept: (client, grants) of a client without refresh token rotation,
    whose chains (kind "refresh-kept") also send the same token again
    after a 500: its grant never spends the token, so the outcome of a
    broken grant does not matter to the retry."""

    def __init__(self, base, client, grants, signer, pause=0.02, kept=None):
        import threading
        self.base = base
        self.client = client
        self.signer = signer
        self.pause = pause
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.results = []       # (kind, t0, t1, status, body, exc)
        kept_client, kept_grants = kept if kept else (None, [])
        self.issued = [dict(g) for g in list(grants) + list(kept_grants)]
        self.chains = [dict(g) for g in grants]
        self.chain_client = [client] * len(grants)
        self.chains += [dict(g) for g in kept_grants]
        self.chain_client += [kept_client] * len(kept_grants)
        # Why a chain stopped: (t0, status) of its last answer, or None.
        self.ended = [None] * len(self.chains)
        self.threads = [threading.Thread(target=self._chain, args=(i,),
                                         daemon=True)
                        for i in range(len(self.chains))]
        self.threads.append(threading.Thread(target=self._ais, daemon=True))

    def _record(self, kind, t0, r, exc):
        import time
        with self.lock:
            self.results.append((kind, t0, time.monotonic(),
                                 r.status_code if r is not None else None,
                                 r.text[:300] if r is not None else None,
                                 exc))

    def _chain(self, i):
        import time
        client = self.chain_client[i]
        kept = client is not self.client
        again = (500, 503) if kept else (503,)
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                r = requests.post(self.base() + "/auth/oauth/token", data={
                    "grant_type": "refresh_token",
                    "refresh_token": self.chains[i]["refresh_token"]},
                    auth=(client.client_id, client.secret),
                    timeout=10)
                exc = None
            except requests.RequestException as e:
                r, exc = None, e
            self._record("refresh-kept" if kept else "refresh", t0, r, exc)
            if r is not None and r.status_code == 200:
                tok = r.json()
                psd2lib.register_tokens(tok, client)
                with self.lock:
                    self.issued.append(tok)
                    self.chains[i] = tok
            elif r is None or r.status_code not in again:
                self.ended[i] = (t0, r.status_code if r is not None
                                 else None)
                return
            time.sleep(self.pause)

    def _ais(self):
        import time
        while not self.stop.is_set():
            with self.lock:
                tok = self.chains[0]["access_token"]
            h = {"Content-Type": "application/json",
                 "PSU-IP-Address": "192.0.2.10",
                 "Authorization": "Bearer " + tok}
            t0 = time.monotonic()
            try:
                r = self.signer.for_token(tok).request(
                    "GET", self.base() + psd2lib.ACCOUNT_LIST, headers=h,
                    timeout=10)
                exc = None
            except requests.RequestException as e:
                r, exc = None, e
            self._record("ais", t0, r, exc)
            time.sleep(self.pause * 5)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(20)

    def between(self, start, end):
        with self.lock:
            return [x for x in self.results if x[1] >= start and
                    x[2] <= end]

    def missing_tokens(self, dbinfo):
        """Tokens a client saw issued that the database does not have."""
        import hashlib
        import psycopg2
        want = set()
        for t in self.issued:
            for k in ("access_token", "refresh_token"):
                want.add(hashlib.sha256(t[k].encode()).digest())
        conn = psycopg2.connect(dbinfo)
        try:
            cur = conn.cursor()
            cur.execute("SELECT token_hash FROM token WHERE token_hash = "
                        "ANY(%s)", ([psycopg2.Binary(h) for h in want],))
            have = {bytes(r[0]) for r in cur.fetchall()}
        finally:
            conn.close()
        return want - have


def make_grants(base, client, n):
    """n token grants of client, each through a PSU of its own (one TOTP
    step per PSU)."""
    from psd2lib import exchange_code, make_psu, run_code_flow
    out = []
    for _ in range(n):
        psu = make_psu(1)
        code, _, _, _ = run_code_flow(client, psu, base=base)
        r = exchange_code(client, code, base=base)
        assert r.status_code == 200, r.text
        out.append(r.json())
    return out


def error_answer(status, body):
    """The documented answers while the database is away: 503 (did not
    run) or 500 (broken during the query), with the spec's error body."""
    import json
    if status not in (500, 503):
        return False
    try:
        return set(json.loads(body)) == {"errorId", "timestamp", "message"}
    except ValueError:
        return False


class PgPair:
    """tests/ha/pgpair.sh: a primary with a synchronous standby, a WAL
    archive; ports from PSD2_HA_PGPORT (primary; the standby the next
    one) or free ones."""

    def __init__(self, name):
        self.dir = os.path.join(TOP, "var", "%s-%s" % (suite_label(), name))
        if os.environ.get("PSD2_HA_PGPORT"):
            self.pport = int(os.environ["PSD2_HA_PGPORT"])
            self.sport = self.pport + 1
        else:
            self.pport, self.sport = ha_port(30), ha_port(31)

    def run(self, *args, timeout=180):
        p = subprocess.run(["sh", os.path.join(TOP, "tests", "ha",
                                               "pgpair.sh"), self.dir,
                            str(self.pport), str(self.sport)] +
                           [str(a) for a in args], capture_output=True,
                           text=True, timeout=timeout, cwd=TOP)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
        return p.stdout

    def dsn(self, port, user="psd2_service"):
        """The service's role by default (migration 083)."""
        return ("host=127.0.0.1 port=%d dbname=psd2gate user=%s "
                "sslmode=disable gssencmode=disable" % (port, user))

    def multihost(self, user="psd2_service"):
        """Both, the writable one wins (libpq tries them in order)."""
        return ("host=127.0.0.1,127.0.0.1 port=%d,%d dbname=psd2gate "
                "user=%s target_session_attrs=read-write "
                "connect_timeout=2 sslmode=disable gssencmode=disable" %
                (self.pport, self.sport, user))

    def psd2ctl(self, *args, port=None):
        """psd2ctl against one cluster of the pair (conf/test.conf names
        no port: libpq takes PGPORT)."""
        old = os.environ.get("PGPORT")
        os.environ["PGPORT"] = str(port or self.pport)
        try:
            return psd2lib.psd2ctl(*args)
        finally:
            os.environ["PGPORT"] = old


class on_port:
    """Within: psd2ctl, make_client and make_psu use the cluster on port
    (libpq's PGPORT)."""

    def __init__(self, port):
        self.port = str(port)

    def __enter__(self):
        self.old = os.environ.get("PGPORT")
        os.environ["PGPORT"] = self.port

    def __exit__(self, *exc):
        os.environ["PGPORT"] = self.old
