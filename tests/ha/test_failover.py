"""PostgreSQL failover (issue 11): a primary with a synchronous
streaming standby, the service and psd2-deviced connected with a libpq
multi-host string (target_session_attrs=read-write). Under refresh
grants and AIS calls the primary is stopped hard and the standby
promoted: the service answers again within 10 s without a restart, every
token a client saw issued is on the new primary, a signed request seen
before the failover cannot be replayed after it (replay marks are in a
logged table), and the daemon reconnects by itself."""

import os
import time

import psycopg2
import pytest
import requests

from ha_lib import (Daemon, Instance, PgPair, TokenLoad, error_answer,
                    ha_port, make_grants, on_port, samples, value, wait_for)
from psd2lib import ACCOUNT_LIST, make_client, make_psu, psd2ctl

BACK_WITHIN = 10.0


@pytest.fixture(scope="module")
def pair(service_setup):
    pg = PgPair("pg-failover")
    pg.run("primary")
    pg.run("standby")
    with on_port(pg.pport):
        for step in (("migrate",), ("sandbox-seed",)):
            psd2ctl(*step)
    yield pg
    pg.run("stop")


def challenge(d, dsn, serial, psu_id, amount):
    """A challenge the daemon must claim, show and (PIN, button) answer."""
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(
        "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
        "amount_minor, currency, payee_name, payee_iban, deadline) "
        "VALUES (%s, %s, %s, %s, 'EUR', 'Failover Payee', "
        "'DE89370400440532013000', now() + interval '60 seconds') "
        "RETURNING id", (serial, psu_id, os.urandom(32), amount))
    cid = cur.fetchone()[0]
    wait_for(lambda: str(amount // 100) in d.emu("show", serial).stdout, 20,
             "the challenge on the display")
    assert d.emu("pin", serial, "1234").returncode == 0
    assert d.emu("press", serial).returncode == 0

    def done():
        cur.execute("SELECT status, outcome FROM device_challenge "
                    "WHERE id = %s", (cid,))
        return cur.fetchone() == ("done", "approved")
    wait_for(done, 20, "the approved outcome")
    conn.close()


def test_failover_under_load(pair, signer):
    with on_port(pair.pport):
        client = make_client()
        psu = make_psu(1)
    inst = Instance("failover", ha_port(13), ha_port(14),
                    db=pair.multihost())
    serial = "FOV%05d" % (abs(hash(psu.username)) % 10 ** 5)
    d = Daemon("devd-failover", [serial], db=pair.multihost("psd2_daemon"))
    inst.start()
    d.start()
    try:
        with on_port(pair.pport):
            grants = make_grants(inst.url, client, 3)
            wait_for(lambda: "device %s recorded" % serial in d.log_text(),
                     20, "the device recorded")
            psd2ctl("device", "enrol", serial)
            psd2ctl("device", "assign", serial, psu.username)
        with psycopg2.connect(pair.dsn(pair.pport)) as c, c.cursor() as cur:
            cur.execute("SELECT id FROM psu WHERE username = %s",
                        (psu.username,))
            psu_id = cur.fetchone()[0]
            # Not replicated, emptied by crash recovery: only what may
            # be forgotten (rate counters, by design).
            cur.execute("SELECT relname FROM pg_class WHERE "
                        "relpersistence = 'u' AND relkind IN ('r', 'p')")
            assert {r[0] for r in cur.fetchall()} == {"rate_counter"}
        challenge(d, pair.dsn(pair.pport), serial, psu_id, 1700)

        # A signed call, kept to be replayed after the failover.
        tok = grants[0]["access_token"]
        h = {"Content-Type": "application/json",
             "PSU-IP-Address": "192.0.2.10", "Authorization": "Bearer " + tok}
        captured = signer.for_token(tok).headers("GET", inst.url +
                                                 ACCOUNT_LIST, b"", h)
        r = requests.get(inst.url + ACCOUNT_LIST, headers=captured,
                         timeout=10)
        assert r.status_code == 200, r.text

        load = TokenLoad(lambda: inst.url, client, grants[1:], signer)
        with load:
            time.sleep(3)
            t_kill = time.monotonic()
            pair.run("kill")
            pair.run("promote")
            t_promoted = time.monotonic()
            time.sleep(max(0.0, t_kill + BACK_WITHIN + 3 - time.monotonic()))
            t_end = time.monotonic()

        hung = [x[:5] + (repr(x[5]),) for x in load.results
                if x[5] is not None]
        assert not hung, hung[:3]
        before = load.between(0, t_kill)
        assert len(before) >= 20 and all(x[3] == 200 for x in before)
        served = [x for x in load.results if x[1] >= t_kill and
                  x[3] == 200]
        assert served, "nothing served after the failover"
        first = min(x[2] for x in served)
        assert first - t_kill <= BACK_WITHIN, (first - t_kill,
                                               t_promoted - t_kill)
        window = load.between(t_kill, t_kill + BACK_WITHIN)
        bad = [x[:5] for x in window if x[3] != 200 and
               not error_answer(x[3], x[4])]
        assert not bad, bad[:3]
        after = load.between(t_kill + BACK_WITHIN, t_end)
        assert after and all(x[3] == 200 for x in after), \
            [x[:5] for x in after if x[3] != 200][:3]

        new_primary = pair.dsn(pair.sport)
        missing = load.missing_tokens(new_primary)
        assert not missing, "%d of %d issued tokens lost" % (
            len(missing), 2 * len(load.issued))
        assert len(load.issued) >= 20

        # The captured request again: its replay mark survived.
        r = requests.get(inst.url + ACCOUNT_LIST, headers=captured,
                         timeout=10)
        assert r.status_code != 200 and "request" in r.text.lower(), \
            (r.status_code, r.text)

        # The daemon found the new primary by itself.
        wait_for(lambda: value(samples(d.metrics()),
                               "psd2_deviced_database_connects_total",
                               host="devd-failover") >= 2, 20,
                 "the daemon's reconnect")
        challenge(d, new_primary, serial, psu_id, 2300)
    finally:
        d.stop()
        inst.stop()
    assert not inst.problems, inst.problems
