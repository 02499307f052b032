"""Who may execute what: on a freshly migrated database, no function is
executable by PUBLIC, and each role may execute exactly the functions that
src/db/README.md ("Who may execute what") marks for it."""

import os
import re

import psycopg2
import pytest

import psd2lib
from test_migrate import connect, fresh, migrate

README = os.path.join(psd2lib.TOP, "src", "db", "README.md")
ROLES = ("psd2_service", "psd2_operator", "psd2_daemon")


def documented():
    """{signature: set of roles} from the README's table."""
    with open(README) as f:
        text = f.read()
    m = re.search(r"^## Who may execute what\n(.*?)(?=^## |\Z)", text,
                  re.S | re.M)
    assert m, "src/db/README.md has no section 'Who may execute what'"
    lines = [ln for ln in m.group(1).splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    assert head == ["Function"] + list(ROLES), head
    table = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        assert len(cells) == 1 + len(ROLES), ln
        sig = cells[0].strip("`")
        assert sig not in table, "listed twice: " + sig
        assert set(cells[1:]) <= {"x", ""}, ln
        table[sig] = {r for r, c in zip(ROLES, cells[1:]) if c == "x"}
    return table


def actual(db):
    """{signature: set of roles} and the functions PUBLIC may execute."""
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("""
            SELECT p.oid::regprocedure::text,
                   array(SELECT r FROM unnest(%s::name[]) r
                         WHERE has_function_privilege(r, p.oid, 'EXECUTE')),
                   EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl,
                       acldefault('f', p.proowner))) a
                       WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')
            FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace""",
                    (list(ROLES),))
        rows = cur.fetchall()
    c.close()
    return ({sig: set(roles) for sig, roles, _ in rows},
            sorted(sig for sig, _, public in rows if public))


def differences(want, got):
    out = []
    for sig in sorted(set(want) | set(got)):
        if sig not in got:
            out.append("%s: documented, not in the database" % sig)
        elif sig not in want:
            out.append("%s: not documented (executable by %s)" % (
                sig, ", ".join(sorted(got[sig])) or "the owner only"))
        elif want[sig] != got[sig]:
            out.append("%s: documented %s, granted %s" % (
                sig, sorted(want[sig]), sorted(got[sig])))
    return out


def test_each_role_executes_what_the_table_says(new_db):
    db = fresh(new_db)
    got, public = actual(db)
    assert public == [], "executable by PUBLIC: %s" % public
    assert differences(documented(), got) == []


def test_a_new_function_is_nobodys_until_it_is_listed(new_db):
    """A function someone adds later (here: by hand, as the owner, as a
    migration would) is executable by no role, stays so across migrate,
    and shows as undocumented."""
    db = fresh(new_db)
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("CREATE FUNCTION added_later() RETURNS int "
                    "LANGUAGE sql AS 'SELECT 1'")
    c.close()
    for _ in range(2):
        got, public = actual(db)
        assert public == []
        assert got["added_later()"] == set()
        assert differences(documented(), got) == [
            "added_later(): not documented (executable by the owner only)"]
        p = migrate(db)
        assert p.returncode == 0, p.stderr
    assert "added_later() is in no grant" in p.stderr


def test_the_daemon_cannot_purge_or_make_partitions(new_db):
    db = fresh(new_db)
    c = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                         user="psd2_daemon", dbname=db)
    c.autocommit = True
    with c.cursor() as cur:
        for sql in ("SELECT access_log_purge(1)", "SELECT access_log_ensure()",
                    "SELECT * FROM audit_seal(10, NULL)", "SELECT psd2_purge()"):
            with pytest.raises(psycopg2.errors.InsufficientPrivilege):
                cur.execute(sql)
    c.close()
