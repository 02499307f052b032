"""`pg_ctl restart -m fast` under load (issue 11): psd2gate and
psd2-deviced recover by themselves, errors only while PostgreSQL is
down, and every token that a client saw issued is still there."""

import os
import subprocess
import time

import psycopg2
import pytest

from ha_lib import (Daemon, Instance, TokenLoad, error_answer, ha_port,
                    make_grants, samples, value, wait_for)
from psd2lib import TOP, make_client, make_psu, psd2ctl

RECOVERY = 5.0


def cluster(cmd):
    env = dict(os.environ, PSD2_PGPORT=os.environ["PGPORT"])
    subprocess.run(["sh", os.path.join(TOP, "tests", "pgcluster.sh"), cmd],
                   check=True, cwd=TOP, env=env, stdout=subprocess.DEVNULL,
                   timeout=120)


@pytest.fixture(scope="module")
def inst(service_setup):
    srv = Instance("pgrestart", ha_port(11), ha_port(12))
    srv.start()
    yield srv
    srv.stop()
    assert not srv.problems, srv.problems


def postmaster_start(dbinfo):
    with psycopg2.connect(dbinfo) as c, c.cursor() as cur:
        cur.execute("SELECT pg_postmaster_start_time()")
        return cur.fetchone()[0]


def approve_challenge(d, serial, psu_id, dbinfo):
    conn = psycopg2.connect(dbinfo)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(
        "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
        "amount_minor, currency, payee_name, payee_iban, deadline) "
        "VALUES (%s, %s, %s, 4200, 'EUR', 'Restart Payee', "
        "'DE89370400440532013000', now() + interval '60 seconds') "
        "RETURNING id", (serial, psu_id, os.urandom(32)))
    cid = cur.fetchone()[0]
    wait_for(lambda: "42" in d.emu("show", serial).stdout, 20,
             "the challenge on the display")
    assert d.emu("pin", serial, "1234").returncode == 0
    assert d.emu("press", serial).returncode == 0

    def done():
        cur.execute("SELECT status, outcome FROM device_challenge "
                    "WHERE id = %s", (cid,))
        return cur.fetchone() == ("done", "approved")
    wait_for(done, 20, "the approved outcome")
    conn.close()


def test_restart_under_load(inst, signer, dbinfo):
    client = make_client()
    grants = make_grants(inst.url, client, 3)
    psu = make_psu(1)
    serial = "RST%05d" % (abs(hash(psu.username)) % 10 ** 5)
    d = Daemon("devd-restart", [serial]).start()
    try:
        wait_for(lambda: "device %s recorded" % serial in d.log_text(), 20,
                 "the device recorded")
        psd2ctl("device", "enrol", serial)
        psd2ctl("device", "assign", serial, psu.username)
        with psycopg2.connect(dbinfo) as c, c.cursor() as cur:
            cur.execute("SELECT id FROM psu WHERE username = %s",
                        (psu.username,))
            psu_id = cur.fetchone()[0]
        approve_challenge(d, serial, psu_id, dbinfo)
        started = postmaster_start(dbinfo)

        load = TokenLoad(lambda: inst.url, client, grants, signer)
        with load:
            time.sleep(3)
            t0 = time.monotonic()
            cluster("restart")
            t1 = time.monotonic()
            time.sleep(RECOVERY + 4)
            t_end = time.monotonic()
        assert postmaster_start(dbinfo) > started

        hung = [x for x in load.results if x[5] is not None]
        assert not hung, hung[:3]
        before = load.between(0, t0)
        assert len(before) >= 20 and all(x[3] == 200 for x in before), \
            [x[:5] for x in before if x[3] != 200][:3]
        during = load.between(t0, t1 + RECOVERY)
        bad = [x[:5] for x in during if x[3] != 200 and
               not error_answer(x[3], x[4])]
        assert not bad, bad[:3]
        after = load.between(t1 + RECOVERY, t_end)
        assert {x[0] for x in after} == {"refresh", "ais"}, after[:3]
        assert all(x[3] == 200 for x in after), \
            [x[:5] for x in after if x[3] != 200][:3]
        # Some chain went on through the restart.
        assert any(x[0] == "refresh" and x[3] == 200 for x in after)

        missing = load.missing_tokens(dbinfo)
        assert not missing, "%d of %d issued tokens lost" % (
            len(missing), 2 * len(load.issued))
        assert len(load.issued) >= 50

        # The daemon reconnected by itself and still answers challenges.
        wait_for(lambda: value(samples(d.metrics()),
                               "psd2_deviced_database_connects_total",
                               host="devd-restart") >= 2, 15,
                 "the daemon's reconnect")
        approve_challenge(d, serial, psu_id, dbinfo)
        s = samples(d.metrics())
        assert value(s, "psd2_deviced_database_connected",
                     host="devd-restart") == 1
    finally:
        d.stop()
