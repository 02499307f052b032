"""`pg_ctl restart -m fast` under load: psd2gate and
psd2-deviced recover by themselves, errors only while PostgreSQL is
down, and every token that a client saw issued is still there. A refresh
chain of a client with rotation may end on a 500 (the grant broke while
the database went away, and may have spent the token); the chains of a
client without rotation send the same token again and all go on. Payment
confirmations flow too (initiated through the service, confirmed on the
emulated authenticator, status polled): every payment status a client saw
is still there, none is left undecided, and a payment after the restart
is confirmed on the device."""

import os
import subprocess
import time

import psycopg2
import pytest

from ha_pay import PaymentLoad, make_payer, missing_payments, pay

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


def test_restart_under_load(inst, signer, dbinfo):
    client = make_client()
    grants = make_grants(inst.url, client, 3)
    kept = make_client()
    psd2ctl("tpp", "refresh-rotation", kept.client_id, "off")
    kept_grants = make_grants(inst.url, kept, 2)
    psu = make_psu(1)
    serial = "RST%05d" % (abs(hash(psu.username)) % 10 ** 5)
    d = Daemon("devd-restart", [serial]).start()
    try:
        payer = make_payer(inst.url, d, serial, dbinfo, psu=psu)
        pay(signer, d, payer, inst.url, amount="42.00")
        started = postmaster_start(dbinfo)

        load = TokenLoad(lambda: inst.url, client, grants, signer,
                         kept=(kept, kept_grants))
        pays = PaymentLoad(lambda: inst.url, signer, d, payer)
        with load, pays:
            wait_for(lambda: len(pays.decided_between(0, time.monotonic()))
                     >= 2, 30, "payments decided before the restart")
            time.sleep(1)
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
        assert {"refresh-kept", "ais"} <= {x[0] for x in after}, after[:3]
        assert all(x[3] == 200 for x in after), \
            [x[:5] for x in after if x[3] != 200][:3]
        # A chain stops only on a 500 while the database went away (a
        # rotated token the broken grant may have spent); without
        # rotation every chain went on through the restart.
        for i, end in enumerate(load.ended):
            if load.chain_client[i] is kept:
                assert end is None, (i, end)
            else:
                assert end is None or (end[1] == 500 and
                                       t0 <= end[0] <= t1 + RECOVERY), \
                    (i, end)
        assert any(x[0] == "refresh-kept" and x[3] == 200 for x in after)

        missing = load.missing_tokens(dbinfo)
        assert not missing, "%d of %d issued tokens lost" % (
            len(missing), 2 * len(load.issued))
        assert len(load.issued) >= 50

        assert not pays.undecided(), pays.undecided()
        assert len(pays.decided_between(0, t0)) >= 2
        assert set(pays.decided_between(0, t_end).values()) == {"ACSC"}
        lost = missing_payments(dbinfo, pays.seen)
        assert not lost, lost
        pay_bad = [x for x in pays.log if x[1] == "initiate" and
                   x[3] not in (201, 500, 503)]
        assert not pay_bad, pay_bad[:3]
        # Only while the database was down.
        late = [x for x in pays.log if x[1] == "initiate" and
                x[3] != 201 and x[0] > t1 + RECOVERY]
        assert not late, late[:3]

        # The daemon reconnected by itself and a payment after the
        # restart is confirmed on the device.
        wait_for(lambda: value(samples(d.metrics()),
                               "psd2_deviced_database_connects_total",
                               host="devd-restart") >= 2, 15,
                 "the daemon's reconnect")
        pay(signer, d, payer, inst.url, amount="43.00")
        s = samples(d.metrics())
        assert value(s, "psd2_deviced_database_connected",
                     host="devd-restart") == 1
    finally:
        d.stop()


def test_metrics_answer_while_the_database_is_down(inst):
    """The metrics page answers from the shared counters while PostgreSQL
    is stopped: a failed query of its own is not the spec's 503, only the
    device challenges are missing, and the page says so."""
    assert value(samples(inst.scrape()), "psd2_device_challenges_read") == 1
    cluster("stop")
    try:
        s = samples(inst.scrape())
        assert value(s, "psd2_device_challenges_read") == 0
        assert [k for k in s if k[0] == "psd2_device_challenges"] == []
    finally:
        cluster("start")
    wait_for(lambda: value(samples(inst.scrape()),
                           "psd2_device_challenges_read") == 1, 15,
             "the challenges read again")
