"""Backups: a base backup plus the WAL archive restore the
database to a point in time. Every token a client saw issued before that
point is there; none issued after it is. The same for payments: decoupled
payments confirmed on the emulated authenticator (psd2-deviced) and seen
ACSC by the client before the target are there, ACSC; one initiated
after it is not."""

import datetime
import hashlib
import time
import uuid

import psycopg2
import pytest

from ha_lib import (Daemon, Instance, PgPair, TokenLoad, ha_port, make_grants,
                    on_port)
from ha_pay import initiate, make_payer, missing_payments, pay
from psd2lib import make_client, psd2ctl


@pytest.fixture(scope="module")
def primary(service_setup):
    pg = PgPair("pg-backup")
    pg.run("primary")
    with on_port(pg.pport):
        for step in (("migrate",), ("sandbox-seed",)):
            psd2ctl(*step)
    yield pg
    pg.run("stop")


def hashes(tokens):
    return {hashlib.sha256(t[k].encode()).digest() for t in tokens
            for k in ("access_token", "refresh_token")}


def present(dsn, want):
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute("SELECT token_hash FROM token WHERE token_hash = ANY(%s)",
                    ([psycopg2.Binary(h) for h in want],))
        return {bytes(r[0]) for r in cur.fetchall()}


def test_point_in_time_restore(primary, signer):
    pg = primary
    with on_port(pg.pport):
        client = make_client()
    inst = Instance("backup", ha_port(15), ha_port(16),
                    db=pg.dsn(pg.pport))
    serial = "BKP%s" % uuid.uuid4().hex[:8].upper()
    d = Daemon("devd-backup", [serial],
               db=pg.dsn(pg.pport, "psd2_daemon"))
    inst.start()
    d.start()
    try:
        with on_port(pg.pport):
            grants = make_grants(inst.url, client, 2)
            payer = make_payer(inst.url, d, serial, pg.dsn(pg.pport))
        pg.run("basebackup", "base")

        with TokenLoad(lambda: inst.url, client, grants, signer) as load1:
            paid = {pay(signer, d, payer, inst.url, amount="%d.00" % a):
                    "ACSC" for a in (61, 62, 63)}
            time.sleep(1)
        time.sleep(1)
        target = datetime.datetime.now(datetime.timezone.utc)
        time.sleep(1)
        with TokenLoad(lambda: inst.url, client, load1.chains,
                       signer) as load2:
            r = initiate(signer, inst.url, payer, "64.00")
            assert r.status_code == 201, r.text
            late_pid = r.json()["paymentId"]
            time.sleep(2)
        before = hashes(load1.issued)
        after = hashes(load2.issued) - hashes(load1.chains)
        assert len(before) >= 40 and len(after) >= 20, (len(before),
                                                        len(after))
        assert all(x[3] == 200 for x in load1.results + load2.results)
        # Everything up to now into the archive.
        with psycopg2.connect(pg.dsn(pg.pport), user="postgres") as c, \
                c.cursor() as cur:
            cur.execute("SELECT pg_walfile_name(pg_switch_wal())")
            last = cur.fetchone()[0]
            deadline = time.time() + 30
            while True:
                c.rollback()
                cur.execute("SELECT last_archived_wal FROM "
                            "pg_stat_archiver")
                got = cur.fetchone()[0]
                if got is not None and got >= last:
                    break
                assert time.time() < deadline, (got, last)
                time.sleep(0.2)
    finally:
        d.stop()
        inst.stop()
    assert not inst.problems, inst.problems

    port = ha_port(17)
    pg.run("restore", "base", port, target.isoformat())
    restored = pg.dsn(port)
    missing = before - present(restored, before)
    assert not missing, "%d of %d tokens issued before the target lost" % (
        len(missing), len(before))
    assert not present(restored, after), "tokens after the target restored"
    lost = missing_payments(restored, paid)
    assert not lost, "payments before the target lost: %r" % lost
    assert missing_payments(restored, {late_pid: "RCVD"}) == {
        late_pid: ("RCVD", None)}, "a payment after the target restored"
