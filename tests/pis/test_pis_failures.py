"""Every way a decoupled payment can fail ends in one final state, decided
by the service: declined and timed out (signed by the device), the
deadline with the daemon dead, unplugging, staff blocking the device,
a locked PIN, another key, an approval without the PIN's UV flag, a
repeated counter, a forged outcome row, the payment row changed after the
challenge, and an outcome written after the deadline."""

import os
import signal
import time

from conftest import (SCA_SECONDS, balance, payment_row, sql, sql1,
                      wait_for, wait_shown, wait_status)
from psd2lib import db_connect, psd2ctl


def start(api, payer, **kw):
    r = api.initiate(payer, **kw)
    assert r.status_code == 201, r.text
    return r.json()["paymentId"]


def challenge(db, pid):
    return sql1(db, """SELECT c.id, c.status, c.counter, c.finished_at,
        c.deadline FROM device_challenge c JOIN payment_authorisation a
        ON a.challenge_id = c.id WHERE a.payment_id = %s""", pid)


def last_counter(db, serial):
    return sql1(db, "SELECT last_counter FROM device WHERE serial = %s",
                serial)


def confirm(emulator, serial):
    wait_shown(emulator, serial)
    emulator.cmd("pin", serial, "1234")
    emulator.cmd("press", serial)


def display_cleared(emulator, serial):
    return wait_for(lambda: "PAY" not in emulator.show(serial), timeout=10,
                    what="the display of %s cleared" % serial)


def test_timeout_signed_by_the_device(api, db, emulator, payer):
    t0 = time.time()
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    st = wait_status(db, pid, "RJCT")
    assert st == ("RJCT", "timed out", "failed")
    # On time: by the deadline, give or take the sweep period.
    assert time.time() - t0 < SCA_SECONDS + 3
    assert balance(db, payer.iban) == 100000


def test_deadline_with_the_daemon_dead(api, db, emulator, payer):
    open(emulator.hold, "w").close()
    old = emulator.daemon_pid()
    try:
        os.kill(old, signal.SIGKILL)
        t0 = time.time()
        pid = start(api, payer)
        st = wait_status(db, pid, "RJCT")
        elapsed = time.time() - t0
        assert st == ("RJCT", "timed out", "failed")
        assert SCA_SECONDS - 1 <= elapsed < SCA_SECONDS + 3, elapsed
        assert challenge(db, pid)[1] == "cancelled"
        assert sql1(db, "SELECT reject_detail FROM payment WHERE id = %s",
                    pid) == "deadline passed"
    finally:
        os.unlink(emulator.hold)
    wait_for(lambda: emulator.daemon_pid() != old, what="daemon restarted")


def test_unplug_mid_challenge(api, db, emulator, payer):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("unplug", payer.serial)
    try:
        st = wait_status(db, pid, "RJCT", timeout=10)
        assert st == ("RJCT", "device unplugged", "failed")
    finally:
        emulator.cmd("plug", payer.serial)
    # Final: the challenge is never sent again, not even after plugging in.
    time.sleep(1.5)
    assert "PAY" not in emulator.show(payer.serial)
    assert payment_row(db, pid)[0] == "RJCT"


def test_blocked_by_staff_mid_challenge(api, db, emulator, payer):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    t0 = time.time()
    sql(db, "UPDATE device SET status = 'blocked', blocked_at = now() "
        "WHERE serial = %s", payer.serial)
    st = wait_status(db, pid, "RJCT", timeout=5)
    assert time.time() - t0 < 2, "not at once"
    assert st == ("RJCT", "device blocked", "failed")
    assert challenge(db, pid)[1] == "cancelled"
    display_cleared(emulator, payer.serial)
    # A press now changes nothing.
    emulator.cmd("press", payer.serial, check=False)
    time.sleep(0.5)
    assert payment_row(db, pid)[0] == "RJCT"
    assert last_counter(db, payer.serial) == 0


def test_pin_locked(api, db, emulator, payer):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    for _ in range(5):
        emulator.cmd("pin", payer.serial, "9999", check=False)
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "PIN locked", "failed")


def test_wrong_key(api, db, emulator, payer):
    emulator.cmd("fault", payer.serial, "wrongkey")
    pid = start(api, payer)
    confirm(emulator, payer.serial)
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "bad signature", "failed")
    assert last_counter(db, payer.serial) == 0
    assert balance(db, payer.iban) == 100000


def test_approval_without_user_verification(api, db, emulator, payer):
    # A device that approves on the button alone (possession only): the
    # signature lacks UV, so the service refuses it.
    emulator.cmd("fault", payer.serial, "nouv")
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    emulator.cmd("press", payer.serial)
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "bad signature", "failed")
    assert challenge(db, pid)[1] == "done"
    assert balance(db, payer.iban) == 100000


def test_repeated_counter(api, db, emulator, payer):
    first = start(api, payer)
    confirm(emulator, payer.serial)
    wait_status(db, first, "ACSC", timeout=10)
    assert last_counter(db, payer.serial) == 1
    emulator.cmd("fault", payer.serial, "repeatcounter")
    pid = start(api, payer)
    confirm(emulator, payer.serial)
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "counter not increasing", "failed")
    assert challenge(db, pid)[2] == 1
    assert last_counter(db, payer.serial) == 1
    assert balance(db, payer.iban) == 100000 - 1234


def test_forged_outcome_row(api, db, emulator, payer):
    # A valid approval of another payment of the same device...
    first = start(api, payer)
    confirm(emulator, payer.serial)
    wait_status(db, first, "ACSC", timeout=10)
    cid1 = challenge(db, first)[0]
    sig = sql1(db, "SELECT signature FROM device_challenge WHERE id = %s",
               cid1)
    # ...written straight into the table for a new one, with a counter
    # that would increase: it signs another challenge id and nonce.
    emulator.cmd("fault", payer.serial, "noanswer")
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    cid = challenge(db, pid)[0]
    sql(db, """UPDATE device_challenge SET status = 'done',
        outcome = 'approved', counter = 7, signature = %s,
        lease_owner = NULL, lease_expires = NULL WHERE id = %s""",
        sig, cid)
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "bad signature", "failed")
    assert last_counter(db, payer.serial) == 1
    # And a made-up signature on a third one.
    pid3 = start(api, payer)
    cid3 = challenge(db, pid3)[0]
    sql(db, """UPDATE device_challenge SET status = 'done',
        outcome = 'approved', counter = 9,
        signature = decode('3006020101020101', 'hex'),
        lease_owner = NULL, lease_expires = NULL WHERE id = %s""", cid3)
    st = wait_status(db, pid3, "RJCT", timeout=10)
    assert st == ("RJCT", "bad signature", "failed")
    assert balance(db, payer.iban) == 100000 - 1234
    assert last_counter(db, payer.serial) == 1


def test_payment_changed_after_the_challenge(api, db, emulator, payer):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    sql(db, "UPDATE payment SET amount_minor = 99999 WHERE id = %s", pid)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "payment changed", "failed")
    assert balance(db, payer.iban) == 100000
    assert last_counter(db, payer.serial) == 0


def test_outcome_after_the_deadline(api, db, emulator, payer, dbinfo):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    # The deadline passes while the device still waits (its timer was set
    # from the old one); a lock on the payment keeps the sweep from
    # cancelling the challenge first, so the device's genuine approval is
    # written after the deadline.
    lock = db_connect(dbinfo)
    lock.autocommit = False
    try:
        cur = lock.cursor()
        cur.execute("SELECT 1 FROM payment WHERE id = %s FOR UPDATE", (pid,))
        sql(db, "UPDATE device_challenge SET deadline = now() + "
            "interval '1 second' WHERE id = %s", challenge(db, pid)[0])
        time.sleep(1.5)
        emulator.cmd("press", payer.serial)
        wait_for(lambda: challenge(db, pid)[1] == "done", timeout=10,
                 what="the late outcome written")
        c = challenge(db, pid)
        assert c[3] > c[4]
    finally:
        lock.rollback()
        lock.close()
    st = wait_status(db, pid, "RJCT", timeout=10)
    assert st == ("RJCT", "timed out", "failed")
    assert sql1(db, "SELECT reject_detail FROM payment WHERE id = %s",
                pid) == "outcome written after the deadline"
    assert balance(db, payer.iban) == 100000


def test_blocked_with_psd2ctl_mid_challenge(api, db, emulator, payer):
    pid = start(api, payer)
    wait_shown(emulator, payer.serial)
    psd2ctl("device", "block", payer.serial)
    st = wait_status(db, pid, "RJCT", timeout=5)
    assert st == ("RJCT", "device blocked", "failed")
    display_cleared(emulator, payer.serial)
