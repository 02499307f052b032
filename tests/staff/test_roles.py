"""Database roles (migration 083): the service's role
may only INSERT and SELECT the audit log and has no DDL; the daemon's
role writes only the columns of device and device_challenge it needs;
psd2ctl's operator role works for everyday commands but cannot migrate.
The staff suite's psd2gate itself connects as psd2_service."""

import getpass
import os
import re
import secrets

import psycopg2
import pytest

import psd2lib
from staff_lib import audit_max_id, http_login


class connect:
    """An autocommit connection as role (each refusal its own statement)."""

    def __init__(self, role):
        self.c = psycopg2.connect(host="127.0.0.1",
                                  port=os.environ["PGPORT"], user=role,
                                  dbname="psd2gate")
        self.c.autocommit = True

    def __enter__(self):
        return self.c

    def __exit__(self, *exc):
        self.c.close()


def refused(cur, sql, params=()):
    with pytest.raises(psycopg2.errors.InsufficientPrivilege):
        cur.execute(sql, params)


def test_the_service_runs_as_psd2_service(operator, db):
    http_login(operator)
    cur = db.cursor()
    cur.execute("SELECT count(*) FROM pg_stat_activity WHERE "
                "usename = 'psd2_service' AND datname = 'psd2gate'")
    assert cur.fetchone()[0] > 0


def test_service_role_appends_to_the_audit_log_only():
    with connect("psd2_service") as c:
        cur = c.cursor()
        cur.execute("INSERT INTO audit_log (actor, action) VALUES "
                    "('test:role', 'test.role') RETURNING id")
        rid = cur.fetchone()[0]
        refused(cur, "UPDATE audit_log SET action = 'x' WHERE id = %s",
                (rid,))
        refused(cur, "DELETE FROM audit_log WHERE id = %s", (rid,))
        refused(cur, "TRUNCATE audit_log")
        # the id and the time are the database's (migration 120)
        refused(cur, "INSERT INTO audit_log (at, actor, action) VALUES "
                "(now() - interval '1 day', 'test:role', 'test.role')")
        refused(cur, "INSERT INTO audit_log (id, actor, action) VALUES "
                "(30000, 'test:role', 'test.role')")
        refused(cur, "CREATE TABLE role_test (x int)")
        refused(cur, "INSERT INTO schema_migrations (name, sha256) VALUES "
                "('999_x.sql', 'x')")
        # sealing goes through audit_seal (SECURITY DEFINER)
        cur.execute("SELECT sealed >= 0 FROM audit_seal(1000)")
        assert cur.fetchone()[0] is True
        cur.execute("SELECT seq FROM audit_chain WHERE id = %s", (rid,))
        assert cur.fetchone() is not None
        # the links: read, never written, by the service's role
        refused(cur, "INSERT INTO audit_chain (seq, id, prev_hash, "
                "row_hash) VALUES (999999999, %s, sha256(''), sha256(''))",
                (rid,))


def test_daemon_role_writes_only_through_its_functions(db):
    cur = db.cursor()
    cur.execute("SELECT serial FROM device LIMIT 1")
    row = cur.fetchone()
    if row is None:
        cur.execute("INSERT INTO device (serial, model, firmware, public_key, "
                    "attestation, attestation_ok, host) VALUES ('ROLE0001', "
                    "'M', '1', decode(repeat('04', 65), 'hex'), '\\x00', "
                    "true, 'h') RETURNING serial")
        row = cur.fetchone()
    serial = row[0]
    with connect("psd2_daemon") as c:
        dc = c.cursor()
        # What it sees it records through deviced_record()
        # (src/db/functions/50_devices.sql), never straight into a table.
        dc.execute("SELECT status FROM deviced_record('ROLEDAEMON', 'M', "
                   "'1', decode(repeat('04', 65), 'hex'), '\\x00', true, "
                   "'h')")
        assert dc.fetchone() in (None, ("not_enrolled",))
        for col, val in (("last_seen", "now()"), ("status", "'active'"),
                         ("psu_id", "NULL"), ("last_counter", "0"),
                         ("public_key", "public_key")):
            refused(dc, "UPDATE device SET %s = %s WHERE serial = %%s" %
                    (col, val), (serial,))
        for col in ("amount_minor", "payee_iban", "psu_id", "nonce",
                    "deadline", "device_serial", "status", "finished_at"):
            refused(dc, "UPDATE device_challenge SET %s = %s WHERE false" %
                    (col, col))
        refused(dc, "INSERT INTO device_challenge (device_serial, psu_id, "
                "nonce, amount_minor, currency, payee_name, payee_iban, "
                "deadline) VALUES ('x', 1, '\\x00', 1, 'EUR', 'p', 'DE00', "
                "now())")
        refused(dc, "SELECT password_hash FROM psu LIMIT 1")
        refused(dc, "SELECT 1 FROM staff LIMIT 1")
        refused(dc, "SELECT 1 FROM token LIMIT 1")
        refused(dc, "INSERT INTO audit_log (actor, action) VALUES "
                "('daemon', 'x')")
        refused(dc, "DELETE FROM device_challenge WHERE false")


def roles_conf(name, ctl_user, migrate_user):
    """conf/test.conf with psd2_ctl_db and psd2_migrate_db naming the
    given roles (psd2_db stays the service's)."""
    path = psd2lib.derived_conf("conf/test.conf", psd2lib.MAIN_PORT, name)
    lines = open(path).read().splitlines()
    users = {"psd2_ctl_db": ctl_user, "psd2_migrate_db": migrate_user}
    for i, ln in enumerate(lines):
        words = ln.split()
        if words[:1] and words[0] in users:
            lines[i] = re.sub(r"user=\S+", "user=" + users[words[0]], ln)
    open(path, "w").write("\n".join(lines) + "\n")
    return path


def test_test_conf_names_each_role():
    """The shared configuration: the service, psd2ctl and migrate each
    connect as their own role."""
    text = open(os.path.join(psd2lib.TOP, "conf", "test.conf")).read()
    roles = {}
    for ln in text.splitlines():
        words = ln.split()
        if words[:1] and words[0] in ("psd2_db", "psd2_ctl_db",
                                      "psd2_migrate_db"):
            roles[words[0]] = re.search(r"user=(\S+)", ln).group(1)
    assert roles == {"psd2_db": "psd2_service",
                     "psd2_ctl_db": "psd2_operator",
                     "psd2_migrate_db": "psd2gate"}


def test_operator_role_runs_psd2ctl_but_not_migrate():
    conf = roles_conf("psd2ctl-operator", "psd2_operator", "psd2_operator")
    for args in (("tpp", "list"), ("device", "list"), ("audit", "seal"),
                 ("audit", "list", "--limit", "1"), ("purge",)):
        p = psd2lib.psd2ctl(*args, conf=conf, check=False)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    p = psd2lib.psd2ctl("staff", "add", psd2lib.unique("st"), conf=conf,
                        check=False)
    assert p.returncode == 0, p.stderr
    p = psd2lib.psd2ctl("migrate", conf=conf, check=False)
    assert p.returncode != 0
    assert "permission denied" in p.stderr or "must be owner" in p.stderr


def test_operator_role_has_no_ddl():
    with connect("psd2_operator") as c:
        cur = c.cursor()
        refused(cur, "CREATE TABLE role_test_op (x int)")
        refused(cur, "ALTER TABLE psu ADD COLUMN role_test int")
        refused(cur, "DROP TABLE device_challenge")
        refused(cur, "TRUNCATE audit_log")
        refused(cur, "UPDATE audit_log SET action = 'x' WHERE false")
        refused(cur, "DELETE FROM audit_log WHERE false")
        refused(cur, "CREATE FUNCTION role_test_fn() RETURNS int "
                "LANGUAGE sql AS 'SELECT 1'")


def test_service_role_cannot_alter_tables():
    with connect("psd2_service") as c:
        cur = c.cursor()
        refused(cur, "ALTER TABLE payment ADD COLUMN role_test int")
        refused(cur, "ALTER TABLE audit_log DISABLE TRIGGER ALL")
        refused(cur, "DROP TABLE token")
        refused(cur, "CREATE FUNCTION role_test_fn() RETURNS int "
                "LANGUAGE sql AS 'SELECT 1'")


def test_daemon_role_cannot_set_a_payment_status():
    with connect("psd2_daemon") as c:
        cur = c.cursor()
        refused(cur, "UPDATE payment SET transaction_status = 'ACSC' "
                "WHERE false")
        refused(cur, "UPDATE payment_authorisation SET sca_status = "
                "'finalised' WHERE false")
        refused(cur, "SELECT 1 FROM payment LIMIT 1")


def test_psd2ctl_connects_as_operator_and_migrates_as_owner():
    """One file for all three: psd2_db the service's role, psd2_ctl_db the
    operator's, psd2_migrate_db the owner's."""
    path = roles_conf("psd2ctl-roles", "psd2_operator", "psd2gate")
    p = psd2lib.psd2ctl("migrate", conf=path, check=False)
    assert p.returncode == 0, p.stderr
    p = psd2lib.psd2ctl("tpp", "list", conf=path, check=False)
    assert p.returncode == 0, p.stderr
    # each setting is the one used: a role that does not exist fails
    bad = roles_conf("psd2ctl-badctl", "no_such_role", "psd2gate")
    p = psd2lib.psd2ctl("tpp", "list", conf=bad, check=False)
    assert p.returncode != 0 and "no_such_role" in p.stderr
    assert psd2lib.psd2ctl("migrate", conf=bad, check=False).returncode == 0
    bad = roles_conf("psd2ctl-badmig", "psd2_operator", "no_such_role")
    p = psd2lib.psd2ctl("migrate", conf=bad, check=False)
    assert p.returncode != 0 and "no_such_role" in p.stderr
    assert psd2lib.psd2ctl("tpp", "list", conf=bad,
                           check=False).returncode == 0


def test_no_role_changes_an_assignment_outside_its_functions(db):
    """Only staff_device_action (four eyes) and device_assign_break_glass
    (psd2ctl's role only) write which PSU holds a device."""
    cur = db.cursor()
    serial = "ROLEA" + os.urandom(4).hex().upper()
    cur.execute("INSERT INTO device (serial, model, firmware, public_key, "
                "attestation, attestation_ok, host, status, enrolled_at) "
                "VALUES (%s, 'M', '1', decode(repeat('04', 65), 'hex'), "
                "'\\x00', true, 'h', 'active', now())", (serial,))
    cur.execute("SELECT id FROM psu LIMIT 1")
    psu_id = cur.fetchone()[0]
    for role in ("psd2_service", "psd2_operator"):
        with connect(role) as c:
            rc = c.cursor()
            refused(rc, "UPDATE device SET psu_id = %s WHERE serial = %s",
                    (psu_id, serial))
            refused(rc, "INSERT INTO device (serial, model, firmware, "
                    "public_key, attestation, attestation_ok, host, status, "
                    "psu_id) VALUES ('X' || %s, 'M', '1', decode(repeat("
                    "'04', 65), 'hex'), '\\x00', true, 'h', 'active', %s)",
                    (serial, psu_id))
            refused(rc, "DELETE FROM device WHERE serial = %s", (serial,))
            refused(rc, "INSERT INTO device_assignment (device_serial, "
                    "psu_id, requested_by) VALUES (%s, %s, 'x')",
                    (serial, psu_id))
            refused(rc, "UPDATE device_assignment SET status = 'approved' "
                    "WHERE false")
            # the other columns stay writable (enrolment, counters)
            rc.execute("UPDATE device SET last_counter = last_counter "
                       "WHERE serial = %s", (serial,))
    with connect("psd2_service") as c:
        refused(c.cursor(), "SELECT device_assign_break_glass('x', %s, "
                "'anna', 'r')", (serial,))
    cur.execute("SELECT psu_id FROM device WHERE serial = %s", (serial,))
    assert cur.fetchone() == (None,)


def test_psd2ctl_registry_writes_are_audit_rows(db):
    """psd2ctl's people and accounts are written by functions that write
    the audit row in the same transaction (74_operator.sql)."""
    actor = "operator:" + getpass.getuser()
    user = psd2lib.unique("reg")
    iban = "DE%02d%018d" % (secrets.randbelow(100),
                             secrets.randbelow(10 ** 18))
    since = audit_max_id(db)
    psd2lib.psd2ctl("psu", "add", user, "--password", "registry-pass-1")
    p = psd2lib.psd2ctl("psu", "add", user, check=False)
    assert p.returncode == 1 and "exists" in p.stderr
    assert "unlocked: yes" in psd2lib.psd2ctl("psu", "unlock", user).stdout
    out = psd2lib.psd2ctl("account", "add", user, iban, "EUR",
                          "Giro").stdout
    rid = out.split("resourceId: ")[1].strip()
    p = psd2lib.psd2ctl("account", "add", "no-such-" + user, iban, "EUR",
                        "Giro", check=False)
    assert p.returncode == 1 and "no PSU" in p.stderr
    cur = db.cursor()
    cur.execute("SELECT actor, action, detail FROM audit_log WHERE id > %s "
                "AND (detail->>'username' = %s OR detail->>'psu' = %s) "
                "ORDER BY id", (since, user, user))
    assert cur.fetchall() == [
        (actor, "psu.add", {"username": user}),
        (actor, "psu.unlock", {"username": user}),
        (actor, "account.add", {"resource_id": rid, "psu": user})]

