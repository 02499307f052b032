"""conf/production.conf started for real: the configuration of
tests/prod/prodconf.py (only addresses, host paths and test certificates
differ), psd2gate started as root without -n/-r, so the workers and the
key manager chroot and drop to the unprivileged user psd2gate, with
Kore's seccomp filter on. TLS with two host names (SNI): the PSUs' host
without, the TPPs' host with a client certificate (QWAC of the test
PKI); tokens bound to the QWAC (RFC 8705); signed API calls. The database
is a fresh one of the test cluster, reached over TCP with TLS
(sslmode=verify-full against db.internal at hostaddr 127.0.0.1), filled
only with what an operator creates with psd2ctl: no sandbox data.

The test resolves the two host names to 127.0.0.1 inside this process
(socket.getaddrinfo), as /etc/hosts would, without touching the machine.
"""

import base64
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.parse

import psycopg2
import pytest
import requests

import prodconf
import psd2lib
import units
from psd2lib import PsuBrowser, location_params, random_base32, random_iban

PORT = psd2lib.test_port("PSD2_TEST_PROD_PORT", 18983)


# The staff and metrics listeners (internal addresses in production.conf),
# on 127.0.0.1: the staff pages over TLS as their internal host name, the
# metrics as "localhost". Neither is the TPP-facing interface, so
# tests/lib/openapi_check.py leaves their answers alone.
STAFF_PORT = psd2lib.free_port()
METRICS_PORT = psd2lib.free_port((STAFF_PORT,))
STAFF = "staff.psd2.bank.internal"
STAFF_URL = "https://%s:%d" % (STAFF, STAFF_PORT)
METRICS_URL = "http://localhost:%d" % METRICS_PORT
FOLDER = os.path.join(psd2lib.TOP, "var", "prod")
SANDBOX = os.path.join(psd2lib.TOP, "var", "sandbox")
PKI = os.path.join(psd2lib.TOP, "var", "test-pki")
CA = os.path.join(SANDBOX, "ca", "ca.crt")
QWAC = (os.path.join(PKI, "qwac.crt"), os.path.join(PKI, "qwac.key"))
WWW = "psd2.bank.example"
API = "api.psd2.bank.example"
WWW_URL = "https://%s:%d" % (WWW, PORT)
API_URL = "https://%s:%d" % (API, PORT)
DBNAME = "psd2gate_prod"
RUNAS = "psd2gate"
ORG = "PSDDE-BAFIN-999999"
REDIRECT = "https://tpp.example/callback"


# --------------------------------------------------------------------------
# Set-up, as an operator would do it on a host

def run(*cmd, **kw):
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, **kw)
    assert p.returncode == 0, "%s: %s%s" % (" ".join(cmd), p.stdout,
                                            p.stderr)
    return p.stdout


def system_user():
    try:
        return pwd.getpwnam(RUNAS)
    except KeyError:
        run("useradd", "--system", "--no-create-home", "--home-dir",
            "/nonexistent", "--shell", "/usr/sbin/nologin", RUNAS)
        return pwd.getpwnam(RUNAS)


def server_cert(dest_dir, name, sans, owner=None):
    """A TLS server certificate for sans, issued by the sandbox CA."""
    key = os.path.join(dest_dir, name + ".key")
    if os.path.exists(key):
        os.unlink(key)
    csr = os.path.join(dest_dir, name + ".csr")
    crt = os.path.join(dest_dir, name + ".crt")
    ext = os.path.join(dest_dir, name + ".ext")
    run("openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes",
        "-keyout", key, "-out", csr, "-subj", "/CN=%s" % sans[0])
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=%s\n" % ",".join("DNS:" + s for s in sans))
    run("openssl", "x509", "-req", "-in", csr, "-CA", CA, "-CAkey",
        os.path.join(SANDBOX, "ca", "ca.key"), "-CAcreateserial",
        "-CAserial", os.path.join(dest_dir, "ca.srl"), "-days", "30",
        "-sha256", "-extfile", ext, "-out", crt)
    for p in (csr, ext):
        os.unlink(p)
    os.chmod(key, 0o400)
    if owner is not None:
        os.chown(key, owner.pw_uid, owner.pw_gid)
    return crt, key


class superuser:
    def __enter__(self):
        self.c = psycopg2.connect(host="127.0.0.1",
                                  port=os.environ["PGPORT"],
                                  user="postgres", dbname="postgres")
        self.c.autocommit = True
        return self.c.cursor()

    def __exit__(self, *exc):
        self.c.close()


def database_with_tls():
    """A fresh database; the test cluster speaks TLS as db.internal."""
    with superuser() as cur:
        cur.execute("SHOW data_directory")
        data = cur.fetchone()[0]
        pg = pwd.getpwnam("postgres")
        crt, key = server_cert(data, "prod-db", ["db.internal"], pg)
        os.chown(crt, pg.pw_uid, pg.pw_gid)
        os.chmod(key, 0o600)
        cur.execute("ALTER SYSTEM SET ssl_cert_file = %s", (crt,))
        cur.execute("ALTER SYSTEM SET ssl_key_file = %s", (key,))
        cur.execute("ALTER SYSTEM SET ssl = on")
        cur.execute("SELECT pg_reload_conf()")
        cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % DBNAME)
        cur.execute('CREATE DATABASE "%s" OWNER psd2gate' % DBNAME)
    time.sleep(0.5)


def database_drop():
    with superuser() as cur:
        cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % DBNAME)
        for k in ("ssl", "ssl_cert_file", "ssl_key_file"):
            cur.execute("ALTER SYSTEM RESET %s" % k)
        cur.execute("SELECT pg_reload_conf()")


def host_folders(user):
    shutil.rmtree(FOLDER, ignore_errors=True)
    etc, root = os.path.join(FOLDER, "etc"), os.path.join(FOLDER, "root")
    for d in ("keys/tls", "tls", "trust", "device"):
        os.makedirs(os.path.join(etc, d))
    # The manufacturer CA the staff pages verify attestations with.
    shutil.copy(os.path.join(psd2lib.TOP, "device", "testkeys",
                             "manufacturer-test-ca.pem"),
                os.path.join(etc, "device", "manufacturer-ca.pem"))
    for d in ("trust", "crl", "tls"):
        os.makedirs(os.path.join(root, d))
    os.chmod(os.path.join(etc, "keys"), 0o711)
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pki",
                                       "mint.sh"), "sandbox", SANDBOX],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pki",
                                       "mint.sh"), "test", PKI,
                    os.path.join(SANDBOX, "ca")], check=True,
                   stdout=subprocess.DEVNULL)
    # The key manager (keymgr_root, as psd2gate) reads the TLS keys.
    tls = os.path.join(etc, "keys", "tls")
    for name, host in (("api", API), ("www", WWW), ("staff", STAFF)):
        server_cert(tls, name, [host], user)
    shutil.copy(os.path.join(PKI, "dh.pem"),
                os.path.join(etc, "tls", "dh2048.pem"))
    for f in os.listdir(os.path.join(SANDBOX, "trust")):
        shutil.copy(os.path.join(SANDBOX, "trust", f),
                    os.path.join(etc, "trust", f))
    # Inside root (the workers' chroot): the QWAC CAs, CRLs, the DB CA.
    shutil.copy(os.path.join(SANDBOX, "trust", "sandbox-ca.pem"),
                os.path.join(root, "trust", "qwac-ca.pem"))
    for f in os.listdir(os.path.join(SANDBOX, "crl")):
        shutil.copy(os.path.join(SANDBOX, "crl", f),
                    os.path.join(root, "crl", f))
    shutil.copy(CA, os.path.join(root, "tls", "db-ca.pem"))
    os.chmod(FOLDER, 0o755)


def ctl(conf, *args):
    p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl"), "-c",
                        conf] + list(args), text=True, timeout=120,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, "psd2ctl %s: %s%s" % (" ".join(args),
                                                    p.stdout, p.stderr)
    return p.stdout


class Operator:
    """What the operator created with psd2ctl: one TPP, one PSU."""

    def __init__(self, conf):
        ctl(conf, "keys-init")
        ctl(conf, "migrate")
        out = ctl(conf, "tpp", "add", "--name", "Production TPP AG",
                  "--org-id", ORG, "--redirect-uri", REDIRECT,
                  "--pkce-required")
        found = dict(re.findall(r"(?m)^\s*(client_id|client_secret): (\S+)$",
                                out))
        self.client_id = found["client_id"]
        self.secret = found["client_secret"]
        self.username = "erika"
        self.password = "Erika-" + random_base32(8)
        self.totp = random_base32()
        ctl(conf, "psu", "add", self.username, "--password", self.password,
            "--totp-secret", self.totp, "--name", "Erika Mustermann")
        self.iban = random_iban("DE")
        ctl(conf, "account", "add", self.username, self.iban, "EUR",
            "Girokonto")


# --------------------------------------------------------------------------
# The instance

def resolve_bank_names(monkeypatch):
    real = socket.getaddrinfo

    def fake(host, *a, **kw):
        if host in (WWW, API, STAFF):
            host = "127.0.0.1"
        return real(host, *a, **kw)
    monkeypatch.setattr(socket, "getaddrinfo", fake)


@pytest.fixture(scope="module")
def prod(pgcluster):
    mp = pytest.MonkeyPatch()
    resolve_bank_names(mp)
    if psd2lib.port_open(PORT):
        pytest.fail("port %d is taken by %s" % (
            PORT, psd2lib.port_holder(PORT)))
    assert os.geteuid() == 0, "the production test starts psd2gate as root"
    user = system_user()
    host_folders(user)
    database_with_tls()
    conf = prodconf.generate(os.path.join(FOLDER, "etc", "psd2gate.conf"),
                             FOLDER, PORT, int(os.environ["PGPORT"]),
                             DBNAME, STAFF_PORT, METRICS_PORT)["conf"]
    op = Operator(conf)
    log_path = os.path.join(psd2lib.LOG_DIR, "%s-psd2gate-production.log" %
                            psd2lib.suite_label())
    log = open(log_path, "wb")
    # As systemd starts it: no HOME, no PG* variables (the configuration
    # alone must do), no locale.
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    # As conf/systemd/psd2gate.service starts it: root with only the
    # unit's bounding set of capabilities, no new privileges.
    caps = ",".join("+" + c for c in units.capability_bounding_set())
    proc = subprocess.Popen(["setpriv", "--bounding-set", "-all," + caps,
                             "--inh-caps", "-all", "--no-new-privs", "--",
                             os.path.join(psd2lib.bin_dir(), "psd2gate"),
                             "-c", conf, "-f"], cwd="/", env=env,
                            stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 30
    while True:
        try:
            r = requests.get(API_URL + "/health", cert=QWAC, verify=CA,
                             timeout=2)
            if r.status_code == 200:
                break
        except requests.RequestException:
            pass
        if proc.poll() is not None or time.time() > deadline:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            log.close()
            pytest.fail("production psd2gate did not come up; log:\n" +
                        open(log_path).read()[-4000:])
        time.sleep(0.2)
    inst = type("Prod", (), {})()
    inst.proc, inst.conf, inst.op, inst.log_path = proc, conf, op, log_path
    inst.user = user
    yield inst
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    log.close()
    mp.undo()
    database_drop()


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def proc_status(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(ln.split(":", 1) for ln in f.read().splitlines()
                    if ":" in ln)


# --------------------------------------------------------------------------
# Tests

def test_workers_and_keymgr_are_chrooted_unprivileged_and_filtered(prod):
    kids = children(prod.proc.pid)
    assert len(kids) >= 5, kids     # keymgr + 4 workers
    roots = set()
    for pid in kids:
        st = proc_status(pid)
        uids = st["Uid"].split()
        assert set(uids) == {str(prod.user.pw_uid)}, (pid, st["Uid"])
        assert set(st["Gid"].split()) == {str(prod.user.pw_gid)}, pid
        assert st["CapEff"].strip() == "0" * 16, (pid, st["CapEff"])
        roots.add(os.readlink("/proc/%d/root" % pid))
    assert roots == {os.path.join(FOLDER, "root"),
                     os.path.join(FOLDER, "etc", "keys")}, roots
    # Kore's seccomp filter (mode 2) in every worker.
    workers = [p for p in kids if os.readlink("/proc/%d/root" % p) ==
               os.path.join(FOLDER, "root")]
    assert len(workers) == 4
    for pid in workers:
        assert proc_status(pid)["Seccomp"].strip() == "2", pid


def test_parent_keeps_only_the_units_capabilities(prod):
    st = proc_status(prod.proc.pid)
    assert st["Uid"].split()[0] == "0"
    want = 0
    for c in units.capability_bounding_set():
        want |= 1 << CAPS[c]
    assert int(st["CapBnd"], 16) == want
    assert int(st["CapEff"], 16) == want
    assert st["NoNewPrivs"].strip() == "1"


CAPS = {"kill": 5, "setgid": 6, "setuid": 7, "net_bind_service": 10,
        "sys_chroot": 18}


def served_serial(host):
    ctx = ssl.create_default_context(cafile=CA)
    ctx.load_cert_chain(*QWAC)
    with socket.create_connection(("127.0.0.1", PORT), 5) as s:
        with ctx.wrap_socket(s, server_hostname=host) as t:
            der = t.getpeercert(binary_form=True)
    from cryptography import x509
    return x509.load_der_x509_certificate(der).serial_number


def test_tls_certificate_rotation_on_reload(prod):
    """The unit's ExecReload (SIGUSR1): the key manager, chrooted and
    unprivileged, reads the renewed certificate; no restart."""
    before = served_serial(WWW)
    tls = os.path.join(FOLDER, "etc", "keys", "tls")
    crt, _ = server_cert(tls, "www", [WWW], prod.user)
    from cryptography import x509
    with open(crt, "rb") as f:
        new = x509.load_pem_x509_certificate(f.read()).serial_number
    assert new != before
    os.kill(prod.proc.pid, signal.SIGUSR1)
    deadline = time.time() + 10
    seen = None
    while seen != new and time.time() < deadline:
        time.sleep(0.2)
        try:
            seen = served_serial(WWW)
        except ssl.SSLError as e:     # certificate and key of two ages
            seen = e
    assert seen == new
    for _ in range(8):      # every worker has both
        assert served_serial(WWW) == new
    r = requests.get(WWW_URL + "/health", verify=CA, timeout=10)
    assert r.status_code == 200


def test_psu_host_needs_no_client_certificate_and_sends_hsts(prod):
    r = requests.get(WWW_URL + "/health", verify=CA, timeout=10)
    assert r.status_code == 200
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")


def test_staff_and_metrics_on_their_own_listeners_only(prod):
    """production.conf has the whole product: the staff pages on the
    internal listener, the metrics on the monitoring one, and neither on
    the public port (either host name) nor on each other's listener."""
    r = requests.get(STAFF_URL + "/staff", verify=CA, timeout=10)
    assert r.status_code == 200, r.text[:300]
    assert 'id="staff-login-form"' in r.text
    # TLS on the internal listener too: HSTS, and cookies only over TLS.
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")
    cookies = r.raw.headers.getlist("Set-Cookie")
    assert cookies, r.headers
    for c in cookies:
        assert "; Secure" in c, c
    # Plain HTTP on the staff port gets no page.
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get("http://127.0.0.1:%d/staff" % STAFF_PORT, timeout=10)
    r = requests.get(METRICS_URL + "/metrics", timeout=10)
    assert r.status_code == 200, r.text[:300]
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert re.search(r"(?m)^psd2_\w+(\{[^}]*\})? \S+$", r.text), \
        r.text[:500]
    p = subprocess.run(["/usr/bin/promtool", "check", "metrics"],
                       input=r.text, capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and not (p.stdout + p.stderr).strip(), \
        (p.stdout, p.stderr)
    for path in ("/staff", "/staff/login", "/metrics"):
        r = requests.get(WWW_URL + path, verify=CA, timeout=10)
        assert r.status_code == 404, (path, r.status_code)
        r = requests.get(API_URL + path, cert=QWAC, verify=CA, timeout=10)
        assert r.status_code == 404, (path, r.status_code)
    assert requests.get(STAFF_URL + "/metrics", verify=CA,
                        timeout=10).status_code == 404
    assert requests.get(METRICS_URL + "/staff",
                        timeout=10).status_code == 404
    # The public API is not on the internal listeners either.
    assert requests.get(STAFF_URL + "/auth/oauth/authorize", verify=CA,
                        timeout=10).status_code == 404


def test_audit_checkpoint_with_the_production_key(prod):
    """psd2_audit_keys: keys-init made the key, and psd2ctl signs and
    verifies a checkpoint of the audit chain with it."""
    keys = os.path.join(FOLDER, "etc", "keys", "audit.keys")
    assert os.path.exists(keys)
    head = os.path.join(FOLDER, "audit-head")
    ctl(prod.conf, "audit", "checkpoint", head)
    out = ctl(prod.conf, "audit", "verify", "--checkpoint", head)
    assert "audit: chain intact: " in out and "BAD" not in out, out


def test_tpp_host_refuses_a_connection_without_a_qwac(prod):
    with pytest.raises(requests.exceptions.RequestException):
        requests.get(API_URL + "/health", verify=CA, timeout=10)


def test_metadata_names_the_production_endpoints(prod):
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
    r = requests.get(WWW_URL + "/.well-known/oauth-authorization-server",
                     verify=CA, timeout=10)
    assert r.status_code == 200, r.text
    doc = r.json()
    saved = os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
    try:
        AuthorizationServerMetadata(doc).validate()   # https required
    finally:
        if saved is not None:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = saved
    assert doc["issuer"] == WWW_URL
    assert doc["authorization_endpoint"] == WWW_URL + "/auth/oauth/authorize"
    assert doc["mtls_endpoint_aliases"] == {
        "token_endpoint": API_URL + "/auth/oauth/token",
        "revocation_endpoint": API_URL + "/auth/oauth/revoke",
        "pushed_authorization_request_endpoint":
            API_URL + "/auth/oauth/par"}
    assert doc["pushed_authorization_request_endpoint"] == \
        WWW_URL + "/auth/oauth/par"
    assert doc["token_endpoint_auth_methods_supported"] == [
        "client_secret_basic", "private_key_jwt", "tls_client_auth"]
    assert doc["tls_client_certificate_bound_access_tokens"] is True


def test_no_http_redirect_uri_in_production(prod):
    """FAPI 2.0 5.3.2.2: production registers https redirect URIs only,
    not even http on the loopback (which the sandbox allows), and does
    not send a PSU to one that came into the registry otherwise."""
    p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl"), "-c",
                        prod.conf, "tpp", "add", "--name", "Loopback AG",
                        "--org-id", "PSDDE-BAFIN-777001", "--redirect-uri",
                        "http://127.0.0.1:8000/callback"], text=True,
                       timeout=120, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    assert p.returncode != 0 and "redirect URI must be https" in p.stderr, \
        (p.stdout, p.stderr)
    op = prod.op
    loopback = "http://127.0.0.1:8000/callback"
    conn = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                            user="postgres", dbname=DBNAME)
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM tpp WHERE org_id = %s",
                    ("PSDDE-BAFIN-777001",))
        assert cur.fetchone()[0] == 0
        cur.execute("UPDATE oauth_client SET redirect_uris = "
                    "redirect_uris || %s::text WHERE client_id = %s",
                    (loopback, op.client_id))
        # Past the workers' client cache (10 seconds).
        time.sleep(11)
        b = PsuBrowser(WWW_URL)
        b.s.verify = CA
        b.s.trust_env = False
        r = b.authorize(psd2lib.authorize_url(
            WWW_URL, op.client_id, loopback, "ACCOUNT_INFORMATION", "st-h",
            code_challenge=psd2lib.s256("v" * 43),
            code_challenge_method="S256"))
        assert r.status_code == 400 and "Location" not in r.headers, \
            r.text[:500]
    finally:
        cur.execute("UPDATE oauth_client SET redirect_uris = "
                    "array_remove(redirect_uris, %s) WHERE client_id = %s",
                    (loopback, op.client_id))
        conn.close()


def test_pushed_request_over_mtls_then_the_psu_host(prod):
    """RFC 9126 in production's configuration: the TPP pushes its request
    on the API host with its QWAC (the metadata's mTLS alias), the PSU's
    browser brings the request_uri to the PSU host (again on a reload,
    until the PSU decides)."""
    op = prod.op
    verifier = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    r = requests.post(API_URL + "/auth/oauth/par", cert=QWAC, verify=CA,
                      timeout=30, headers={"Authorization": psd2lib.basic_auth(
                          op.client_id, op.secret)}, data={
                          "response_type": "code", "redirect_uri": REDIRECT,
                          "scope": "ACCOUNT_INFORMATION", "state": "st-par",
                          "code_challenge": psd2lib.s256(verifier),
                          "code_challenge_method": "S256"})
    assert r.status_code == 201, r.text
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")
    uri = r.json()["request_uri"]
    b = PsuBrowser(WWW_URL)
    b.s.verify = CA
    b.s.trust_env = False
    url = WWW_URL + "/auth/oauth/authorize?" + urllib.parse.urlencode(
        {"client_id": op.client_id, "request_uri": uri})
    # Until the PSU decides, a reload reads it again (FAPI 2.0's
    # conformance tests); the decision uses it up.
    for _ in range(2):
        r = b.authorize(url)
        assert r.status_code == 200 and \
            b.page.form("login-form") is not None, r.text[:500]


def test_full_flow_against_production(prod, signer):
    op = prod.op
    verifier = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    state = "st-" + random_base32(6)
    url = psd2lib.authorize_url(
        WWW_URL, op.client_id, REDIRECT, "ACCOUNT_INFORMATION", state,
        code_challenge=psd2lib.s256(verifier), code_challenge_method="S256")
    b = PsuBrowser(WWW_URL)
    b.s.verify = CA
    b.s.trust_env = False     # REQUESTS_CA_BUNDLE would override verify
    cookies = []
    r = b.authorize(url)
    assert r.status_code == 200, r.text[:500]
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")
    cookies += r.raw.headers.getlist("Set-Cookie")
    r = b.submit_login(op.username, op.password)
    assert r.status_code == 200 and b.page.form("otp-form") is not None, \
        r.text[:1000]
    cookies += r.raw.headers.getlist("Set-Cookie")
    r = b.submit_otp(psd2lib.fresh_totp(op.username, op.totp))
    assert r.status_code == 200 and b.page.form("consent-form") is not None, \
        r.text[:1000]
    after_otp = r.raw.headers.getlist("Set-Cookie")
    assert after_otp, "no session cookie after the TOTP step"
    cookies += after_otp
    for c in cookies:
        attrs = [a.strip().lower() for a in c.split(";")[1:]]
        assert "secure" in attrs, c
        assert "httponly" in attrs, c
    r = b.submit_consent("approve")
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")
    assert r.status_code == 303, r.text[:500]
    _, q = location_params(r)
    assert q["state"] == [state]
    # RFC 9207: the configured issuer, not the Host the browser sent.
    assert q["iss"] == [WWW_URL]
    # The token over mTLS with the QWAC: bound to it (RFC 8705).
    basic = psd2lib.basic_auth(op.client_id, op.secret)
    r = requests.post(API_URL + "/auth/oauth/token", cert=QWAC, verify=CA,
                      timeout=30, headers={"Authorization": basic}, data={
                          "grant_type": "authorization_code",
                          "code": q["code"][0], "redirect_uri": REDIRECT,
                          "code_verifier": verifier})
    assert r.status_code == 200, r.text
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")
    tok = r.json()
    der = psd2lib_der(QWAC[0])
    x5t = base64.urlsafe_b64encode(hashlib.sha256(der).digest()) \
        .rstrip(b"=").decode()
    conn = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                            user="postgres", dbname=DBNAME)
    try:
        cur = conn.cursor()
        cur.execute("SELECT cnf FROM token WHERE token_hash = %s",
                    (hashlib.sha256(tok["access_token"].encode()).digest(),))
        assert cur.fetchone()[0] == x5t
        # No sandbox data: only what the operator created.
        cur.execute("SELECT count(*) FROM psu")
        assert cur.fetchone()[0] == 1
        cur.execute("SELECT count(*) FROM tpp")
        assert cur.fetchone()[0] == 1
        # The workers' connections use TLS (sslmode=verify-full).
        cur.execute("""SELECT s.ssl FROM pg_stat_ssl s
                       JOIN pg_stat_activity a USING (pid)
                       WHERE a.datname = %s AND a.usename = 'psd2_service'""",
                    (DBNAME,))
        ssl_flags = [row[0] for row in cur.fetchall()]
        assert ssl_flags and all(ssl_flags), ssl_flags
    finally:
        conn.close()
    # The signed account list, with the QWAC of the bound token.
    sig = signer.default
    h = sig.headers("GET", API_URL + psd2lib.ACCOUNT_LIST,
                    headers={"Authorization": "Bearer " +
                             tok["access_token"],
                             "PSU-IP-Address": "192.0.2.10"})
    r = requests.get(API_URL + psd2lib.ACCOUNT_LIST, headers=h, cert=QWAC,
                     verify=CA, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Strict-Transport-Security"].startswith("max-age=")
    assert [a["iban"] for a in r.json()["accounts"]] == [op.iban]
    # Unsigned: refused (signing required).
    r = requests.get(API_URL + psd2lib.ACCOUNT_LIST, cert=QWAC, verify=CA,
                     timeout=30, headers={"Authorization": "Bearer " +
                                          tok["access_token"]})
    assert r.status_code == 401, r.text
    # The bound token over the PSU host (no certificate): invalid.
    h = sig.headers("GET", WWW_URL + psd2lib.ACCOUNT_LIST,
                    headers={"Authorization": "Bearer " +
                             tok["access_token"]})
    r = requests.get(WWW_URL + psd2lib.ACCOUNT_LIST, headers=h, verify=CA,
                     timeout=30)
    assert r.status_code == 401, r.text
    assert r.json()["error"] == "invalid_token"


def psd2lib_der(path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    with open(path, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    return cert.public_bytes(serialization.Encoding.DER)


def revocation_failures(reason):
    text = requests.get(METRICS_URL + "/metrics", timeout=10).text
    m = re.search(r'(?m)^psd2_tpp_revocation_failures_total'
                  r'\{reason="%s"\} (\d+)$' % reason, text)
    assert m, text[:2000]
    return int(m.group(1))


def test_an_emptied_crl_folder_is_logged_and_counted(prod, signer):
    """The CRL folder emptied under a running production instance (a CRL
    download that failed): revocation stays on with the CRLs loaded, and
    the failed reload is logged and counted."""
    crl = os.path.join(FOLDER, "root", "crl")
    aside = os.path.join(FOLDER, "crl-aside")
    os.makedirs(aside, exist_ok=True)
    before = revocation_failures("crl_folder_empty")
    names = os.listdir(crl)
    assert names
    for n in names:
        os.rename(os.path.join(crl, n), os.path.join(aside, n))
    try:
        time.sleep(1.1)     # a worker looks at the folder once a second
        sig = signer.default
        deadline = time.time() + 15
        while revocation_failures("crl_folder_empty") == before and \
                time.time() < deadline:
            h = sig.headers("GET", API_URL + psd2lib.ACCOUNT_LIST,
                            headers={"Authorization": "Bearer " +
                                     "2f6a5c1e-0b7d-4e55-9a0f-6f1c2d3e4a5b",
                                     "PSU-IP-Address": "192.0.2.10"})
            requests.get(API_URL + psd2lib.ACCOUNT_LIST, headers=h,
                         cert=QWAC, verify=CA, timeout=30)
            time.sleep(0.2)
        assert revocation_failures("crl_folder_empty") > before
        with open(prod.log_path, errors="replace") as f:
            assert "TPP revocation crl_folder_empty" in f.read()
    finally:
        for n in names:
            os.rename(os.path.join(aside, n), os.path.join(crl, n))


def test_production_does_not_start_without_revocation_data(prod):
    """production.conf with an empty CRL folder: psd2gate refuses to
    start, naming the missing revocation data."""
    empty = os.path.join(FOLDER, "root", "crl-empty")
    os.makedirs(empty, exist_ok=True)
    ports = [psd2lib.free_port()]
    ports.append(psd2lib.free_port(tuple(ports)))
    ports.append(psd2lib.free_port(tuple(ports)))
    conf = prodconf.generate(os.path.join(FOLDER, "etc", "nocrl.conf"),
                             FOLDER, ports[0], int(os.environ["PGPORT"]),
                             DBNAME, ports[1], ports[2])["conf"]
    with open(conf) as f:
        text = f.read()
    text, n = re.subn(r"(?m)^psd2_crl_dir\s+\S+$",
                      "psd2_crl_dir\t\t\t" + empty, text)
    assert n == 1
    with open(conf, "w") as f:
        f.write(text)
    p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2gate"), "-c",
                        conf, "-f"], cwd="/", env={"PATH": "/usr/bin:/bin"},
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-2000:]
    assert "revocation is required" in out, out[-2000:]
    assert not psd2lib.port_open(ports[0])


def test_probe_answered_over_tls_in_every_class(prod):
    """The downtime probe as production.conf runs it: worker 1's task
    thread, inside the chroot and the seccomp filter, over TLS to the
    PSU pages' host name on this listener; every class answered (each
    request needs the database), none in the request log."""
    deadline = time.time() + 20
    classes = ("oauth", "ais", "pis", "funds", "psu_pages")
    while True:
        text = requests.get(METRICS_URL + "/metrics", timeout=10).text
        got = {c: re.search(r'(?m)^psd2_probe_requests_total\{class="%s",'
                            r'outcome="answered"\} (\d+)$' % c, text)
               for c in classes}
        if all(got.values()) or time.time() > deadline:
            break
        time.sleep(0.5)
    assert all(got.values()), text
    assert not re.search(r'psd2_probe_requests_total\{[^}]*'
                         r'outcome="failed"', text), text
    assert re.search(r'(?m)^psd2_interface_down\{class="ais",'
                     r'source="probe"\} 0$', text), text
    with open(prod.log_path, errors="replace") as f:
        log = f.read()
    assert "probe:" not in log, log[-2000:]
    assert not re.search(r"request id=\S+ method=\S+ path=/auth/payments ",
                         log), log[-2000:]


def test_tls_client_auth(prod):
    """RFC 8705 2.1 in production's configuration: a client registered for
    tls_client_auth authenticates at the token, PAR and revocation
    endpoints by its QWAC alone (client_id in the body): the certificate
    verified and its organizationIdentifier the client's TPP's. Its
    secret no longer counts; without the certificate, with another TPP's,
    or for a client of HTTP Basic, the certificate authenticates nobody.
    (After the tests that count the TPPs: this one adds one.)"""
    conf = prod.conf
    found = dict(re.findall(r"(?m)^\s*(client_id|client_secret): (\S+)$",
                            ctl(conf, "tpp", "add", "--name",
                                "Production TPP AG", "--org-id", ORG,
                                "--redirect-uri", REDIRECT)))
    cid, secret = found["client_id"], found["client_secret"]
    assert ctl(conf, "tpp", "auth-method", cid, "tls_client_auth").strip() \
        == "%s: authenticates with tls_client_auth" % cid

    def post(base, path, data, cert=QWAC, auth=None):
        return requests.post(base + path, cert=cert, verify=CA, timeout=30,
                             data=data, headers={"Authorization": auth}
                             if auth else {})

    grant = {"grant_type": "client_credentials", "client_id": cid}
    r = post(API_URL, "/auth/oauth/token", grant)
    assert r.status_code == 200, r.text
    tok = r.json()["access_token"]
    r = post(API_URL, "/auth/oauth/par", {
        "client_id": cid, "response_type": "code", "redirect_uri": REDIRECT,
        "scope": "ACCOUNT_INFORMATION", "state": "st-tls"})
    assert r.status_code == 201, r.text
    r = post(API_URL, "/auth/oauth/revoke", {"client_id": cid,
                                               "token": tok})
    assert r.status_code == 200, r.text
    conn = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                            user="postgres", dbname=DBNAME)
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute("SELECT revoked_at IS NOT NULL, cnf IS NOT NULL "
                    "FROM token WHERE token_hash = %s",
                    (hashlib.sha256(tok.encode()).digest(),))
        assert cur.fetchone() == (True, True)
        cur.execute("SELECT detail FROM audit_log WHERE action = "
                    "'tpp.client_auth' AND detail->>'client_id' = %s", (cid,))
        assert [x[0] for x in cur.fetchall()] == [
            {"client_id": cid, "auth_method": "tls_client_auth"}]
    finally:
        conn.close()
    basic = psd2lib.basic_auth(cid, secret)
    refused = [
        # its secret, even with the certificate
        post(API_URL, "/auth/oauth/token", grant, auth=basic),
        # no certificate: the PSU host
        post(WWW_URL, "/auth/oauth/token", grant, cert=None),
        # a client of HTTP Basic
        post(API_URL, "/auth/oauth/token", dict(
            grant, client_id=prod.op.client_id)),
    ]
    other = dict(re.findall(r"(?m)^\s*(client_id|client_secret): (\S+)$",
                            ctl(conf, "tpp", "add", "--name", "Other TPP AG",
                                "--org-id", "PSDDE-BAFIN-777003",
                                "--redirect-uri", REDIRECT)))["client_id"]
    ctl(conf, "tpp", "auth-method", other, "tls_client_auth")
    # another TPP's client: the QWAC is not its organisation's
    refused.append(post(API_URL, "/auth/oauth/token",
                        dict(grant, client_id=other)))
    for r in refused:
        assert r.status_code == 401, r.text
        assert r.json()["error"] == "invalid_client", r.text
    # The Basic client is unchanged.
    r = post(API_URL, "/auth/oauth/token", {
        "grant_type": "client_credentials"},
        auth=psd2lib.basic_auth(prod.op.client_id, prod.op.secret))
    assert r.status_code == 200, r.text


def mtls_client_flow(prod, gw, tmp_path, cid, scope, calls):
    """openid-client's PAR over mTLS, the PSU's login and consent, then
    its code grant and calls: its result."""
    from fapi_client import node
    op = prod.op
    state = tmp_path / ("state-%s.json" % scope)
    state.write_text(json.dumps({
        "issuer": WWW_URL, "client_id": cid, "redirect_uri": REDIRECT,
        "scope": scope, "signing_proxy": gw.url, "calls": calls,
        "mtls": {"cert": QWAC[0], "key": QWAC[1], "ca": CA,
                 "hosts": {WWW: "127.0.0.1", API: "127.0.0.1"}}}))
    url = node("begin", str(state))["url"]
    assert url.startswith(WWW_URL + "/auth/oauth/authorize?"), url
    assert "request_uri=" in url and "code_challenge" not in url
    b = PsuBrowser(WWW_URL)
    b.s.verify = CA
    b.s.trust_env = False
    r = b.authorize(url)
    assert r.status_code == 200, r.text[:500]
    r = b.submit_login(op.username, op.password)
    assert b.page.form("otp-form") is not None, r.text[:1000]
    r = b.submit_otp(psd2lib.fresh_totp(op.username, op.totp))
    assert b.page.form("consent-form") is not None, r.text[:1000]
    r = b.submit_consent("approve")
    assert r.status_code == 303, r.text[:500]
    out = node("finish", str(state), r.headers["Location"])
    assert out["token_type"].lower() == "bearer", out
    return out


def test_openid_client_over_mtls(prod, signer, tmp_path):
    """The issue's proof, mTLS variant: panva's openid-client (npm, a
    certified FAPI 2.0 relying party; tests/lib/fapi_client.py) with
    tls_client_auth, its requests over TLS with the QWAC (undici):
    discovery on the PSU host, PAR and the code grant on the metadata's
    mTLS aliases, the PSU's login between them, then the account list and
    a payment initiation with the mTLS-bound tokens, signed by the TPP's
    gateway. (After the tests that count the TPPs: this one adds a
    client.)"""
    from fapi_client import Gateway, install
    install()
    conf, op = prod.conf, prod.op
    found = dict(re.findall(r"(?m)^\s*(client_id|client_secret): (\S+)$",
                            ctl(conf, "tpp", "add", "--name",
                                "Production TPP AG", "--org-id", ORG,
                                "--redirect-uri", REDIRECT)))
    cid = found["client_id"]
    for args in (("auth-method", cid, "tls_client_auth"),
                 ("par-required", cid, "on"),
                 ("refresh-rotation", cid, "off")):
        ctl(conf, "tpp", *args)
    gw = Gateway(signer.default, cert=QWAC, verify=CA)
    try:
        ais = mtls_client_flow(prod, gw, tmp_path, cid, "ACCOUNT_INFORMATION",
                               [{"method": "GET", "url": API_URL +
                                 psd2lib.ACCOUNT_LIST, "headers": {
                                     "PSU-IP-Address": "192.0.2.10"}}])
        pis = mtls_client_flow(prod, gw, tmp_path, cid, "PAYMENT_INITIATION",
                               [{"method": "POST", "url": API_URL +
                                 "/auth/v1/psd2/payments/"
                                 "sepa-credit-transfers", "body": {
                                     "instructedAmount": {
                                         "currency": "EUR",
                                         "amount": "12.34"},
                                     "debtorAccount": {"iban": op.iban},
                                     "creditorAccount": {
                                         "iban": "DE89370400440532013000"},
                                     "creditorName": "Max Mustermann"},
                                 "headers": {
                                     "TPP-Redirect-URI": REDIRECT,
                                     "PSU-IP-Address": "192.0.2.10"}}])
    finally:
        gw.close()
    (call,) = ais["calls"]
    assert call["status"] == 200, call
    assert [a["iban"] for a in json.loads(call["body"])["accounts"]] == \
        [op.iban]
    (call,) = pis["calls"]
    assert call["status"] == 201, call
    assert json.loads(call["body"])["transactionStatus"] == "RCVD", call
    # The access tokens are bound to the QWAC the library presented.
    x5t = base64.urlsafe_b64encode(hashlib.sha256(psd2lib_der(
        QWAC[0])).digest()).rstrip(b"=").decode()
    conn = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                            user="postgres", dbname=DBNAME)
    try:
        cur = conn.cursor()
        cur.execute("SELECT DISTINCT cnf FROM token WHERE client_id = %s "
                    "AND kind = 'access'", (cid,))
        assert cur.fetchall() == [(x5t,)]
    finally:
        conn.close()


def test_shutdown_is_clean(prod):
    """Last: SIGTERM stops every process of the instance cleanly. Inside
    the chroot glibc could not load libgcc_s to end the task threads and
    the workers aborted (src/app/main.c, app_preload_unwinder)."""
    assert prod.proc.poll() is None, "psd2gate died during the tests"
    kids = children(prod.proc.pid)
    prod.proc.send_signal(signal.SIGTERM)
    # A worker drains its keep-alive connections first (at most
    # http_keepalive_time, 30 s; the unit's TimeoutStopSec is above it).
    assert prod.proc.wait(45) == 0
    deadline = time.time() + 10
    while any(os.path.exists("/proc/%d" % p) for p in kids) and \
            time.time() < deadline:
        time.sleep(0.1)
    assert not any(os.path.exists("/proc/%d" % p) for p in kids)
    with open(prod.log_path, errors="replace") as f:
        log = f.read()
    assert "libgcc_s" not in log, log[-3000:]
    assert "seccomp" not in log.replace("seccomp sandbox enabled", "") \
        .replace("seccomp filter 'pgsql' dropped", ""), log[-3000:]
    for name in ("wrk 1", "wrk 2", "wrk 3", "wrk 4", "keymgr"):
        assert "worker [%s] exited" % name in log, log[-3000:]
