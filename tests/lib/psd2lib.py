"""Shared helpers for the psd2gate API and browser suites.

Pure helpers (no pytest here): server processes, the operator CLI
factories, TOTP, IBANs, HTML form parsing, the request signer and a
requests-based PSU "browser" that walks login, TOTP and consent.

Everything talks to the real service and the real PostgreSQL cluster.
"""

import base64
import datetime
import email.utils
import hashlib
import hmac
import http.server
import itertools
import os
import random
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid
from html.parser import HTMLParser

import requests
from requests.adapters import HTTPAdapter

# Authlib refuses plain-HTTP token endpoints unless told otherwise; the
# test instances speak HTTP on 127.0.0.1.
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LOG_DIR = os.path.join(TOP, "var", "test-logs")

# The configured ports; PSD2_TEST_PORT / PSD2_TEST_RL_PORT move the test
# instances elsewhere (a derived copy of the configuration under
# var/test-logs/). Without them a configured port that is taken (by the
# sandbox of another checkout, say) gives way to a free one.
CONF_MAIN_PORT = 18080
CONF_RATELIMIT_PORT = 18081


def port_open(port, host="127.0.0.1"):
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def port_holder(port):
    """Names what listens on port (tests/port.sh), or None."""
    p = subprocess.run(["sh", os.path.join(TOP, "tests", "port.sh"),
                        "holder", str(port)], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=20)
    return p.stdout.strip() if p.returncode == 0 else None


def test_port(env, conf_port):
    """The port for a test listener: $env if set (a taken one then fails
    the start, naming its holder), else conf_port if free, else a free
    one from the kernel. Exported, so child processes agree."""
    if os.environ.get(env):
        return int(os.environ[env])
    port = conf_port
    if port_open(port):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    os.environ[env] = str(port)
    return port


MAIN_PORT = test_port("PSD2_TEST_PORT", CONF_MAIN_PORT)
RATELIMIT_PORT = test_port("PSD2_TEST_RL_PORT", CONF_RATELIMIT_PORT)
MAIN_URL = "http://127.0.0.1:%d" % MAIN_PORT
RATELIMIT_URL = "http://127.0.0.1:%d" % RATELIMIT_PORT

SANDBOX_CLIENT = "sandbox-tpp"
SANDBOX_SHORT_CLIENT = "sandbox-tpp-short"
SANDBOX_SECRET = "sandbox-secret"
SANDBOX_TPP_NAME = "Sandbox TPP GmbH"
SANDBOX_ORG_ID = "PSDDE-BAFIN-999999"
SANDBOX_REDIRECTS = ("http://127.0.0.1:8000/callback",
                     "https://tpp.example/callback")
SANDBOX_TOTP = "JBSWY3DPEHPK3PXP"
SANDBOX_PSUS = {"anna": "anna-sandbox-1", "bram": "bram-sandbox-1"}

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:",
                     "LeakSanitizer")

UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def free_port(taken=()):
    """A port the kernel calls free on 127.0.0.1, other than those in
    taken: the kernel may hand out the same port again once the probing
    socket is closed, and two listeners of one instance on one port
    fail to start (seen in the ha suite)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in taken:
            return port


def children(pid):
    """The pids of process pid's children (Kore: workers, keymgr)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return sorted(int(x) for x in f.read().split())
    except OSError:
        return []


def connections_held(port, client_ports, pids):
    """pid -> how many of the loopback connections from client_ports to
    the listener on port that process holds (the service's end, matched
    by socket inode between /proc/net/tcp and /proc/PID/fd)."""
    wanted = set(client_ports)
    inodes = set()
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            cols = line.split()
            if (int(cols[1].split(":")[1], 16) == port and
                    int(cols[2].split(":")[1], 16) in wanted):
                inodes.add("socket:[%s]" % cols[9])
    assert len(inodes) == len(wanted), (len(inodes), len(wanted))
    held = {}
    for pid in pids:
        fd_dir = "/proc/%d/fd" % pid
        links = set()
        for fd in os.listdir(fd_dir):
            try:
                links.add(os.readlink(os.path.join(fd_dir, fd)))
            except OSError:
                pass
        held[pid] = len(links & inodes)
    return held


def bin_dir():
    d = os.environ.get("PSD2_BIN_DIR", "build/bin")
    return d if os.path.isabs(d) else os.path.join(TOP, d)


def sanitizer_env():
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    # Kore's process-lifetime allocations only (see the file).
    env.setdefault("LSAN_OPTIONS", "suppressions=%s:print_suppressions=0"
                   % os.path.join(TOP, "tests", "lsan-kore.supp"))
    return env


def umockdev_env(env=None):
    """The environment of a program run under umockdev's preload (the
    emulated authenticators). Under the sanitizer build the ASan runtime
    must come first in LD_PRELOAD (device/emu/UMOCKDEV.md, trap 6), and
    the device suite's leak suppressions apply."""
    env = dict(env if env is not None else sanitizer_env())
    preload = "libumockdev-preload.so.0"
    if "asan" in bin_dir():
        lib = subprocess.run(["gcc", "-print-file-name=libasan.so"],
                             stdout=subprocess.PIPE, text=True,
                             check=True).stdout.strip()
        preload = lib + ":" + preload
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
        env["LSAN_OPTIONS"] = ("suppressions=%s:print_suppressions=0" %
                               os.path.join(TOP, "tests", "device",
                                            "lsan.supp"))
    env["LD_PRELOAD"] = preload
    return env


def suite_label():
    return os.environ.get("PSD2_SUITE_LABEL", "tests")


# --------------------------------------------------------------------------
# Operator CLI

class CtlError(AssertionError):
    pass


def psd2ctl(*args, conf="conf/test.conf", check=True, timeout=120):
    cmd = [os.path.join(bin_dir(), "psd2ctl"), "-c", conf] + list(args)
    p = subprocess.run(cmd, cwd=TOP, env=sanitizer_env(), timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if check and p.returncode != 0:
        raise CtlError("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def pgcluster_start():
    p = subprocess.run(["sh", os.path.join(TOP, "tests", "pgcluster.sh"),
                        "start"], cwd=TOP, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=180)
    if p.returncode != 0:
        raise RuntimeError("tests/pgcluster.sh start failed:\n%s%s" %
                           (p.stdout, p.stderr))
    lines = [ln for ln in p.stdout.splitlines() if "port=" in ln]
    if not lines:
        raise RuntimeError("tests/pgcluster.sh start named no port:\n%s"
                           % p.stdout)
    conninfo = lines[-1].strip()
    # The test configurations name no port: the servers and psd2ctl that
    # the tests start take libpq's PGPORT from this environment.
    os.environ["PGPORT"] = re.search(r"port=(\d+)", conninfo).group(1)
    return conninfo


# --------------------------------------------------------------------------
# Server process

def derived_conf(conf, port, name):
    """A copy of conf listening on port, with includes and relative paths
    made absolute, under var/test-logs/."""
    src = os.path.join(TOP, conf)
    cdir = os.path.dirname(src)
    out = []
    with open(src) as f:
        for line in f:
            words = line.split()
            if words[:1] == ["bind"] and len(words) == 3:
                line = line.replace(words[2], str(port))
            elif words[:1] == ["include"] and len(words) == 2 and \
                    not os.path.isabs(words[1]):
                line = "include %s\n" % os.path.join(cdir, words[1])
            elif len(words) == 2 and words[0].startswith("psd2_") and \
                    words[1].startswith(("./", "../")):
                line = "%s %s\n" % (words[0], os.path.normpath(
                    os.path.join(cdir, words[1])))
            out.append(line)
    os.makedirs(LOG_DIR, exist_ok=True)
    path = os.path.join(LOG_DIR, "%s-%s.conf" % (suite_label(), name))
    with open(path, "w") as f:
        f.writelines(out)
    return path


class Server:
    """One psd2gate instance in the foreground, logging to a file."""

    def __init__(self, conf, port, name, conf_port=None):
        if conf_port is not None and port != conf_port:
            conf = derived_conf(conf, port, name)
        self.conf = conf
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        os.makedirs(LOG_DIR, exist_ok=True)
        self.log_path = os.path.join(LOG_DIR, "%s-%s.log" % (
            suite_label(), name))
        self.proc = None
        self.logf = None
        self.problems = []

    def start(self, timeout=60):
        if port_open(self.port):
            raise RuntimeError(
                "port %d is taken by %s: stop it, or unset the variable "
                "that chose this port (the tests start their own instance)"
                % (self.port, port_holder(self.port) or "something"))
        self.logf = open(self.log_path, "wb")
        cmd = [os.path.join(bin_dir(), "psd2gate"), "-c", self.conf,
               "-f", "-n", "-r"]
        self.proc = subprocess.Popen(cmd, cwd=TOP, env=sanitizer_env(),
                                     stdout=self.logf,
                                     stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("psd2gate (%s) exited with %s during "
                                   "start-up; log tail:\n%s" % (
                                       self.conf, self.proc.returncode,
                                       self.tail()))
            try:
                r = requests.get(self.url + "/health", timeout=2)
                if r.status_code == 200:
                    return self
                last = "status %d" % r.status_code
            except requests.RequestException as e:
                last = str(e)
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("psd2gate (%s) did not answer /health with 200 "
                           "within %d s (%s); log tail:\n%s" % (
                               self.conf, timeout, last, self.tail()))

    def stop(self, timeout=20):
        """SIGTERM, wait; returns the exit status (None if it had to be
        killed). Anything of ours still alive afterwards (workers outlive
        their parent) is killed and noted in self.problems."""
        rc = None
        if self.proc is not None:
            pgid = self.proc.pid      # start_new_session: our own group
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    rc = self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.problems.append(
                        "psd2gate did not exit within %d s of SIGTERM" %
                        timeout)
                    try:
                        os.killpg(pgid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    self.proc.wait(10)
                    rc = None
            else:
                rc = self.proc.returncode
            self.proc = None
            time.sleep(0.5)
            try:
                os.killpg(pgid, 0)
                self.problems.append("psd2gate processes outlived their "
                                     "parent (killed)")
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.logf is not None:
            self.logf.close()
            self.logf = None
        # Workers may linger a moment after the parent exits.
        deadline = time.time() + 10
        while port_open(self.port) and time.time() < deadline:
            time.sleep(0.2)
        return rc

    def log_size(self):
        try:
            return os.path.getsize(self.log_path)
        except OSError:
            return 0

    def log_text(self, since=0):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(since)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def tail(self, n=40, since=0):
        return "\n".join(self.log_text(since).splitlines()[-n:])

    def sanitizer_reports(self):
        text = self.log_text()
        return [m for m in SANITIZER_MARKERS if m in text]


# --------------------------------------------------------------------------
# TOTP (RFC 6238, SHA-1, 6 digits, 30 s)

def totp_at(secret_b32, step):
    key = base64.b32decode(secret_b32.upper() + "=" * (-len(secret_b32) % 8))
    mac = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    off = mac[-1] & 0x0F
    code = (struct.unpack(">I", mac[off:off + 4])[0] & 0x7FFFFFFF) % 1000000
    return "%06d" % code


def current_step(now=None):
    return int((time.time() if now is None else now) // 30)


_used_steps = {}
_used_lock = threading.Lock()


def fresh_totp(username, secret_b32):
    """A code the service has not yet seen for this PSU in this test
    process: the current step, else the next one (one step of drift is
    allowed), else wait for the following period."""
    while True:
        with _used_lock:
            now = current_step()
            last = _used_steps.get(username, -1)
            step = max(now, last + 1)
            if step <= now + 1:
                _used_steps[username] = step
                return totp_at(secret_b32, step)
        time.sleep(30 - time.time() % 30 + 0.2)


def mark_totp_used(username, code, secret_b32):
    """Records that code (of the current or an adjacent step) was used."""
    now = current_step()
    for s in (now - 1, now, now + 1):
        if totp_at(secret_b32, s) == code:
            with _used_lock:
                _used_steps[username] = max(_used_steps.get(username, -1), s)


def random_base32(nbytes=20):
    return base64.b32encode(secrets.token_bytes(nbytes)).decode().rstrip("=")


# --------------------------------------------------------------------------
# IBANs with valid check digits (ISO 13616, mod 97)

def _iban_digits(s):
    return "".join(str(int(c, 36)) for c in s)


def make_iban(country, bban):
    check = 98 - int(_iban_digits(bban + country + "00")) % 97
    return "%s%02d%s" % (country, check, bban)


def iban_valid(iban):
    s = iban.replace(" ", "")
    return int(_iban_digits(s[4:] + s[:4])) % 97 == 1


_iban_counter = itertools.count(1)


def random_iban(country="DE"):
    n = next(_iban_counter)
    if country == "DE":
        bban = "50010517%010d" % (random.randrange(10 ** 9) * 10 + n % 10)
    elif country == "NL":
        bban = "PSDG%010d" % (random.randrange(10 ** 9) * 10 + n % 10)
    else:
        raise ValueError(country)
    return make_iban(country, bban)


def compact(s):
    return re.sub(r"\s+", "", s or "")


# --------------------------------------------------------------------------
# Factories (operator CLI)

_uniq = itertools.count(1)


def unique(prefix):
    return "%s%d%s%d" % (prefix, os.getpid() % 100000,
                         secrets.token_hex(3), next(_uniq))


class PSU:
    def __init__(self, username, password, totp_secret, name, accounts):
        self.username = username
        self.password = password
        self.totp_secret = totp_secret
        self.name = name
        self.accounts = accounts    # [(iban, account name)]

    def totp(self):
        return fresh_totp(self.username, self.totp_secret)

    def __repr__(self):
        return "PSU(%s)" % self.username


def make_psu(n_accounts=2, country="DE"):
    username = unique("psu")
    password = "pw-" + secrets.token_urlsafe(12)
    secret = random_base32()
    name = "Test Person %s" % username[-6:]
    psd2ctl("psu", "add", username, "--password", password,
            "--totp-secret", secret, "--name", name)
    accounts = []
    for i in range(n_accounts):
        iban = random_iban(country)
        aname = "%s account %d" % ("Giro" if i == 0 else "Savings", i + 1)
        psd2ctl("account", "add", username, iban, "EUR", aname)
        accounts.append((iban, aname))
    return PSU(username, password, secret, name, accounts)


def sandbox_psu(username):
    return PSU(username, SANDBOX_PSUS[username], SANDBOX_TOTP, username, [])


class Client:
    def __init__(self, client_id, secret, name, org_id, redirect_uris,
                 pkce_required=False, access_ttl=None):
        self.client_id = client_id
        self.secret = secret
        self.name = name
        self.org_id = org_id
        self.redirect_uris = list(redirect_uris)
        self.redirect_uri = self.redirect_uris[0]
        self.pkce_required = pkce_required
        self.access_ttl = access_ttl

    def __repr__(self):
        return "Client(%s)" % self.client_id


_org_counter = itertools.count(1)


def make_client(redirect_uris=("https://tpp.example/callback",),
                pkce_required=False, access_ttl=None, name=None,
                secret=None):
    name = name or "Test TPP %s" % unique("")
    org_id = "PSDDE-BAFIN-%d%06d%d" % (os.getpid() % 1000,
                                        random.randrange(10 ** 6),
                                        next(_org_counter))
    args = ["tpp", "add", "--name", name, "--org-id", org_id]
    for u in redirect_uris:
        args += ["--redirect-uri", u]
    if pkce_required:
        args.append("--pkce-required")
    if access_ttl is not None:
        args += ["--access-ttl", str(access_ttl)]
    if secret is not None:
        args += ["--secret", secret]
    out = psd2ctl(*args).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(client_id|client_secret): (.+)$", line)
        if m:
            found[m.group(1)] = m.group(2)
    if set(found) != {"client_id", "client_secret"}:
        raise CtlError("psd2ctl tpp add printed no client_id/client_secret "
                       "lines:\n" + out)
    return Client(found["client_id"], found["client_secret"], name, org_id,
                  redirect_uris, pkce_required, access_ttl)


def sandbox_client(short=False):
    return Client(SANDBOX_SHORT_CLIENT if short else SANDBOX_CLIENT,
                  SANDBOX_SECRET, SANDBOX_TPP_NAME, SANDBOX_ORG_ID,
                  SANDBOX_REDIRECTS, False, 5 if short else 900)


# --------------------------------------------------------------------------
# HTML parsing (html.parser, no regexes on markup)

class Element:
    def __init__(self, tag, attrs):
        self.tag = tag
        self.attrs = dict(attrs)
        self.text = ""

    def get(self, name, default=None):
        return self.attrs.get(name, default)

    def __repr__(self):
        return "<%s %r %r>" % (self.tag, self.attrs, self.text)


class Form:
    def __init__(self, attrs):
        self.attrs = dict(attrs)
        self.inputs = []     # Element (input, select, textarea)
        self.buttons = []    # Element

    @property
    def id(self):
        return self.attrs.get("id")

    @property
    def action(self):
        return self.attrs.get("action")

    @property
    def method(self):
        return (self.attrs.get("method") or "get").lower()

    def input(self, name):
        for i in self.inputs:
            if i.get("name") == name:
                return i
        return None

    def inputs_named(self, name):
        return [i for i in self.inputs if i.get("name") == name]

    def hidden(self):
        return {i.get("name"): i.get("value", "") for i in self.inputs
                if (i.get("type") or "").lower() == "hidden"
                and i.get("name")}

    def button(self, ident=None, value=None):
        for b in self.buttons:
            if ident is not None and b.get("id") != ident:
                continue
            if value is not None and b.get("value") != value:
                continue
            return b
        return None


class Page(HTMLParser):
    """Forms, labels, elements by id, links and visible text of a page."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input",
            "link", "meta", "source", "track", "wbr"}

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.html = html
        self.forms = []
        self.labels = []        # Element with .text
        self.by_id = {}
        self.links = []         # Element <a>
        self.elements = []      # every element (text filled for text-bearing)
        self.lang = None
        self.title = ""
        self._form = None
        self._open = []         # stack of Elements collecting text
        self._texts = []
        self._skip = 0
        self.feed(html)
        self.close()
        self.text = " ".join(" ".join(self._texts).split())

    def handle_starttag(self, tag, attrs):
        el = Element(tag, attrs)
        self.elements.append(el)
        if el.get("id"):
            self.by_id.setdefault(el.get("id"), el)
        if tag == "html":
            self.lang = el.get("lang")
        elif tag == "form":
            self._form = Form(attrs)
            self.forms.append(self._form)
        elif tag in ("input", "select", "textarea"):
            if self._form is not None:
                self._form.inputs.append(el)
        elif tag == "button":
            if self._form is not None:
                self._form.buttons.append(el)
        elif tag == "label":
            self.labels.append(el)
        elif tag == "a":
            self.links.append(el)
        if tag in ("script", "style"):
            self._skip += 1
        if tag not in self.VOID:
            self._open.append(el)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID and self._open and self._open[-1].tag == tag:
            self._open.pop()

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1
        if tag == "form":
            self._form = None
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i].tag == tag:
                del self._open[i:]
                break

    def handle_data(self, data):
        if self._skip:
            return
        self._texts.append(data)
        for el in self._open:
            el.text += data
            if el.tag == "title":
                self.title += data

    def form(self, ident):
        for f in self.forms:
            if f.id == ident:
                return f
        return None

    def label_for(self, ident):
        for lab in self.labels:
            if lab.get("for") == ident:
                return lab
        return None

    def find(self, tag=None, **attrs):
        out = []
        for el in self.elements:
            if tag and el.tag != tag:
                continue
            ok = True
            for k, v in attrs.items():
                k = k.rstrip("_").replace("_", "-")
                if k == "class":
                    if v not in (el.get("class") or "").split():
                        ok = False
                elif el.get(k) != v:
                    ok = False
            if ok:
                out.append(el)
        return out

    def error_messages(self):
        return [" ".join(e.text.split()) for e in self.elements
                if e.tag == "p" and "error" in (e.get("class") or "").split()
                and e.get("role") == "alert"]


def norm_text(s):
    return " ".join((s or "").split())


# --------------------------------------------------------------------------
# HTTP helpers

class SourceAddressAdapter(HTTPAdapter):
    """Binds outgoing connections to a given loopback address, so per
    address rate limits see a fresh client."""

    def __init__(self, source, **kw):
        self.source = source
        super().__init__(**kw)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        return super().init_poolmanager(*args, **kwargs)


def random_loopback():
    return "127.%d.%d.%d" % (random.randrange(1, 255), random.randrange(0, 256),
                             random.randrange(1, 255))


def http_session(source=None):
    s = requests.Session()
    if source is None:
        source = random_loopback()
    if source:
        a = SourceAddressAdapter(source)
        s.mount("http://", a)
    s.source_address = source
    return s


def basic_auth(client_id, secret):
    q = urllib.parse.quote
    raw = "%s:%s" % (q(client_id, safe=""), q(secret, safe=""))
    return "Basic " + base64.b64encode(raw.encode()).decode()


def location_params(resp):
    loc = resp.headers.get("Location", "")
    parts = urllib.parse.urlsplit(loc)
    return parts, urllib.parse.parse_qs(parts.query, keep_blank_values=True)


def set_cookie_headers(resp):
    raw = getattr(resp.raw, "headers", None)
    if raw is not None and hasattr(raw, "getlist"):
        return raw.getlist("Set-Cookie")
    v = resp.headers.get("Set-Cookie")
    return [v] if v else []


# --------------------------------------------------------------------------
# Request signing (draft-cavage HTTP signatures via httpsig)

class Signer:
    def __init__(self, cert_pem, key_pem, key_id=None):
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        cert = x509.load_pem_x509_certificate(cert_pem)
        self.cert_b64 = base64.b64encode(
            cert.public_bytes(serialization.Encoding.DER)).decode()
        self.key_pem = key_pem
        self.key_id = key_id or "SN=%x,CA=%s" % (
            cert.serial_number, cert.issuer.rfc4514_string())

    @classmethod
    def load(cls):
        crt = os.path.join(TOP, "var", "sandbox", "tpp.crt")
        key = os.path.join(TOP, "var", "sandbox", "tpp.key")
        if os.path.exists(crt) and os.path.exists(key):
            with open(crt, "rb") as f:
                c = f.read()
            with open(key, "rb") as f:
                k = f.read()
            return SignerPool(cls(c, k), c, k)
        return SignerPool(cls(*throwaway_cert()), None, None)

    def headers(self, method, url, body=b"", headers=None):
        import httpsig
        if isinstance(body, str):
            body = body.encode()
        body = body or b""
        h = dict(headers or {})
        h["Digest"] = "SHA-256=" + base64.b64encode(
            hashlib.sha256(body).digest()).decode()
        # A caller's own request id (to follow it through the logs) stays.
        if not any(k.lower() == "x-request-id" for k in h):
            h["X-Request-ID"] = str(uuid.uuid4())
        h["Date"] = email.utils.formatdate(usegmt=True)
        h["TPP-Signing-Certificate"] = self.cert_b64
        signed = ["digest", "x-request-id", "date"]
        for opt in ("psu-id", "psu-corporate-id", "tpp-redirect-uri",
                    "dpop"):
            if any(k.lower() == opt for k in h):
                signed.append(opt)
        signer = httpsig.HeaderSigner(self.key_id, self.key_pem,
                                      algorithm="rsa-sha256", headers=signed,
                                      sign_header="signature")
        path = urllib.parse.urlsplit(url)
        target = path.path + ("?" + path.query if path.query else "")
        return signer.sign(h, host=path.netloc, method=method, path=target)

    def request(self, method, url, session=None, body=b"", headers=None,
                **kw):
        h = self.headers(method, url, body, headers)
        return (session or requests).request(method, url, data=body or None,
                                             headers=h, **kw)


# Tokens issued through these helpers, by access token: the org id of the
# TPP they belong to, so API calls carry that TPP's certificate.
TOKEN_ORG = {}


def register_tokens(tok, client):
    if client is not None and isinstance(tok, dict):
        for k in ("access_token", "refresh_token"):
            if tok.get(k):
                TOKEN_ORG[tok[k]] = client.org_id


class SignerPool:
    """The sandbox TPP's signer, plus signers for the TPPs the tests
    register: their certificates are issued by the sandbox CA
    (var/sandbox/ca, from tests/pki/mint.sh) with the TPP's
    organizationIdentifier and the sandbox certificate's extensions (the
    PSD2 QCStatement). Without that CA every TPP uses the default signer."""

    def __init__(self, default, cert_pem, key_pem):
        self.default = default
        self.cert_pem = cert_pem
        self.key_pem = key_pem
        self.by_org = {}
        self.lock = threading.Lock()

    def headers(self, *a, **kw):
        return self.default.headers(*a, **kw)

    def request(self, *a, **kw):
        return self.default.request(*a, **kw)

    @property
    def cert_b64(self):
        return self.default.cert_b64

    def for_org(self, org_id):
        if not org_id or org_id == SANDBOX_ORG_ID or self.cert_pem is None:
            return self.default
        with self.lock:
            if org_id not in self.by_org:
                minted = mint_tpp_cert(self.cert_pem, self.key_pem, org_id)
                self.by_org[org_id] = Signer(*minted) if minted \
                    else self.default
            return self.by_org[org_id]

    def for_token(self, token):
        return self.for_org(TOKEN_ORG.get(token))


def mint_tpp_cert(tpl_pem, key_pem, org_id):
    """(cert PEM, key PEM) for org_id from the sandbox CA, or None."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import ExtensionOID, NameOID
    cadir = os.path.join(TOP, "var", "sandbox", "ca")
    try:
        with open(os.path.join(cadir, "ca.crt"), "rb") as f:
            ca = x509.load_pem_x509_certificate(f.read())
        with open(os.path.join(cadir, "ca.key"), "rb") as f:
            ca_key = serialization.load_pem_private_key(f.read(), None)
    except (OSError, ValueError):
        return None
    tpl = x509.load_pem_x509_certificate(tpl_pem)
    key = serialization.load_pem_private_key(key_pem, None)
    oid_org = x509.ObjectIdentifier("2.5.4.97")
    attrs = []
    for a in tpl.subject:
        if a.oid == oid_org:
            a = x509.NameAttribute(oid_org, org_id)
        elif a.oid in (NameOID.COMMON_NAME, NameOID.ORGANIZATION_NAME):
            a = x509.NameAttribute(a.oid, "Test TPP " + org_id)
        attrs.append(a)
    now = datetime.datetime.utcnow()
    b = (x509.CertificateBuilder().subject_name(x509.Name(attrs))
         .issuer_name(ca.subject).public_key(key.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(hours=1))
         .not_valid_after(now + datetime.timedelta(days=30)))
    for ext in tpl.extensions:
        if ext.oid == ExtensionOID.SUBJECT_KEY_IDENTIFIER:
            continue
        b = b.add_extension(ext.value, ext.critical)
    b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(
        key.public_key()), False)
    cert = b.sign(ca_key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def throwaway_cert():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([
        x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Test TPP"),
        x509.NameAttribute(NameOID.COMMON_NAME, "test-tpp"),
        x509.NameAttribute(x509.ObjectIdentifier("2.5.4.97"),
                           "PSDDE-BAFIN-999999"),
    ])
    now = datetime.datetime.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .sign(key, hashes.SHA256()))
    d = tempfile.mkdtemp(prefix="psd2-tpp-")
    cpem = cert.public_bytes(serialization.Encoding.PEM)
    kpem = key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    with open(os.path.join(d, "tpp.crt"), "wb") as f:
        f.write(cpem)
    with open(os.path.join(d, "tpp.key"), "wb") as f:
        f.write(kpem)
    return cpem, kpem


# --------------------------------------------------------------------------
# Database helpers (for checks only; the service owns the data)

def db_connect(conninfo):
    import psycopg2
    c = psycopg2.connect(conninfo)
    c.autocommit = True
    return c


def as_superuser(conninfo):
    """conninfo as the cluster's superuser: the services connect as their
    own roles (migration 083), whose sessions' queries and addresses in
    pg_stat_activity, and pg_terminate_backend, only a superuser (or
    the same role) may see and use."""
    return re.sub(r"\buser=\S+", "user=postgres", conninfo)


# Tables every instance writes in the background, whatever a request
# does: the KPI minutes of the traffic (src/metrics/kpi.h) and their
# daily sums (kpi_day, kpi_day_stale). Never part of a snapshot.
BACKGROUND_TABLES = ("public.kpi_minute", "public.kpi_day")


def db_snapshot(conninfo, exclude=()):
    """A digest of every row of every user table but the background ones:
    equal snapshots mean no row changed."""
    c = db_connect(conninfo)
    try:
        cur = c.cursor()
        cur.execute("""SELECT quote_ident(schemaname) || '.' ||
                              quote_ident(relname)
                       FROM pg_stat_user_tables ORDER BY 1""")
        out = {}
        for (t,) in cur.fetchall():
            if any(x in t for x in tuple(exclude) + BACKGROUND_TABLES):
                continue
            cur.execute("SELECT count(*), md5(coalesce(string_agg(x::text, "
                        "'|' ORDER BY x::text), '')) FROM %s x" % t)
            out[t] = cur.fetchone()
        return out
    finally:
        c.close()


def consented_ibans(dbinfo, username):
    """IBANs in the PSU's consents, read from the database (schema of
    src/db/migrations/001_foundation.sql). Any database error is raised:
    a test that cannot read the rows fails."""
    c = db_connect(dbinfo)
    try:
        cur = c.cursor()
        cur.execute("""SELECT a.iban FROM consent co
                       JOIN consent_account ca ON ca.consent_id = co.id
                       JOIN account a ON a.id = ca.account_id
                       JOIN psu p ON p.id = co.psu_id
                       WHERE p.username = %s""", (username,))
        return {compact(r[0]) for r in cur.fetchall()}
    finally:
        c.close()


def snapshot_diff(a, b):
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def db_rows(conninfo, exclude=()):
    """{table: set of row digests} of every user table."""
    c = db_connect(conninfo)
    try:
        cur = c.cursor()
        cur.execute("""SELECT quote_ident(schemaname) || '.' ||
                              quote_ident(relname)
                       FROM pg_stat_user_tables ORDER BY 1""")
        out = {}
        for (t,) in cur.fetchall():
            if any(x in t for x in tuple(exclude) + BACKGROUND_TABLES):
                continue
            cur.execute("SELECT md5(x::text) FROM %s x" % t)
            out[t] = {r[0] for r in cur.fetchall()}
        return out
    finally:
        c.close()


def rows_written(before, after):
    """Tables with rows inserted or updated between two db_rows() calls.
    Deleted rows are ignored: the service's periodic purge may remove
    expired rows at any time."""
    return sorted(t for t in after
                  if after[t] - before.get(t, set()))


# --------------------------------------------------------------------------
# A real browser: headless Chromium (Selenium), as every browser suite starts it

def chromium(lang="en-US", javascript=True, performance_log=False):
    """Headless Chromium with a fresh profile (d._psd2_profile) asking
    for lang; quit it with quit_chromium(). The flags are those Debian's
    chromium needs as root on a machine without network."""
    # Imported here: only the browser suites need Selenium.
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="psd2-chromium-")
    opts = Options()
    for a in ("--headless", "--no-sandbox", "--disable-gpu",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
              "--user-data-dir=" + profile, "--window-size=1200,1000",
              "--lang=" + lang):
        opts.add_argument(a)
    prefs = {"intl.accept_languages": lang}
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    opts.add_experimental_option("prefs", prefs)
    if performance_log:
        opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    opts.binary_location = "/usr/bin/chromium"
    try:
        d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                             options=opts)
    except Exception:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    d.set_page_load_timeout(30)
    d._psd2_profile = profile
    return d


def quit_chromium(d):
    try:
        d.quit()
    finally:
        shutil.rmtree(d._psd2_profile, ignore_errors=True)


def click_and_wait(d, element, timeout=30):
    """Clicks element and waits for the next document to replace this
    one. Selenium's staleness_of alone is not enough: while Chromium
    swaps documents it may answer "Node with given id does not belong
    to the document" instead of a stale reference; that too means the
    old document is gone. Any other error is raised."""
    from selenium.common.exceptions import (
        StaleElementReferenceException, WebDriverException)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    old = d.find_element(By.TAG_NAME, "html")

    def gone(_d):
        try:
            old.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return True
            raise
    element.click()
    WebDriverWait(d, timeout).until(gone)


# --------------------------------------------------------------------------
# The TPP's side of a browser's redirect

class CallbackServer:
    """A TPP's redirect target on 127.0.0.1:port (0: a free one):
    records every request path the browser sends to it (requests) and
    answers a small page (id tpp-done). url: its base URL."""

    def __init__(self, port=0):
        self.requests = []
        self.cond = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with outer.cond:
                    outer.requests.append(self.path)
                    outer.cond.notify_all()
                body = b"<!doctype html><title>TPP</title><p id=tpp-done>ok"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                                     Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def mark(self):
        """How many requests came so far (for wait's since)."""
        with self.cond:
            return len(self.requests)

    def wait(self, path, match=None, since=0, timeout=20):
        """(query, path with query) of the first request to path after
        the first since ones for whose query match(query) is true."""
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for got in self.requests[since:]:
                    parts = urllib.parse.urlsplit(got)
                    q = urllib.parse.parse_qs(parts.query,
                                              keep_blank_values=True)
                    if parts.path == path and (match is None or match(q)):
                        return q, got
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("no such request to %s; got %r" % (
                        path, self.requests[since:]))
                self.cond.wait(left)

    def wait_for(self, state, timeout=20):
        """The query of the /callback request that carries state."""
        return self.wait("/callback", lambda q: q.get("state") == [state],
                         timeout=timeout)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------
# The PSU side of the flow, driven with requests

class FlowError(AssertionError):
    pass


def authorize_url(base, client_id, redirect_uri, scope, state, **extra):
    q = [("response_type", extra.pop("response_type", "code")),
         ("client_id", client_id), ("redirect_uri", redirect_uri),
         ("scope", scope), ("state", state)]
    q += [(k, v) for k, v in extra.items() if v is not None]
    q = [(k, v) for k, v in q if v is not None]
    return base + "/auth/oauth/authorize?" + urllib.parse.urlencode(
        q, quote_via=urllib.parse.quote)


class PsuBrowser:
    """A PSU's browser as a requests session: cookies, forms, no JS."""

    def __init__(self, base=MAIN_URL, source=None, headers=None):
        self.base = base
        self.s = http_session(source)
        if headers:
            self.s.headers.update(headers)
        self.last = None
        self.page = None
        self.form_pages = {}    # form id -> the latest page that had it

    def _remember(self, r):
        self.last = r
        ctype = r.headers.get("Content-Type", "")
        self.page = Page(r.text) if "html" in ctype or r.text.lstrip()\
            .startswith("<") else None
        if self.page is not None:
            for f in self.page.forms:
                if f.id:
                    self.form_pages[f.id] = self.page
        return r

    def get(self, url, **kw):
        kw.setdefault("allow_redirects", False)
        kw.setdefault("timeout", 30)
        if url.startswith("/"):
            url = self.base + url
        return self._remember(self.s.get(url, **kw))

    def post(self, path, data, **kw):
        kw.setdefault("allow_redirects", False)
        kw.setdefault("timeout", 60)
        return self._remember(self.s.post(self.base + path, data=data, **kw))

    def authorize(self, url):
        r = self.get(url)
        return r

    def form(self, ident):
        """The form on the current page, else on the latest page that had
        it (as a PSU going back in the browser would find it)."""
        if self.page is not None and self.page.form(ident) is not None:
            return self.page.form(ident)
        if ident in self.form_pages:
            return self.form_pages[ident].form(ident)
        last = self.last
        raise FlowError("no form #%s on the page (status %s):\n%s" % (
            ident, last.status_code if last is not None else None,
            (last.text if last is not None else "")[:2000]))

    def submit_login(self, username, password, overrides=None, drop=()):
        f = self.form("login-form")
        data = f.hidden()
        data.update({"username": username, "password": password})
        data.update(overrides or {})
        for k in drop:
            data.pop(k, None)
        return self.post(f.action or "/auth/login", data)

    def submit_otp(self, code, overrides=None, drop=()):
        f = self.form("otp-form")
        data = f.hidden()
        data["otp"] = code
        data.update(overrides or {})
        for k in drop:
            data.pop(k, None)
        return self.post(f.action or "/auth/login/otp", data)

    def consent_accounts(self):
        """[(resourceId, label text)] of the consent page's checkboxes."""
        f = self.form("consent-form")
        out = []
        for i in f.inputs:
            if i.get("name") == "account" and \
                    (i.get("type") or "").lower() == "checkbox":
                lab = self.form_pages["consent-form"].label_for(i.get("id"))
                out.append((i.get("value"), norm_text(lab.text if lab else "")))
        return out

    def account_ids_for(self, ibans):
        want = {compact(x) for x in ibans}
        out = []
        for rid, label in self.consent_accounts():
            if any(w in compact(label) for w in want):
                out.append(rid)
        return out

    def submit_consent(self, decision="approve", accounts=None,
                       validity_days=None, overrides=None, drop=()):
        f = self.form("consent-form")
        data = list(f.hidden().items())
        data.append(("decision", decision))
        if accounts is None:
            accounts = [rid for rid, _ in self.consent_accounts()]
        data += [("account", a) for a in accounts]
        if validity_days is None:
            vd = f.input("validity_days")
            validity_days = vd.get("value") if vd is not None else None
        if validity_days is not None:
            data.append(("validity_days", str(validity_days)))
        ov = dict(overrides or {})
        data = [(k, v) for k, v in data if k not in ov and k not in drop]
        data += list(ov.items())
        return self.post(f.action or "/auth/oauth/consent", data)

    # A whole login: authorize page -> password -> TOTP -> consent page.
    def login_to_consent(self, url, psu, code=None):
        r = self.authorize(url)
        if r.status_code != 200:
            raise FlowError("authorize answered %d: %s" % (
                r.status_code, r.text[:1000]))
        r = self.submit_login(psu.username, psu.password)
        if r.status_code != 200 or self.page.form("otp-form") is None:
            raise FlowError("login answered %d: %s" % (
                r.status_code, r.text[:1000]))
        r = self.submit_otp(code or psu.totp())
        if r.status_code != 200 or self.page.form("consent-form") is None:
            raise FlowError("otp answered %d: %s" % (
                r.status_code, r.text[:1000]))
        return r


def run_code_flow(client, psu, scope="ACCOUNT_INFORMATION", state=None,
                  base=MAIN_URL, accounts=None, redirect_uri=None,
                  code_challenge=None, lang=None):
    """Walks the browser part; returns (code, state, location, browser)."""
    state = state if state is not None else secrets.token_urlsafe(12)
    redirect_uri = redirect_uri or client.redirect_uri
    extra = {}
    if code_challenge:
        extra = {"code_challenge": code_challenge,
                 "code_challenge_method": "S256"}
    if lang:
        extra["lang"] = lang
    url = authorize_url(base, client.client_id, redirect_uri, scope, state,
                        **extra)
    b = PsuBrowser(base)
    b.login_to_consent(url, psu)
    if accounts is not None and accounts and not isinstance(accounts[0], str):
        raise TypeError("accounts: list of IBANs")
    ids = None if accounts is None else b.account_ids_for(accounts)
    r = b.submit_consent("approve", ids)
    if r.status_code != 303:
        raise FlowError("consent answered %d: %s" % (r.status_code,
                                                      r.text[:1000]))
    parts, q = location_params(r)
    if "code" not in q:
        raise FlowError("consent redirect without code: %s" %
                        r.headers.get("Location"))
    return q["code"][0], q.get("state", [None])[0], \
        r.headers["Location"], b


def s256(verifier):
    return base64.urlsafe_b64encode(
        hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def token_request(data, client=None, auth=None, base=MAIN_URL, session=None,
                  headers=None):
    h = {"Content-Type": "application/x-www-form-urlencoded"}
    if auth is None and client is not None:
        auth = basic_auth(client.client_id, client.secret)
    if auth:
        h["Authorization"] = auth
    h.update(headers or {})
    body = urllib.parse.urlencode(data) if isinstance(data, (dict, list)) \
        else data
    r = (session or requests).post(base + "/auth/oauth/token", data=body,
                                   headers=h, timeout=30,
                                   allow_redirects=False)
    if r.status_code == 200:
        try:
            register_tokens(r.json(), client)
        except ValueError:
            pass
    return r


def revoke_request(data, client=None, auth=None, base=MAIN_URL, session=None):
    h = {"Content-Type": "application/x-www-form-urlencoded"}
    if auth is None and client is not None:
        auth = basic_auth(client.client_id, client.secret)
    if auth:
        h["Authorization"] = auth
    return (session or requests).post(base + "/auth/oauth/revoke",
                                      data=urllib.parse.urlencode(data),
                                      headers=h, timeout=30,
                                      allow_redirects=False)


def exchange_code(client, code, redirect_uri=None, verifier=None,
                  base=MAIN_URL, extra=None):
    data = {"grant_type": "authorization_code", "code": code,
            "redirect_uri": redirect_uri or client.redirect_uri}
    if verifier:
        data["code_verifier"] = verifier
    data.update(extra or {})
    return token_request(data, client, base=base)


ACCOUNT_LIST = "/auth/v1/psd2/account/account-list"


def api_get(signer, path, token=None, authorization=None, base=MAIN_URL,
            org_id=None):
    """A signed API GET; the certificate is that of the TPP the token was
    issued to (when known), else the sandbox TPP's."""
    h = {"Content-Type": "application/json"}
    if authorization is not None:
        h["Authorization"] = authorization
    elif token is not None:
        h["Authorization"] = "Bearer " + token
    if isinstance(signer, SignerPool):
        signer = signer.for_org(org_id) if org_id else \
            signer.for_token(token)
    return signer.request("GET", base + path, headers=h, timeout=10)
