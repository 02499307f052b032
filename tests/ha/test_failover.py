"""PostgreSQL failover: a primary with a synchronous
streaming standby, the service and psd2-deviced connected with a libpq
multi-host string (target_session_attrs=read-write). Under refresh
grants and AIS calls the primary is stopped hard and the standby
promoted: the service answers again within 10 s without a restart, every
token a client saw issued is on the new primary, a signed request seen
before the failover cannot be replayed after it (replay marks are in a
logged table), and the daemon reconnects by itself.

Payment confirmations flow at the same time (tests/ha/ha_pay.py): decoupled
payments initiated through the service, confirmed on the emulated
authenticator by psd2-deviced (multi-host too), their status polled. Every
payment whose 201 or decided status a client saw is on the new primary
with that status, and a payment after the failover is confirmed on the
device and decided."""

import time

import psycopg2
import pytest
import requests

from ha_lib import (Daemon, Instance, PgPair, TokenLoad, error_answer,
                    ha_port, make_grants, on_port, samples, value, wait_for)
from ha_pay import PaymentLoad, make_payer, missing_payments, pay
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
            payer = make_payer(inst.url, d, serial, pair.dsn(pair.pport),
                               psu=psu)
        with psycopg2.connect(pair.dsn(pair.pport)) as c, c.cursor() as cur:
            # Not replicated, emptied by crash recovery: only what may
            # be forgotten (rate counters, by design).
            cur.execute("SELECT relname FROM pg_class WHERE "
                        "relpersistence = 'u' AND relkind IN ('r', 'p')")
            assert {r[0] for r in cur.fetchall()} == {"rate_counter"}
        pay(signer, d, payer, inst.url, amount="17.00")

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
        pays = PaymentLoad(lambda: inst.url, signer, d, payer)
        with load, pays:
            wait_for(lambda: len(pays.decided_between(0, time.monotonic()))
                     >= 2, 30, "payments decided before the failover")
            time.sleep(1)
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

        # Payments: none stuck, every outcome a client saw is there.
        assert not pays.undecided(), pays.undecided()
        before_pay = pays.decided_between(0, t_kill)
        assert len(before_pay) >= 2 and set(before_pay.values()) == \
            {"ACSC"}, before_pay
        lost = missing_payments(new_primary, pays.seen)
        assert not lost, lost
        pay_bad = [x for x in pays.log if x[1] == "initiate" and
                   x[3] not in (201, 500, 503)]
        assert not pay_bad, pay_bad[:3]

        # The daemon found the new primary by itself, and a payment after
        # the failover is confirmed on the device.
        wait_for(lambda: value(samples(d.metrics()),
                               "psd2_deviced_database_connects_total",
                               host="devd-failover") >= 2, 20,
                 "the daemon's reconnect")
        pid = pay(signer, d, payer, inst.url, amount="23.00")
        assert missing_payments(new_primary, {pid: "ACSC"}) == {}
    finally:
        d.stop()
        inst.stop()
    assert not inst.problems, inst.problems
