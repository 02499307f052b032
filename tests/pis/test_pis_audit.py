"""Every SCA outcome of a decoupled payment is an audit row,
written by the decider's SQL in the transaction that decides the payment:
a confirmation on the device, a decline, a timeout and a failure (the
device unplugged). Exactly one row per payment, actor the PSU, inserted
unsealed; the service's sealer chains them and psd2ctl audit verify
passes afterwards."""

from conftest import payment_row, sql, wait_for, wait_shown, wait_status
from psd2lib import psd2ctl


def start(api, payer):
    r = api.initiate(payer)
    assert r.status_code == 201, r.text
    return r.json()["paymentId"]


def sca_rows(db, pid):
    return sql(db, """SELECT actor, detail, EXISTS (SELECT 1 FROM
        audit_chain c WHERE c.id = a.id) FROM audit_log a
        WHERE action = 'payment.sca' AND detail->>'payment' = %s
        ORDER BY id""", pid)


def one_row(db, payer, pid, outcome, reason):
    rows = sca_rows(db, pid)
    assert len(rows) == 1, rows
    actor, detail, _ = rows[0]
    assert actor == "psu:" + payer.psu.username
    want = {"payment": pid, "product": "sepa-credit-transfers",
            "method": "device", "device": payer.serial,
            "outcome": outcome}
    if reason is not None:
        want["reason"] = reason
    got = {k: v for k, v in detail.items() if k != "detail"}
    assert got == want, detail
    return detail


def test_confirmation_decline_timeout_failure_each_one_row(api, db,
                                                           emulator,
                                                           payer_factory):
    payers = [payer_factory() for _ in range(4)]
    confirmed, declined, timed_out, failed = payers
    ids = {}
    for p in payers:
        ids[p.serial] = start(api, p)
    for p in payers:
        wait_shown(emulator, p.serial)

    emulator.cmd("pin", confirmed.serial, "1234")
    emulator.cmd("press", confirmed.serial)
    emulator.cmd("decline", declined.serial)
    emulator.cmd("unplug", failed.serial)
    try:
        assert wait_status(db, ids[confirmed.serial], "ACSC",
                           timeout=10)[0] == "ACSC"
        assert wait_status(db, ids[declined.serial], "RJCT")[1] == \
            "declined"
        assert wait_status(db, ids[failed.serial], "RJCT")[1] == \
            "device unplugged"
        assert wait_status(db, ids[timed_out.serial], "RJCT")[1] == \
            "timed out"
    finally:
        emulator.cmd("plug", failed.serial)

    one_row(db, confirmed, ids[confirmed.serial], "confirmed", None)
    one_row(db, declined, ids[declined.serial], "declined", "declined")
    one_row(db, timed_out, ids[timed_out.serial], "timed out",
            "timed out")
    d = one_row(db, failed, ids[failed.serial], "failed",
                "device unplugged")
    assert d["detail"]
    # Booking is not an SCA outcome: still one row after ACSC.
    assert payment_row(db, ids[confirmed.serial])[0] == "ACSC"

    # The service's sealer chains them; the chain verifies.
    wait_for(lambda: all(sca_rows(db, i)[0][2] for i in ids.values()),
             timeout=15, what="the SCA rows sealed")
    p = psd2ctl("audit", "verify", check=False)
    assert p.returncode == 0, (p.stdout, p.stderr)
