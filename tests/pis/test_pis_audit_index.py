"""A confirmation's audit row stays out of the action index (migration 110):
payment.sca rows are most of the log under load, and
each index entry is work inside commits that the decision's NOTIFY
serialises. The filters still work and stay indexed: psd2ctl audit list
--action payment.sca finds the row newest first on the primary key, any
other action on the partial index."""

from conftest import sql, sql1, wait_shown, wait_status
from psd2lib import psd2ctl


def plan(db, action):
    rows = sql(db, """EXPLAIN SELECT a.id FROM audit_log a
        WHERE a.action = %s ORDER BY a.id DESC LIMIT 50""", action)
    return "\n".join(r[0] for r in rows)


def test_confirmation_row_not_in_action_index(api, db, emulator, payer):
    r = api.initiate(payer)
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "ACSC", timeout=10)[0] == "ACSC"

    # The index leaves payment.sca rows out.
    assert sql1(db, "SELECT pg_get_indexdef('audit_log_action'::regclass)"
                ).endswith("WHERE (action <> 'payment.sca'::text)")
    row_id = sql1(db, """SELECT id FROM audit_log WHERE action =
        'payment.sca' AND detail->>'payment' = %s""", pid)
    sql(db, "SET enable_seqscan = off")
    try:
        assert "audit_log_action" in plan(db, "staff.login")
        assert "audit_log_action" not in plan(db, "payment.sca")
    finally:
        sql(db, "RESET enable_seqscan")

    # psd2ctl's action filter still finds the confirmation's row.
    out = psd2ctl("audit", "list", "--action", "payment.sca",
                  "--limit", "1000").stdout
    assert any(line.split("\t")[0] == str(row_id)
               for line in out.splitlines()), out
