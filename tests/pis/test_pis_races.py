"""One device, several payments; the daemon dying mid-challenge; two
service instances deciding the same outcomes; the sandbox PSU anna with
EMU0001 and the account information API afterwards."""

import json
import os
import signal
import threading
import time
from decimal import Decimal

import psycopg2
import pytest

from conftest import (API, LEASE_SECONDS, SCA_SECONDS, balance,
                      get_token, instance_conf, payment_body, payment_row,
                      sql, sql1, wait_for, wait_shown, wait_status)
import psd2_fixtures
import psd2lib
from psd2lib import sandbox_client, sandbox_psu


def start(api, payer, **kw):
    r = api.initiate(payer, **kw)
    assert r.status_code == 201, r.text
    return r.json()["paymentId"]


def shown_amount(emulator, serial, text):
    return wait_for(lambda: text in emulator.show(serial), timeout=SCA_SECONDS,
                    what="%s on %s" % (text, serial))


def test_two_payments_queue_on_one_device(api, db, emulator, payer):
    first = start(api, payer, body=payment_body(payer, amount="1.11"))
    second = start(api, payer, body=payment_body(payer, amount="2.22"))
    shown_amount(emulator, payer.serial, "1.11 EUR")
    # One payment at a time: the second waits, in order.
    assert "2.22" not in emulator.show(payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    wait_status(db, first, "ACSC", timeout=10)
    shown_amount(emulator, payer.serial, "2.22 EUR")
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    wait_status(db, second, "ACSC", timeout=10)
    assert balance(db, payer.iban) == 100000 - 111 - 222
    assert sql1(db, "SELECT last_counter FROM device WHERE serial = %s",
                payer.serial) == 2


def test_waiting_counts_against_the_deadline(api, db, emulator, payer):
    first = start(api, payer, body=payment_body(payer, amount="1.11"))
    time.sleep(SCA_SECONDS / 2 + 1)
    second = start(api, payer, body=payment_body(payer, amount="2.22"))
    shown_amount(emulator, payer.serial, "1.11 EUR")
    # Nobody answers: the first times out at its deadline, the second
    # then has less than half its time left, and times out at its own.
    assert wait_status(db, first, "RJCT")[1] == "timed out"
    t_first = time.time()
    assert wait_status(db, second, "RJCT")[1] == "timed out"
    assert time.time() - t_first < SCA_SECONDS / 2 + 2


def test_daemon_killed_mid_challenge_and_restarted(api, db, emulator, payer):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    open(emulator.hold, "w").close()
    old = emulator.daemon_pid()
    try:
        os.kill(old, signal.SIGKILL)
        time.sleep(1)
    finally:
        os.unlink(emulator.hold)
    wait_for(lambda: emulator.daemon_pid() != old, what="daemon restarted")
    # The new daemon retakes the claim once the dead one's lease ran out
    # (same challenge, same content: the device keeps display and PIN).
    wait_for(lambda: sql1(db, """SELECT c.attempts FROM device_challenge c
        JOIN payment_authorisation a ON a.challenge_id = c.id
        WHERE a.payment_id = %s""", pid) == 2,
             timeout=LEASE_SECONDS + 10, what="the claim retaken")
    assert payment_row(db, pid)[0] == "RCVD"
    assert "PAY" in emulator.show(payer.serial)
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert balance(db, payer.iban) == 100000 - 1234


@pytest.fixture
def second_instance(service_setup):
    port = psd2lib.RATELIMIT_PORT
    srv = psd2_fixtures._start(instance_conf("psd2gate-pis-2", port), port,
                               "psd2gate-pis-2", None)
    yield srv
    psd2_fixtures._stop(srv)


def test_two_instances_decide_once(api, db, emulator, payer_factory,
                                   second_instance, server):
    """Both instances hear every notification and sweep; each outcome is
    decided and booked exactly once."""
    payers = [payer_factory() for _ in range(3)]
    before = {p.iban: balance(db, p.iban) for p in payers}
    pids = [start(api, p) for p in payers]
    for p in payers:
        wait_shown(emulator, p.serial)
        emulator.cmd("pin", p.serial, "1234")
    # Press all at once: both deciders race for the same outcomes.
    threads = [threading.Thread(target=emulator.cmd,
                                args=("press", p.serial)) for p in payers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for pid in pids:
        wait_status(db, pid, "ACSC", timeout=10)
    time.sleep(1.5)     # both sweeps run again; nothing may change
    for p, pid in zip(payers, pids):
        assert balance(db, p.iban) == before[p.iban] - 1234
        assert sql1(db, """SELECT count(*) FROM account_transaction t
            JOIN account a ON a.id = t.account_id WHERE a.iban = %s""",
                    p.iban) == 1
        assert sql1(db, "SELECT last_counter FROM device WHERE serial = "
                    "%s", p.serial) == 1
        assert payment_row(db, pid) == ("ACSC", None, "finalised")
    logs = server.log_text() + second_instance.log_text()
    for pid in pids:
        assert logs.count("pis: payment %s ACTC" % pid) == 1, pid
        assert logs.count("pis: payment %s ACSC" % pid) == 1, pid


def test_pis_decide_is_exactly_once_under_concurrency(db, dbinfo, api,
                                                       emulator, payer):
    """pis_decide() called by two sessions at the same moment for the same
    verified outcome: one ACTC, the other 'decided', the counter raised
    once. (The outcome is held back from the service's decider by a
    lock on the payment row until both calls wait on it.)"""
    pid = start(api, payer)
    lock = psycopg2.connect(dbinfo)
    lock.autocommit = False
    cur = lock.cursor()
    cur.execute("SELECT 1 FROM payment WHERE id = %s FOR UPDATE", (pid,))
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    cid = wait_for(lambda: sql(db, """SELECT c.id, c.counter, p.xmin::text,
        c.xmin::text FROM device_challenge c JOIN payment_authorisation a
        ON a.challenge_id = c.id JOIN payment p ON p.id = a.payment_id
        WHERE a.payment_id = %s AND c.status = 'done'""", pid),
                   what="outcome written")[0]
    results = []

    def decide():
        c = psycopg2.connect(dbinfo)
        c.autocommit = True
        k = c.cursor()
        k.execute("SELECT pis_decide(%s, %s, %s, %s, NULL, NULL, %s)",
                  (pid, cid[0], cid[2], cid[3], cid[1]))
        results.append(k.fetchone()[0])
        c.close()
    threads = [threading.Thread(target=decide) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    lock.rollback()
    lock.close()
    for t in threads:
        t.join()
    # The service's own decider may win too: one ACTC in all.
    assert results.count("ACTC") <= 1 and all(
        r in ("ACTC", "decided") for r in results), results
    wait_status(db, pid, "ACSC", timeout=10)
    assert sql1(db, "SELECT last_counter FROM device WHERE serial = %s",
                payer.serial) == 1
    assert balance(db, payer.iban) == 100000 - 1234


def test_sandbox_anna_on_emu0001_and_ais_afterwards(api, db, emulator):
    anna = sandbox_psu("anna")
    client = sandbox_client()
    giro = "DE89370400440532013000"
    token = get_token(client, anna, "ACCOUNT_INFORMATION PAYMENT_INITIATION",
                      [giro])

    class P:
        pass
    payer = P()
    payer.token, payer.iban = token, giro
    signer = api.signer.for_token(token)

    def ais_balance():
        r = signer.request("GET", psd2lib.MAIN_URL + API +
                           "/account/account-balance",
                           body=b'{"referenceId": "DE-anna-giro"}',
                           headers={"Authorization": "Bearer " + token,
                                    "Content-Type": "application/json",
                                    "PSU-IP-Address": "192.0.2.1"},
                           timeout=30)
        assert r.status_code == 200, r.text
        return json.loads(r.text, parse_float=Decimal)[
            "balances"][0]["balanceAmount"]["amount"]

    before = ais_balance()
    body = payment_body(payer, amount="3.21", name="Jürgen Weiß",
                        creditor="NL91ABNA0417164300",
                        remittance="Sandbox test")
    pid = start(api, payer, body=body)
    shown = wait_shown(emulator, "EMU0001")
    assert "3.21 EUR" in shown and "J\u00fcrgen Wei\u00df" in shown
    emulator.cmd("pin", "EMU0001", "1234")
    emulator.cmd("press", "EMU0001")
    wait_status(db, pid, "ACSC", timeout=10)
    assert ais_balance() == before - Decimal("3.21")
    r = signer.request("GET", psd2lib.MAIN_URL + API +
                       "/account/DE-anna-giro/transactions",
                       headers={"Authorization": "Bearer " + token,
                                "PSU-IP-Address": "192.0.2.1"}, timeout=30)
    assert r.status_code == 200, r.text
    tx = json.loads(r.text, parse_float=Decimal)["transactions"][0]
    assert tx["explanation"] == \
        "J\u00fcrgen Wei\u00df NL91ABNA0417164300: Sandbox test"
    assert tx["balanceAmount"]["amount"] == Decimal("-3.21")
