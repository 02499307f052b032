"""A quarter of generated history (raw kpi_minute rows of two instances
and kpi_incident rows of both sources, overlapping, across midnight and
the quarter's edges) gives a report whose every figure is recomputed here
from the raw rows: the public CSV, psd2ctl's CSV (the same bytes), the
public page in each language and psd2ctl's table agree with it."""

import datetime
import html
import os
import random
import re
import secrets
import subprocess

import pytest
import requests

import kpi_lib
import psd2lib

QUARTER = "2025Q1"
FIRST = datetime.date(2025, 1, 1)
LAST = datetime.date(2025, 3, 31)
UTC = datetime.timezone.utc


def at(y, mo, d, h=0, mi=0, s=0):
    return datetime.datetime(y, mo, d, h, mi, s, tzinfo=UTC)


def latency(rng, n, slow):
    """n answers over the 55 buckets, slow of them in the last."""
    hist = [0] * 55
    hist[54] = slow
    for _ in range(n - slow):
        # mostly fast, a tail up to seconds
        hist[min(53, int(rng.expovariate(0.25)))] += 1
    return hist


@pytest.fixture(scope="module")
def history(service_setup, dbinfo):
    rng = random.Random(20250101)
    db = psd2lib.db_connect(dbinfo)
    cur = db.cursor()
    instances = ["hist-a-%d" % rng.randrange(10 ** 6),
                 "hist-b-%d" % rng.randrange(10 ** 6)]
    d = FIRST
    while d <= LAST:
        for cls in kpi_lib.CLASSES:
            if rng.random() < 0.1:
                continue            # a day without requests of the class
            for _ in range(rng.randrange(1, 4)):
                minute = at(d.year, d.month, d.day, rng.randrange(24),
                            rng.randrange(60))
                for inst in instances:
                    n = rng.randrange(1, 300)
                    slow = rng.randrange(0, 3) if n > 3 else 0
                    bank = rng.randrange(0, max(1, n // 20))
                    caller = rng.randrange(0, max(1, n // 5))
                    tpp = 0 if cls == "psu_pages" else caller
                    psu = caller if cls == "psu_pages" else 0
                    cur.execute("""INSERT INTO kpi_minute (instance, minute,
                        class, requests, err_bank, err_tpp, err_psu, slow,
                        failed, sum_ms, latency) VALUES (%s, %s, %s, %s, %s,
                        %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING""",
                                (inst, minute, cls, n, bank, tpp, psu, slow,
                                 bank + slow, rng.randrange(n, 40 * n),
                                 latency(rng, n, slow)))
        d += datetime.timedelta(days=1)
    incidents = [
        # across the quarter's start and across midnight
        ("ais", "service", at(2024, 12, 31, 23, 30), at(2025, 1, 1, 0, 45)),
        ("pis", "probe", at(2025, 2, 3, 23, 50, 7), at(2025, 2, 4, 0, 20)),
        # overlapping: probe and service, two instances
        ("funds", "probe", at(2025, 2, 10, 10), at(2025, 2, 10, 11)),
        ("funds", "service", at(2025, 2, 10, 10, 30), at(2025, 2, 10, 12)),
        ("funds", "service", at(2025, 2, 10, 10, 40), at(2025, 2, 10, 10, 50)),
        # the customer interface, and across the quarter's end
        ("psu_pages", "service", at(2025, 3, 1, 8), at(2025, 3, 1, 8, 0, 54)),
        ("oauth", "probe", at(2025, 3, 31, 23), at(2025, 4, 1, 2)),
    ]
    for _ in range(25):
        start = at(2025, 1, 1) + datetime.timedelta(
            seconds=rng.randrange(89 * 86400))
        incidents.append((rng.choice(kpi_lib.CLASSES),
                          rng.choice(["service", "probe"]), start,
                          start + datetime.timedelta(
                              seconds=rng.randrange(30, 4 * 3600))))
    for cls, source, started, ended in incidents:
        cur.execute("""INSERT INTO kpi_incident (class, source, instance,
            started_at, ended_at, detail) VALUES (%s, %s, %s, %s, %s,
            'generated history')""", (cls, source, rng.choice(instances),
                                      started, ended))
    # The days summed into kpi_day, as worker 1 does after each write:
    # the report then reads them from kpi_day, not from their minutes.
    while True:
        cur.execute("SELECT kpi_rollup()")
        if cur.fetchone()[0] == 0:
            break
    cur.execute("SELECT count(*) FROM kpi_day_stale WHERE day BETWEEN %s "
                "AND %s", (FIRST, LAST))
    assert cur.fetchone()[0] == 0
    cur.execute("SELECT count(DISTINCT day) FROM kpi_day WHERE day BETWEEN "
                "%s AND %s", (FIRST, LAST))
    assert cur.fetchone()[0] == 90
    minutes, raw_incidents, now = kpi_lib.raw_rows(cur, FIRST, LAST)
    db.close()
    rows = kpi_lib.report(minutes, raw_incidents, FIRST, LAST, now)
    assert len(rows) == 91 * 5
    return rows


def test_csv_public_and_psd2ctl_agree_with_raw_rows(history, server):
    want = kpi_lib.csv_text(QUARTER, history)
    r = requests.get(psd2lib.MAIN_URL + "/psd2/statistics.csv",
                     params={"quarter": QUARTER}, timeout=30)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/csv")
    assert QUARTER in r.headers["Content-Disposition"]
    assert r.content.decode() == want
    # Bytes, not text: the lines end in CRLF (RFC 4180) on both.
    p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl"), "-c",
                        "conf/test.conf", "report", "kpi", "--quarter",
                        QUARTER, "--csv"], cwd=psd2lib.TOP,
                       env=psd2lib.sanitizer_env(), capture_output=True,
                       timeout=120, check=True)
    assert p.stdout == r.content == want.encode()
    # A known overlap, recomputed by hand: funds on 2025-02-10 was down
    # 10:00 to 12:00 (three incidents, two sources), 7200 s at least.
    funds = [x for x in history if x["day"] == datetime.date(2025, 2, 10)
             and x["class"] == "funds"][0]
    assert funds["downtime"] >= 7200
    psu = [x for x in history if x["day"] == datetime.date(2025, 3, 1)
           and x["class"] == "psu_pages"][0]
    assert psu["downtime"] >= 54


def cell_texts(page, table_id):
    """{day: [cell text, ...]} of a table of the page."""
    m = re.search(r'<table id="%s".*?<tbody>(.*?)</tbody>' % table_id, page,
                  re.S)
    out = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1), re.S):
        day = html.unescape(re.search(r"<th>(.*?)</th>", tr).group(1))
        out[day] = [html.unescape(re.sub(r"<[^>]+>", "|", td))
                    for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
    return out


def fmt(v):
    return "–" if v is None else str(v)


def test_public_page_shows_the_same_figures(history, server):
    r = requests.get(psd2lib.MAIN_URL + "/psd2/statistics",
                     params={"quarter": QUARTER, "lang": "en"}, timeout=30)
    assert r.status_code == 200
    page = r.text
    uptime = cell_texts(page, "kpi-uptime")
    times = cell_texts(page, "kpi-time")
    errors = cell_texts(page, "kpi-errors")
    assert len(uptime) == len(times) == len(errors) == 91
    for row in history:
        day = str(row["day"]) if row["day"] else QUARTER
        i = kpi_lib.CLASSES.index(row["class"])
        assert uptime[day][i] == "%s %%||%s s|" % (
            fmt(row["uptime"]), row["downtime"]), (day, row)
        assert times[day][i] == "%s||%s / %s|" % (
            fmt(row["mean"]), fmt(row["median"]), fmt(row["p95"])), (day, row)
        caller = row["psu"] if row["class"] == "psu_pages" else row["tpp"]
        assert errors[day][i] == "%s / %s||%s · %s %%|" % (
            fmt(row["bank"]), fmt(caller), row["requests"],
            fmt(row["availability"])), (day, row)


@pytest.mark.parametrize("lang,title", [
    ("de", "Statistik unserer PSD2-Schnittstellen"),
    ("nl", "Statistieken van onze PSD2-interfaces")])
def test_public_page_languages(history, server, lang, title):
    r = requests.get(psd2lib.MAIN_URL + "/psd2/statistics",
                     params={"quarter": QUARTER, "lang": lang}, timeout=30)
    assert r.status_code == 200
    assert "<h1>%s</h1>" % title in r.text
    assert len(cell_texts(r.text, "kpi-uptime")) == 91


def test_psd2ctl_table_agrees(history):
    p = psd2lib.psd2ctl("report", "kpi", "--quarter", QUARTER)
    lines = p.stdout.splitlines()
    assert lines[0].startswith("KPIs of %s, 2025-01-01 to 2025-03-31" %
                               QUARTER)
    body = [ln.split() for ln in lines[2:]]
    assert len(body) == len(history)
    for words, row in zip(body, history):
        def c(v):
            return "-" if v is None else str(v)
        assert words == [
            str(row["day"]) if row["day"] else "quarter", row["interface"],
            row["class"], str(row["requests"]), c(row["uptime"]),
            str(row["downtime"]), c(row["availability"]), c(row["mean"]),
            c(row["median"]),
            c(row["p95"]), c(row["bank"]), c(row["tpp"]), c(row["psu"]),
            str(row["slow"])]


def test_bad_quarter_refused(server):
    for q in ("2025Q5", "25Q1", "2025q1", "0999Q1", "2025Q1x"):
        r = requests.get(psd2lib.MAIN_URL + "/psd2/statistics",
                         params={"quarter": q}, timeout=10)
        assert r.status_code == 400, q
        r = requests.get(psd2lib.MAIN_URL + "/psd2/statistics.csv",
                         params={"quarter": q}, timeout=10)
        assert r.status_code == 400, q
    p = psd2lib.psd2ctl("report", "kpi", "--quarter", "2025Q5",
                        check=False)
    assert p.returncode == 1 and "YYYYQn" in p.stderr


def test_minute_written_after_the_rollup(history, dbinfo):
    """A minute of a day already summed (an instance back after a long
    outage): the day is read from its minutes again until summed anew,
    and the report stays the raw rows' (runs last: it adds a minute)."""
    db = psd2lib.db_connect(dbinfo)
    try:
        cur = db.cursor()
        day = datetime.date(2025, 2, 15)
        cur.execute("""INSERT INTO kpi_minute (instance, minute, class,
            requests, err_bank, err_tpp, err_psu, slow, failed, sum_ms,
            latency) VALUES (%s, %s, 'pis', 1000, 7, 3, 0, 1, 8, 61234,
            %s)""",
                    ("late-" + secrets.token_hex(4), at(2025, 2, 15, 12, 30),
                     [0] * 20 + [999] + [0] * 33 + [1]))
        cur.execute("SELECT count(*) FROM kpi_day_stale WHERE day = %s",
                    (day,))
        assert cur.fetchone()[0] == 1
        for rolled in (False, True):
            minutes, incidents, now = kpi_lib.raw_rows(cur, FIRST, LAST)
            want = kpi_lib.csv_text(QUARTER, kpi_lib.report(
                minutes, incidents, FIRST, LAST, now))
            cur.execute("SELECT kpi_report_csv(%s)", (QUARTER,))
            assert cur.fetchone()[0] == want, rolled
            assert int(re.search(r"%s,dedicated,pis,(\d+)," % day,
                                 want).group(1)) >= 1000
            cur.execute("SELECT kpi_rollup()")
        cur.execute("SELECT count(*) FROM kpi_day_stale WHERE day = %s",
                    (day,))
        assert cur.fetchone()[0] == 0
    finally:
        db.close()


def test_current_quarter_by_default(server):
    r = requests.get(psd2lib.MAIN_URL + "/psd2/statistics", timeout=30)
    assert r.status_code == 200
    now = datetime.datetime.now(UTC)
    q = "%dQ%d" % (now.year, (now.month - 1) // 3 + 1)
    assert '<span id="kpi-quarter">%s</span>' % q in r.text
