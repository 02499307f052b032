"""Fraud marks and the EBA fraud statistics (EBA/GL/2018/05) on the
staff pages and in psd2ctl: staff mark, correct and withdraw with a
reason behind CSRF, each act an audit row and a kept history row; a
payment that was not executed cannot be marked; a half-year of payments
generated in SQL (as the tests' owner role) gives the statistics that
this test recomputes from the raw rows, and psd2ctl report fraud --csv
and the staff page's download are the same bytes."""

import csv
import datetime
import io
import os
import subprocess
import uuid
from zoneinfo import ZoneInfo

import pytest

import psd2lib
from ais_shared import sql as q
from psd2lib import Page, make_client, make_psu, psd2ctl, run_code_flow
from staff_lib import (STAFF_URL, audit_max_id, audit_rows, form_post,
                       http_login, sql_payment)

BERLIN = ZoneInfo("Europe/Berlin")
UTC = datetime.timezone.utc
TYPES = ("issued_by_fraudster", "modified_by_fraudster",
         "payer_manipulated")
EEA = set("AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV "
          "MT NL NO PL PT RO SE SI SK".split())


@pytest.fixture(scope="module")
def owner(service_setup):
    """A PSU with an account and a consent, for payments written in SQL."""
    psu = make_psu(1)
    client = make_client()
    run_code_flow(client, psu, accounts=[psu.accounts[0][0]])
    return psu, client


def staff_act(sess, pid, action, reason, ftype=None):
    """The payment page's form, then the confirmation's: the answer."""
    r = sess.get(STAFF_URL + "/staff/fraud/payment", params={"id": pid})
    assert r.status_code == 200, r.text
    fields = {"action": action, "reason": reason}
    if ftype:
        fields["type"] = ftype
    r = form_post(sess, Page(r.text), "fraud-act", fields)
    assert r.status_code == 200, r.text
    page = Page(r.text)
    assert page.by_id.get("confirm-question") is not None, r.text
    return form_post(sess, page, "confirm-form", {})


def test_staff_mark_correct_withdraw(db, dbinfo, operator, owner):
    pid = sql_payment(db, owner, datetime.datetime.now(UTC), 4200)
    sess = http_login(operator)
    actor = "staff:" + operator.username
    since = audit_max_id(db)

    # CSRF: a post without the session's token changes nothing.
    r = sess.post(STAFF_URL + "/staff/fraud/mark", data={
        "payment_id": pid, "action": "mark", "type": TYPES[0],
        "reason": "forged"}, allow_redirects=False)
    assert r.status_code == 403, r.text
    r = sess.post(STAFF_URL + "/staff/fraud/mark", data={
        "payment_id": pid, "action": "mark", "type": TYPES[0],
        "reason": "forged", "csrf": "x" * 40}, allow_redirects=False)
    assert r.status_code == 403, r.text
    assert q(db, "SELECT count(*) FROM fraud_mark WHERE payment_id = %s",
             pid)[0][0] == 0

    # Without a reason: refused at the form, nothing written.
    r = sess.get(STAFF_URL + "/staff/fraud/payment", params={"id": pid})
    r = form_post(sess, Page(r.text), "fraud-act",
                  {"action": "mark", "type": TYPES[0], "reason": ""})
    assert r.status_code == 400, r.text

    r = staff_act(sess, pid, "mark", "PSU called the hotline", TYPES[0])
    assert r.status_code == 200 and "staff_fraud_done_mark" in r.text, \
        r.text
    r = staff_act(sess, pid, "mark", "twice", TYPES[1])
    assert r.status_code == 409, r.text
    r = staff_act(sess, pid, "correct", "the payee was changed", TYPES[1])
    assert r.status_code == 200, r.text
    r = staff_act(sess, pid, "correct", "same again", TYPES[1])
    assert r.status_code == 409 and "staff_fraud_result_same" in r.text
    r = staff_act(sess, pid, "withdraw", "the PSU found the invoice")
    assert r.status_code == 200, r.text
    # Withdrawn: the page offers "mark" only; a withdraw posted anyway
    # is refused.
    r = staff_act(sess, pid, "withdraw", "again")
    assert r.status_code == 409 and \
        "staff_fraud_result_not_marked" in r.text, r.text

    rows = q(db, """SELECT action, fraud_type, reported_by, actor, reason
                    FROM fraud_mark WHERE payment_id = %s ORDER BY id""",
             pid)
    assert rows == [
        ("mark", TYPES[0], "staff", actor, "PSU called the hotline"),
        ("correct", TYPES[1], "staff", actor, "the payee was changed"),
        ("withdraw", None, "staff", actor, "the PSU found the invoice")]
    acts = [(a, d["payment"], d.get("type"), d["reason"])
            for _, a, d in audit_rows(db, actor, since)
            if a.startswith("fraud.")]
    assert acts == [
        ("fraud.mark", pid, TYPES[0], "PSU called the hotline"),
        ("fraud.correct", pid, TYPES[1], "the payee was changed"),
        ("fraud.withdraw", pid, None, "the PSU found the invoice")]

    # The history is kept: neither the service's nor psd2ctl's role may
    # rewrite it.
    for role in ("psd2_service", "psd2_operator"):
        c = psd2lib.db_connect(psd2lib.as_superuser(dbinfo))
        try:
            q(c, "SET ROLE " + role)
            for stmt in ("DELETE FROM fraud_mark WHERE payment_id = %s",
                         "UPDATE fraud_mark SET reason = 'x' "
                         "WHERE payment_id = %s"):
                with pytest.raises(Exception, match="permission denied"):
                    q(c, stmt, pid)
        finally:
            c.close()

    # The page shows the history and the list finds it by its PSU.
    r = sess.get(STAFF_URL + "/staff/fraud/payment", params={"id": pid})
    page = Page(r.text)
    assert len([e for e in page.elements
                if e.get("class") == "fraud-act"]) == 3
    r = sess.get(STAFF_URL + "/staff/fraud",
                 params={"psu": owner[0].username, "type": "withdrawn"})
    assert r.status_code == 200
    assert ('id="fraud-%s"' % pid) in r.text


def test_staff_cannot_mark_unexecuted(db, operator, owner):
    pid = sql_payment(db, owner, datetime.datetime.now(UTC), 999,
                      status="RJCT")
    sess = http_login(operator)
    r = sess.get(STAFF_URL + "/staff/fraud/payment", params={"id": pid})
    page = Page(r.text)
    assert page.by_id.get("fraud-not-executed") is not None
    assert page.form("fraud-act") is None
    # A post made up from another payment's form is refused too.
    other = sql_payment(db, owner, datetime.datetime.now(UTC), 1000)
    r = sess.get(STAFF_URL + "/staff/fraud/payment", params={"id": other})
    form = Page(r.text).form("fraud-act")
    data = dict(form.hidden())
    data.update({"payment_id": pid, "action": "mark", "type": TYPES[2],
                 "reason": "made up"})
    r = sess.post(STAFF_URL + "/staff/fraud/mark", data=data,
                  allow_redirects=False)
    assert r.status_code == 409 and \
        "staff_fraud_result_not_executed" in r.text, r.text
    assert q(db, "SELECT count(*) FROM fraud_mark WHERE payment_id = %s",
             pid)[0][0] == 0
    # Unknown and malformed ids.
    r = sess.get(STAFF_URL + "/staff/fraud/payment",
                 params={"id": str(uuid.uuid4())})
    assert r.status_code == 404
    r = sess.get(STAFF_URL + "/staff/fraud/payment", params={"id": "x'1"})
    assert r.status_code == 400


def ctl_bytes(*args):
    """psd2ctl's standard output as bytes (the CSV's CRLF kept)."""
    cmd = [os.path.join(psd2lib.bin_dir(), "psd2ctl"), "-c",
           "conf/test.conf"] + list(args)
    return subprocess.run(cmd, cwd=psd2lib.TOP, env=psd2lib.sanitizer_env(),
                          stdout=subprocess.PIPE, check=True,
                          timeout=120).stdout


def half_bounds(half):
    year, h = int(half[:4]), int(half[5])
    start = datetime.datetime(year, 1 if h == 1 else 7, 1, tzinfo=BERLIN)
    end = datetime.datetime(year + (h == 2), 7 if h == 1 else 1, 1,
                            tzinfo=BERLIN)
    return start, end


def eur(cents):
    return "%d.%02d" % divmod(cents, 100)


def recompute(db, half, country="DE"):
    """The report's rows from the raw tables, in Python."""
    start, end = half_bounds(half)
    raw = q(db, """SELECT p.id, p.amount_minor, p.creditor_iban,
                      p.status_at, EXISTS (SELECT 1 FROM
                      payment_authorisation a WHERE a.payment_id = p.id
                      AND a.sca_status = 'finalised')
                   FROM payment p WHERE p.transaction_status = 'ACSC'""")
    marks = {}
    for pid, ftype in q(db, "SELECT payment_id, fraud_type FROM fraud_mark "
                            "ORDER BY id"):
        marks[pid] = ftype
    pays = []
    for pid, amount, iban, at, sca in raw:
        if not (start <= at < end):
            continue
        cc = iban[:2]
        geo = ("domestic" if cc == country else
               "cross_border_eea" if cc in EEA else "cross_border_non_eea")
        pays.append((amount, geo, sca, marks.get(pid)))

    def agg(pred, typed=None):
        out = {}
        for area in ("all", "domestic", "cross_border_eea",
                     "cross_border_non_eea"):
            sel = [p for p in pays if pred(p) and
                   (area == "all" or p[1] == area)]
            fr = [p for p in sel if p[3] is not None and
                  (typed is None or p[3] == typed)]
            out[area] = (len(sel), sum(p[0] for p in sel), len(fr),
                         sum(p[0] for p in fr))
        return out
    rows = {}
    every = agg(lambda p: True)
    for code in ("1", "1.1", "1.3", "1.3.1"):
        rows[code] = (every, False)
    rows["1.3.1.1"] = (agg(lambda p: p[2]), False)
    rows["1.3.1.2"] = (agg(lambda p: not p[2]), False)
    for i, t in enumerate(TYPES):
        rows["1.3.1.1.%d" % (i + 1)] = (agg(lambda p: p[2], t), True)
        rows["1.3.1.2.%d" % (i + 1)] = (agg(lambda p: not p[2], t), True)
    zero = {a: (0, 0, 0, 0) for a in every}
    for code in ("1.2", "1.3.1.2.4", "1.3.1.2.5", "1.3.1.2.6", "1.3.1.2.7",
                 "1.3.1.2.8", "1.3.1.2.9", "1.3.2"):
        rows[code] = (zero, False)
    return rows


def test_half_year_statistics(db, operator, owner):
    h2 = "2026H2"
    # Around the half-year's edges, in the bank's time (Europe/Berlin).
    edge_in = datetime.datetime(2026, 6, 30, 22, 30, tzinfo=UTC)   # 00:30
    edge_out = datetime.datetime(2026, 6, 30, 21, 59, tzinfo=UTC)  # 23:59
    end_out = datetime.datetime(2026, 12, 31, 23, 30, tzinfo=UTC)  # 2027
    end_in = datetime.datetime(2026, 12, 31, 22, 59, tzinfo=UTC)
    made = []
    ibans = ["DE89370400440532013000", "FR1420041010050500013M02606",
             "CH9300762011623852957", "NL91ABNA0417164300",
             "GB29NWBK60161331926819"]
    day = datetime.datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
    for i in range(60):
        at = day + datetime.timedelta(days=3 * i, minutes=7 * i)
        made.append(sql_payment(db, owner, at, 1000 + 137 * i,
                                creditor=ibans[i % len(ibans)],
                                sca=(i % 17 != 5)))
    for at in (edge_in, edge_out, end_out, end_in):
        made.append(sql_payment(db, owner, at, 50001))
    # Not executed: never counted, even when marked before (impossible
    # through the functions, so not attempted).
    sql_payment(db, owner, day, 777777, status="RJCT", sca=False)
    sql_payment(db, owner, day, 888888, status="RCVD", sca=False)

    sess = http_login(operator)
    for i, pid in enumerate(made[:24]):
        staff_act(sess, pid, "mark", "case %d" % i, TYPES[i % 3])
    for pid in made[:4]:
        staff_act(sess, pid, "correct", "re-assessed", TYPES[2])
    for pid in made[4:7]:
        staff_act(sess, pid, "withdraw", "not fraud after all")
    staff_act(sess, made[-4], "mark", "edge", TYPES[0])   # edge_in
    staff_act(sess, made[-2], "mark", "edge", TYPES[0])   # end_out

    ctl = ctl_bytes("report", "fraud", "--half", h2, "--csv").decode()
    r = sess.get(STAFF_URL + "/staff/fraud/report.csv", params={"half": h2})
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("text/csv")
    assert 'filename="fraud-2026H2.csv"' in \
        r.headers["Content-Disposition"]
    assert r.content.decode() == ctl

    want = recompute(db, h2)
    got = list(csv.DictReader(io.StringIO(ctl, newline="")))
    assert len(got) == len(want) * 4
    assert ctl.startswith("row,item,geography,volume,value_eur,"
                                 "fraudulent_volume,fraudulent_value_eur\r\n")
    for row in got:
        (vol, val, fvol, fval) = want[row["row"]][0][row["geography"]]
        typed = want[row["row"]][1]
        assert row["volume"] == ("" if typed else str(vol)), row
        assert row["value_eur"] == ("" if typed else eur(val)), row
        assert row["fraudulent_volume"] == str(fvol), row
        assert row["fraudulent_value_eur"] == eur(fval), row
    # This test's own payments are in it: the totals hold at least them.
    total = want["1"][0]["all"]
    assert total[0] >= 62 and total[2] >= 24 - 3 + 1
    assert want["1.3.1.2"][0]["all"][0] >= 4
    assert want["1.3.1"][0]["cross_border_non_eea"][0] >= 24

    # The table for people shows the same figures.
    table = psd2ctl("report", "fraud", "--half", h2).stdout
    assert "Europe/Berlin" in table and "1.3.1.1.3" in table
    # Bad halves: a clear error, nothing else.
    bad = psd2ctl("report", "fraud", "--half", "2026Q4", check=False)
    assert bad.returncode == 1 and "YYYYH1" in bad.stderr
    r = sess.get(STAFF_URL + "/staff/fraud/report.csv",
                 params={"half": "2026H3"})
    assert r.status_code == 400


def test_fraud_pages_need_login(service_setup):
    import requests
    for path in ("/staff/fraud", "/staff/fraud/report.csv?half=2026H2",
                 "/staff/fraud/payment?id=" + str(uuid.uuid4())):
        r = requests.get(STAFF_URL + path, allow_redirects=False,
                         timeout=10)
        assert r.status_code == 303 and r.headers["Location"] == "/staff"
