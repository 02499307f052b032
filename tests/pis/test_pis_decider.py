"""The decider's own connection and sweeps: a lost LISTEN connection is
reconnected and what happened meanwhile is decided; an ACTC payment whose
booking never started (a crash, a lost notification) is booked by the
sweep; a device whose counter is exhausted gets no challenge."""

import time

from psd2lib import as_superuser, db_connect

from conftest import (REDIRECT, balance, payment_row, sql, sql1, wait_for,
                      wait_shown, wait_status)


def decider_backends(db):
    return sql(db, "SELECT pid FROM pg_stat_activity WHERE "
               "application_name = 'psd2gate-pis'")


def terminate(dbinfo, pid):
    """As the superuser: the decider connects as psd2_service."""
    c = db_connect(as_superuser(dbinfo))
    try:
        sql(c, "SELECT pg_terminate_backend(%s)", pid)
    finally:
        c.close()


def test_lost_connection_is_reconnected_and_swept(api, db, dbinfo, emulator,
                                                   payer, server):
    r = api.initiate(payer)
    pid = r.json()["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    old = decider_backends(db)
    assert len(old) == 1, old
    since = server.log_size()
    terminate(dbinfo, old[0][0])
    # The outcome is written while the decider's connection is down or
    # coming back: its notification may be lost; the sweep after the
    # reconnect decides it.
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    new = wait_for(lambda: decider_backends(db), what="decider reconnected")
    assert new != old
    log = server.log_text(since)
    assert "pis: decider connection lost" in log
    assert "pis: decider connection up" in log


def test_actc_left_unbooked_is_booked_by_the_sweep(api, db, payer_factory):
    payer = payer_factory(device=False)
    r = api.initiate(payer, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT})
    pid = r.json()["paymentId"]
    # As if SCA had passed and the service had stopped before booking:
    # ACTC committed, its notification never heard.
    sql(db, "ALTER TABLE payment DISABLE TRIGGER payment_notify")
    try:
        sql(db, "UPDATE payment SET transaction_status = 'ACTC' "
            "WHERE id = %s", pid)
    finally:
        sql(db, "ALTER TABLE payment ENABLE TRIGGER payment_notify")
    t0 = time.time()
    assert wait_status(db, pid, "ACSC", timeout=5)[0] == "ACSC"
    assert time.time() - t0 < 2
    assert balance(db, payer.iban) == 100000 - 1234


def test_booking_is_one_transaction_and_once(api, db, payer_factory):
    """pis_book() twice on the same payment books it once. ACTC and both
    calls in one transaction: the service's sweep cannot see the payment
    before the test's first call (it would otherwise race it)."""
    payer = payer_factory(device=False)
    r = api.initiate(payer, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT})
    pid = r.json()["paymentId"]
    sql(db, "BEGIN")
    try:
        sql(db, "UPDATE payment SET transaction_status = 'ACTC' "
            "WHERE id = %s", pid)
        first = sql1(db, "SELECT pis_book(%s)", pid)
        second = sql1(db, "SELECT pis_book(%s)", pid)
    finally:
        sql(db, "COMMIT")
    assert (first, second) == ("ACSC", "none")
    assert balance(db, payer.iban) == 100000 - 1234
    assert payment_row(db, pid)[0] == "ACSC"


def test_exhausted_counter_gets_no_challenge(api, db, emulator, payer):
    sql(db, "UPDATE device SET last_counter = 4294967295 WHERE serial = %s",
        payer.serial)
    r = api.initiate(payer)
    assert r.status_code == 400
    assert r.json()["tppMessages"][0]["path"] == "TPP-Redirect-URI"
    r = api.initiate(payer, headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201
    assert r.json()["scaStatus"] == "received"
    assert sql1(db, "SELECT count(*) FROM device_challenge WHERE "
                "device_serial = %s", payer.serial) == 0


def test_daemons_are_woken_after_the_commit(api, db, dbinfo, payer):
    """device_challenge_new arrives for the initiation's device, sent after
    the payment committed (pis_wake): the notify lock is never held
    through the initiation's durable commit."""
    import select
    from psd2lib import db_connect
    listen = db_connect(dbinfo)
    try:
        listen.cursor().execute("LISTEN device_challenge_new")
        r = api.initiate(payer)
        assert r.status_code == 201, r.text
        pid = r.json()["paymentId"]
        got = []
        end = time.time() + 5
        while time.time() < end and payer.serial not in got:
            if select.select([listen], [], [], 0.5)[0]:
                listen.poll()
                got += [n.payload for n in listen.notifies]
                listen.notifies.clear()
        assert payer.serial in got
        assert payment_row(db, pid)[0] == "RCVD"
        # The trigger itself stays silent for an insert made with
        # psd2.defer_notify on (as pis_initiate makes its challenge).
        w = db_connect(dbinfo)
        w.autocommit = False
        k = w.cursor()
        k.execute("SELECT set_config('psd2.defer_notify', 'on', true)")
        k.execute("""INSERT INTO device_challenge (device_serial, psu_id,
            nonce, amount_minor, currency, payee_name, payee_iban, deadline)
            SELECT serial, psu_id, decode(repeat('00', 32), 'hex'), 1,
            'EUR', 'x', 'DE89370400440532013000', now() + interval '1 s'
            FROM device WHERE serial = %s RETURNING id""", (payer.serial,))
        extra = k.fetchone()[0]
        w.commit()
        w.close()
        time.sleep(0.5)
        listen.poll()
        assert [n.payload for n in listen.notifies] == []
        sql(db, "UPDATE device_challenge SET status = 'cancelled' "
            "WHERE id = %s AND status IN ('pending', 'claimed')", extra)
    finally:
        listen.close()
