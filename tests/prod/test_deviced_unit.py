"""psd2-deviced started the way conf/systemd/psd2-deviced.service says.
systemd is not PID 1 here, so neither systemctl nor
systemd-run can start the unit; this test starts what the unit would:
its ExecStart (from the unit, paths of the test machine substituted by
tests/prod/units.py), as its User and Group with no supplementary groups,
its empty CapabilityBoundingSet and no ambient capabilities,
NoNewPrivileges and its UMask, with no environment but PATH (the unit sets
none), via setpriv.

The USB device is an emulated authenticator (umockdev, psd2-emuhost),
which must run as the same user as the daemon (its test bed is a private
folder of the process that makes it), so psd2-emuhost is dropped to the
unit's user too and starts the daemon as its child.

What this proves: the daemon runs unprivileged (uid, gid, no
capabilities, no_new_privs, umask checked in /proc), its configuration
file at the unit's path is enough, it reaches PostgreSQL with the
restricted role psd2_daemon (migration 083) and no PG* variables, sees
the emulated device, records it, answers a challenge (PIN, button) and
stops cleanly on SIGTERM. What it does not prove: the rest of the unit's
sandbox (ProtectSystem, PrivateTmp, DevicePolicy/DeviceAllow,
RestrictAddressFamilies, MemoryDenyWriteExecute,
SystemCallArchitectures), Restart=on-failure and the udev rule: only
systemd applies those (systemd-analyze verify checks the unit,
test_systemd.py), and umockdev's emulated usbfs is not a /dev/bus/usb
node."""

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid

import psycopg2
import pytest

import psd2lib
import units

USER = "psd2dev"
CHECKOUT_FOLDER = os.path.join(psd2lib.TOP, "var", "prod-deviced")


def unit_user():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell",
                        "/usr/sbin/nologin", "--user-group", USER],
                       check=True)
        return pwd.getpwnam(USER)


def can_enter(user, path):
    """The unit's user (no supplementary groups) can reach path."""
    return subprocess.run(["setpriv", "--reuid", str(user.pw_uid),
                           "--regid", str(user.pw_gid), "--clear-groups",
                           "test", "-x", path], cwd="/").returncode == 0


def unit_folder(user, wanted):
    """The folder of the unit's files: wanted (var/prod-deviced of the
    checkout), or, when the unit's user cannot enter it (a clone in a
    private home or under a 0700 parent), a folder under /var/tmp that
    wanted points to, as tests/pgcluster.sh does for the postgres user.
    Emptied."""
    os.makedirs(os.path.dirname(wanted), exist_ok=True)
    subprocess.run(["rm", "-rf", wanted], check=True)
    if can_enter(user, os.path.dirname(wanted)):
        os.makedirs(wanted)
        return wanted
    alt = "/var/tmp/psd2gate-prod-deviced-%s" % uuid.uuid5(
        uuid.NAMESPACE_URL, wanted).hex[:12]
    subprocess.run(["rm", "-rf", alt], check=True)
    os.makedirs(alt)
    os.chmod(alt, 0o755)
    os.symlink(alt, wanted)
    return alt


def install(folder, user):
    """What the unit runs and reads, installed into folder as an
    operator installs it (programs in a bin folder, the manufacturer's
    keys beside the configuration): the unit then needs nothing of the
    checkout, wherever the checkout lives."""
    bindir = os.path.join(folder, "bin")
    keys = os.path.join(folder, "keys")
    os.makedirs(bindir)
    os.makedirs(keys)
    for prog in ("psd2-deviced", "psd2-emuhost"):
        shutil.copy2(os.path.join(psd2lib.bin_dir(), prog), bindir)
    for key in ("manufacturer-test-ca.pem", "manufacturer-test-key.pem"):
        shutil.copy(os.path.join(psd2lib.TOP, "device", "testkeys", key),
                    keys)
    # The emulator's signing key is read by psd2-emuhost, as the unit's
    # user; nobody else needs it.
    key = os.path.join(keys, "manufacturer-test-key.pem")
    os.chown(key, user.pw_uid, user.pw_gid)
    os.chmod(key, 0o600)
    os.chmod(os.path.join(keys, "manufacturer-test-ca.pem"), 0o644)
    for path in (bindir, keys, folder):
        assert can_enter(user, path), path
    return bindir, keys


def service(path):
    """{key: last value} of the [Service] section of a generated unit."""
    out = {}
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]":
                k, v = line.split("=", 1)
                out[k] = v
    return out


def proc_status(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f
                    if ":\t" in line)


def deviced_pid(parent):
    """The psd2-deviced process below parent (psd2-emuhost's child)."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and argv0.endswith(b"psd2-deviced"):
            return int(p)
    return None


@pytest.fixture(params=["checkout", "private"])
def started(request, service_setup, dbinfo):
    """The unit started from this checkout, and from one the unit's user
    cannot enter (its var/ below a 0700 folder, as in a clone in root's
    home)."""
    user = unit_user()
    private = None
    wanted = CHECKOUT_FOLDER
    if request.param == "private":
        private = tempfile.mkdtemp(prefix="psd2-private-")
        wanted = os.path.join(private, "checkout", "var", "prod-deviced")
    folder = unit_folder(user, wanted)
    bindir, keys = install(folder, user)
    etc = os.path.join(folder, "etc")
    state = os.path.join(folder, "emu")
    os.makedirs(etc)
    os.makedirs(state)
    os.chown(state, user.pw_uid, user.pw_gid)
    # The unit's configuration file, as the operator writes it: the port
    # in the file (the unit passes no environment), the daemon's role.
    conf = os.path.join(etc, "psd2-deviced.conf")
    with open(conf, "w") as f:
        f.write("psd2_db\thost=127.0.0.1 port=%s dbname=psd2gate "
                "user=psd2_daemon sslmode=disable gssencmode=disable\n"
                "psd2_device_vidpid\t1209:0001\n"
                "psd2_device_manufacturer_ca\t%s\n"
                "psd2_device_host\tunit-test\n"
                "psd2_device_lease_seconds\t30\n" % (
                    os.environ["PGPORT"],
                    os.path.join(keys, "manufacturer-test-ca.pem")))
    os.chmod(conf, 0o644)
    # The operator's psd2ctl (enrol checks the attestation against the
    # manufacturer CA too), as the owner role.
    with open(conf) as f, open(os.path.join(folder, "ctl.conf"), "w") as g:
        g.write(f.read().replace("user=psd2_daemon", "user=psd2gate"))
    unit = [p for p in units.generate(folder, bindir, etc)
            if p.endswith("psd2-deviced.service")][0]
    s = service(unit)
    exec_start = s["ExecStart"].split()
    assert exec_start[0] == os.path.join(bindir, "psd2-deviced")
    assert exec_start[-1] == conf
    assert s["CapabilityBoundingSet"] == "" and s["NoNewPrivileges"] == "yes"
    grp = s["Group"]
    serial = "UNIT%s" % uuid.uuid4().hex[:8].upper()
    sock = os.path.join(state, "emu.sock")
    env = psd2lib.umockdev_env({"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    env.pop("G_DEBUG", None)
    cmd = ["setpriv", "--reuid", s["User"], "--regid", grp,
           "--clear-groups", "--bounding-set", "-all", "--inh-caps", "-all",
           "--no-new-privs", "--",
           "sh", "-c", 'umask %s; exec "$@"' % s["UMask"], "sh",
           os.path.join(bindir, "psd2-emuhost"), "--state", state,
           "--socket", sock, "--manufacturer-key",
           os.path.join(keys, "manufacturer-test-key.pem"), serial,
           "--"] + exec_start
    log_path = os.path.join(folder, "deviced.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, cwd="/", env=env, stdout=log,
                            stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    inst = type("Unit", (), {})()
    inst.proc, inst.serial, inst.sock, inst.user = proc, serial, sock, user
    inst.log_path, inst.conf = log_path, conf
    inst.ctl_conf = os.path.join(folder, "ctl.conf")

    def text():
        with open(log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    inst.text = text
    yield inst
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    log.close()
    if private is not None:
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)


def emu(inst, *args):
    p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2-emu")] +
                       list(args), env=dict(os.environ,
                                            PSD2_EMU_SOCKET=inst.sock),
                       capture_output=True, text=True, timeout=20)
    return p


def wait(fn, timeout, what):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.time() < deadline, "timed out waiting for %s" % what
        time.sleep(0.1)


def test_deviced_as_the_unit_starts_it(started, dbinfo):
    u = started
    wait(lambda: "database connected" in u.text(), 20,
         "the daemon's database connection:\n" + u.text())
    wait(lambda: "device %s recorded" % u.serial in u.text(), 20,
         "the emulated device recorded:\n" + u.text())

    pid = deviced_pid(u.proc.pid)
    assert pid is not None, u.text()
    st = proc_status(pid)
    uid, gid = str(u.user.pw_uid), str(u.user.pw_gid)
    assert st["Uid"].split() == [uid] * 4, st["Uid"]
    assert st["Gid"].split() == [gid] * 4, st["Gid"]
    assert st["Groups"].strip() == "", st["Groups"]
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(st[cap], 16) == 0, (cap, st[cap])
    assert st["NoNewPrivs"] == "1"
    assert st["Umask"] == "0077"
    with open("/proc/%d/environ" % pid, "rb") as f:
        names = {e.split(b"=", 1)[0] for e in f.read().split(b"\0") if e}
    assert not any(n.startswith(b"PG") for n in names), names

    conn = psycopg2.connect(dbinfo)
    conn.autocommit = True
    cur = conn.cursor()
    # Connected as the daemon's own role.
    cur.execute("SELECT count(*) FROM pg_stat_activity WHERE "
                "usename = 'psd2_daemon' AND datname = 'psd2gate'")
    assert cur.fetchone()[0] >= 1
    cur.execute("SELECT status FROM device WHERE serial = %s", (u.serial,))
    assert cur.fetchone() == ("not_enrolled",)

    # Enrolled and assigned by the operator; a challenge is answered.
    psu = psd2lib.make_psu(1)
    psd2lib.psd2ctl("device", "enrol", u.serial, conf=u.ctl_conf)
    psd2lib.psd2ctl("device", "break-glass-assign", u.serial, psu.username,
                    "--reason", "test setup", conf=u.ctl_conf)
    cur.execute("SELECT id FROM psu WHERE username = %s", (psu.username,))
    psu_id = cur.fetchone()[0]
    cur.execute(
        "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
        "amount_minor, currency, payee_name, payee_iban, deadline) "
        "VALUES (%s, %s, %s, 7654, 'EUR', 'Unit Creditor', "
        "'DE89370400440532013000', now() + interval '60 seconds') "
        "RETURNING id::text", (u.serial, psu_id, os.urandom(32)))
    cid = cur.fetchone()[0]
    wait(lambda: "76.54" in emu(u, "show", u.serial).stdout, 20,
         "the challenge on the display")
    assert emu(u, "pin", u.serial, "1234").returncode == 0
    assert emu(u, "press", u.serial).returncode == 0

    def done():
        cur.execute("SELECT status, outcome FROM device_challenge "
                    "WHERE id = %s", (cid,))
        return cur.fetchone() == ("done", "approved")
    wait(done, 20, "the approved outcome:\n" + u.text())
    conn.close()

    # SIGTERM to the daemon, as systemd's KillSignal: a clean stop.
    os.kill(pid, signal.SIGTERM)
    wait(lambda: "stopped" in u.text(), 15, "the daemon's stop")
    u.proc.wait(15)
    assert "Sanitizer" not in u.text()
