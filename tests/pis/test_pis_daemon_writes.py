"""psd2-deviced's side of the database: every write through its functions
(the psd2_daemon role may call them and only read the tables), an end
kept and written again when the database refuses it for a while (a row
lock held while the PSU presses the button), finished_at beyond every
writer's reach, and a TPP's cancel racing the PSU's press, each order
with what the PSU then sees on the device and on the payments page."""

import contextlib
import re
import threading
import time

import psycopg2
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import (SCT, payment_row, sql, sql1, tpp_error, wait_for,
                      wait_shown, wait_status)
from test_pis_payments_page import login

DAEMON_FUNCTIONS = (
    "deviced_record(text, text, text, bytea, bytea, boolean, text)",
    "deviced_claim(text, integer, text, bytea)",
    "deviced_renew(text, integer)",
    "deviced_finish(uuid, text, text, bigint, bytea)",
    "deviced_fail(uuid, text, text, boolean)",
    "deviced_release_all(text, text)",
    "deviced_sweep()",
)


def as_role(dbinfo, role):
    c = psycopg2.connect(re.sub(r"\buser=\S+", "user=" + role, dbinfo))
    c.autocommit = True
    return c


def start(api, payer):
    r = api.initiate(payer)
    assert r.status_code == 201, r.text
    return r.json()["paymentId"]


def challenge(db, pid):
    return sql1(db, """SELECT c.id::text FROM device_challenge c
        JOIN payment_authorisation a ON a.challenge_id = c.id
        WHERE a.payment_id = %s""", pid)


def challenge_row(db, cid):
    return sql1(db, """SELECT status, outcome, attempts FROM device_challenge
        WHERE id = %s""", cid)


@contextlib.contextmanager
def row_held(dbinfo, table, key):
    """Within: a transaction of its own holds the lock of the row of table
    whose id is key, as any other writer of that row would."""
    holder = psycopg2.connect(dbinfo)
    try:
        holder.cursor().execute("SELECT 1 FROM %s WHERE id = %%s "
                                "FOR UPDATE" % table, (key,))
        yield
    finally:
        holder.rollback()
        holder.close()


def waiters(db):
    return sql1(db, "SELECT count(*) FROM pg_locks WHERE NOT granted")


def shown_then_pin(emulator, db, payer, pid):
    wait_shown(emulator, payer.serial)
    cid = challenge(db, pid)
    assert challenge_row(db, cid)[0] == "claimed"
    emulator.cmd("pin", payer.serial, "1234")
    return cid


def test_daemon_role_writes_only_through_its_functions(db):
    # No table may be written by the daemon's role directly, not even one
    # column of one table.
    assert sql(db, """SELECT table_name, privilege_type
        FROM information_schema.table_privileges
        WHERE grantee = 'psd2_daemon' AND privilege_type <> 'SELECT'""") == []
    assert sql(db, """SELECT table_name, column_name, privilege_type
        FROM information_schema.column_privileges
        WHERE grantee = 'psd2_daemon' AND privilege_type <> 'SELECT'""") == []
    assert sorted(r[0] for r in sql(db, """SELECT table_name
        FROM information_schema.table_privileges
        WHERE grantee = 'psd2_daemon'""")) == ["device", "device_challenge"]
    for f in DAEMON_FUNCTIONS:
        assert sql1(db, "SELECT has_function_privilege('psd2_daemon', %s, "
                    "'EXECUTE')", f), f
        assert sql1(db, "SELECT p.prosecdef FROM pg_proc p "
                    "WHERE p.oid = %s::regprocedure", f), f


def test_approval_lands_after_a_row_lock(api, db, dbinfo, emulator, payer):
    pid = start(api, payer)
    cid = shown_then_pin(emulator, db, payer, pid)
    refused = r"challenge %s .*approved not written yet " \
        r"\(SQLSTATE 55P03\)" % cid
    # Another transaction holds the challenge's row while the PSU presses:
    # the daemon's write waits for it (lock_timeout, 2 s) and fails, again.
    # Held until the daemon has failed twice (a fixed hold was too short
    # on a loaded machine, where the first attempt starts late).
    with row_held(dbinfo, "device_challenge", cid):
        emulator.cmd("press", payer.serial)
        deadline = time.monotonic() + 30
        while len(re.findall(refused, emulator.log_text())) < 2 and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        assert challenge_row(db, cid)[0] == "claimed"
    # Each refusal was logged with its SQLSTATE and tried again.
    assert len(re.findall(refused, emulator.log_text())) >= 2
    # Once the lock is gone, the signed approval lands: no second press.
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"
    assert challenge_row(db, cid) == ("done", "approved", 1)
    assert "PAY" not in emulator.show(payer.serial)


def test_daemon_cannot_rewrite_finished_at(api, db, dbinfo, emulator, payer):
    pid = start(api, payer)
    cid = shown_then_pin(emulator, db, payer, pid)
    emulator.cmd("press", payer.serial)
    wait_status(db, pid, "ACSC", timeout=10)
    before = sql1(db, "SELECT finished_at FROM device_challenge "
                  "WHERE id = %s", cid)
    daemon = as_role(dbinfo, "psd2_daemon")
    try:
        with pytest.raises(psycopg2.errors.InsufficientPrivilege):
            daemon.cursor().execute(
                "UPDATE device_challenge SET finished_at = deadline - "
                "interval '10 seconds' WHERE id = %s", (cid,))
        # Its functions refuse an ended challenge.
        cur = daemon.cursor()
        cur.execute("SELECT deviced_finish(%s, 'x', 'approved', 99, "
                    "'\\x30'::bytea)", (cid,))
        assert cur.fetchone()[0] == "ended"
    finally:
        daemon.close()
    # A role that may UPDATE the table (the service's) gets the database's
    # time, whatever it writes and whichever columns it names.
    service = as_role(dbinfo, "psd2_service")
    try:
        service.cursor().execute(
            "UPDATE device_challenge SET finished_at = '2000-01-01' "
            "WHERE id = %s", (cid,))
        service.cursor().execute(
            "UPDATE device_challenge SET last_error = 'x', "
            "finished_at = '2000-01-01' WHERE id = %s", (cid,))
    finally:
        service.close()
    assert sql1(db, "SELECT finished_at FROM device_challenge "
                "WHERE id = %s", cid) == before


def cancel_in_thread(api, payer, pid):
    out = {}

    def run():
        out["r"] = api.call("DELETE", "%s/%s" % (SCT, pid), payer.token)
    t = threading.Thread(target=run)
    t.start()
    return t, out


def test_cancel_racing_a_press(api, db, dbinfo, emulator, payer, server,
                               browser):
    # 1. The press's outcome is written first, the cancel comes before
    # the decision: the PSU answered, so the cancel is refused and the
    # signature decides. (The TPP's cancel waits on the payment's row,
    # held here, so it runs after the daemon's write and before the
    # decider, which queues behind it.)
    first = start(api, payer)
    cid = shown_then_pin(emulator, db, payer, first)
    with row_held(dbinfo, "payment", first):
        t, out = cancel_in_thread(api, payer, first)
        wait_for(lambda: waiters(db) >= 1, what="the cancel waiting")
        emulator.cmd("press", payer.serial)
        wait_for(lambda: challenge_row(db, cid)[0] == "done",
                 what="the approval written")
    t.join(30)
    tpp_error(out["r"], 405, "CANCELLATION_INVALID")
    assert wait_status(db, first, "ACSC", timeout=10)[0] == "ACSC"

    # 2. The cancel takes the challenge first, the press is on its way:
    # the daemon's outcome is refused, the payment stays cancelled, the
    # device shows no payment. (The challenge's row is held here while
    # the cancel waits for it; the press comes after, so the daemon's
    # write queues behind the cancel.)
    second = start(api, payer)
    cid = shown_then_pin(emulator, db, payer, second)
    with row_held(dbinfo, "device_challenge", cid):
        t, out = cancel_in_thread(api, payer, second)
        wait_for(lambda: waiters(db) >= 1, what="the cancel waiting")
        emulator.cmd("press", payer.serial)
        wait_for(lambda: re.search(r"challenge %s .*approved not written "
                                   r"yet" % cid, emulator.log_text()),
                 timeout=15, what="the daemon's write waiting")
    t.join(30)
    assert out["r"].status_code == 204, out["r"].text
    wait_for(lambda: re.search(r"challenge %s .*approved refused, the "
                               r"service had cancelled" % cid,
                               emulator.log_text()), timeout=15,
             what="the daemon's outcome refused")
    assert payment_row(db, second) == ("CANC", None, "failed")
    assert challenge_row(db, cid)[:2] == ("cancelled", None)
    assert "PAY" not in emulator.show(payer.serial)
    assert api.status(payer, second) == "CANC"

    # What the PSU reads on the payments page: the final status of each.
    driver = browser("en-US")
    login(driver, server.url + "/auth/payments", payer.psu)
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.ID, "payment-%s" % second))
    assert driver.find_element(By.ID, "payment-%s" % first) \
        .get_attribute("data-status") == "ACSC"
    assert driver.find_element(By.ID, "payment-%s" % second) \
        .get_attribute("data-status") == "CANC"
