"""The audit chain's writers and sealer on a freshly migrated database:
writers supply only actor, action and detail (the id and the time are the
database's), the service's sealer finds rows whatever their ids, and
psd2ctl audit verify reports a row whose time goes backwards."""

import os

import psycopg2
import pytest

import psd2lib
from test_migrate import conf_for, fresh

WRITERS = ("psd2_service", "psd2_operator")


def connect(db, user):
    c = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                         user=user, dbname=db)
    c.autocommit = True
    return c


def ctl(db, *args):
    return psd2lib.psd2ctl(*args, conf=conf_for(db), check=False)


def row(cur, actor, at=None, row_id=None):
    cols, vals = ["actor", "action"], [actor, "test.row"]
    if at is not None:
        cols.append("at")
        vals.append(at)
    if row_id is not None:
        cols.append("id")
        vals.append(row_id)
    cur.execute("INSERT INTO audit_log (%s) VALUES (%s) RETURNING id" % (
        ", ".join(cols), ", ".join(["%s"] * len(vals))), vals)
    return cur.fetchone()[0]


def sealed(cur, ids):
    cur.execute("SELECT count(*) FROM audit_chain WHERE id = ANY(%s)",
                (list(ids),))
    return cur.fetchone()[0]


@pytest.mark.parametrize("role", WRITERS)
def test_writers_cannot_choose_the_id_or_the_time(new_db, role):
    db = fresh(new_db)
    c = connect(db, role)
    cur = c.cursor()
    with pytest.raises(psycopg2.errors.InsufficientPrivilege):
        row(cur, "test:backdate", at="2020-01-01T00:00:00Z")
    with pytest.raises(psycopg2.errors.InsufficientPrivilege):
        row(cur, "test:id", row_id=30000)
    with pytest.raises(psycopg2.errors.InsufficientPrivilege):
        cur.execute("SELECT setval('audit_log_id_seq', 30000)")
    # what they witness, they write; the time is the insert's
    cur.execute("BEGIN")
    cur.execute("SELECT pg_sleep(0.3)")
    rid = row(cur, "test:honest")
    cur.execute("SELECT at >= now() + interval '0.25 s' FROM audit_log "
                "WHERE id = %s", (rid,))
    assert cur.fetchone()[0], "at is the transaction's start, not the insert"
    cur.execute("COMMIT")
    c.close()


def test_a_row_with_a_chosen_id_does_not_stop_the_sealer(new_db):
    """A row with id 30000 (only the owner can still write one) is sealed
    by the service's sealer, and so is every genuine row after it."""
    db = fresh(new_db)
    owner = connect(db, "psd2gate").cursor()
    svc = connect(db, "psd2_service").cursor()
    first = [row(svc, "test:genuine") for _ in range(3)]
    forged = row(owner, "test:forged", row_id=30000)
    svc.execute("SELECT sealed FROM audit_seal(10000)")
    assert svc.fetchone()[0] == 4
    later = [row(svc, "test:genuine") for _ in range(3)]
    svc.execute("SELECT sealed FROM audit_seal(10000)")
    assert svc.fetchone()[0] == 3
    assert sealed(svc, first + later + [forged]) == 7
    p = ctl(db, "audit", "verify")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "chain intact: 7 sealed rows" in p.stdout


def test_a_backdated_row_is_reported(new_db):
    db = fresh(new_db)
    owner = connect(db, "psd2gate").cursor()
    svc = connect(db, "psd2_service").cursor()
    for _ in range(2):
        row(svc, "test:genuine")
    owner.execute("INSERT INTO audit_log (actor, action, at) VALUES "
                  "('test:forged', 'test.row', now() - interval '1 hour') "
                  "RETURNING id")
    forged = owner.fetchone()[0]
    row(svc, "test:genuine")
    assert ctl(db, "audit", "seal").returncode == 0
    p = ctl(db, "audit", "verify")
    assert p.returncode == 1, p.stdout
    assert "BAD row id %d (seq 3): time goes backwards" % forged \
        in p.stdout, p.stdout
    assert "chain intact" not in p.stdout


def test_a_late_commit_is_not_backdating(new_db):
    """A row whose transaction commits after a later row was sealed lies
    a little before it in time: verify notes it and passes."""
    db = fresh(new_db)
    slow = connect(db, "psd2_service")
    slow.autocommit = False
    scur = slow.cursor()
    early = row(scur, "test:slow")
    svc = connect(db, "psd2_service").cursor()
    quick = row(svc, "test:quick")
    svc.execute("SELECT sealed FROM audit_seal(10000)")
    assert svc.fetchone()[0] == 1
    slow.commit()
    svc.execute("SELECT sealed FROM audit_seal(10000)")
    assert svc.fetchone()[0] == 1
    svc.execute("SELECT id FROM audit_chain ORDER BY seq")
    assert [r[0] for r in svc.fetchall()] == [quick, early]
    p = ctl(db, "audit", "verify")
    assert p.returncode == 0, p.stdout
    assert "1 rows stamped up to" in p.stdout
    slow.close()
