"""The KPIs recomputed in Python from the raw rows (kpi_minute,
kpi_incident), as src/db/functions/80_kpi.sql defines them, to check the
SQL, the pages, the CSV and psd2ctl against."""

import datetime
import math
import os
import re
from decimal import ROUND_HALF_UP, Decimal

import psd2lib

CLASSES = ["ais", "pis", "funds", "oauth", "psu_pages"]
UTC = datetime.timezone.utc
CSV_HEADER = ("quarter,date,interface,service,requests,uptime_pct,"
              "downtime_s,availability_pct,mean_ms,median_ms,p95_ms,"
              "error_rate_bank_pct,error_rate_tpp_pct,error_rate_psu_pct,"
              "slow_answers")


def c_bounds():
    """kpi_bounds_ms of src/metrics/kpi.c."""
    with open(os.path.join(psd2lib.TOP, "src", "metrics", "kpi.c")) as f:
        text = f.read()
    body = re.search(r"kpi_bounds_ms\[KPI_BOUNDS\] = \{([^}]*)\}", text)
    return [int(x) for x in re.findall(r"\d+", body.group(1))]


BOUNDS = c_bounds()


def pct(num, den):
    if not den:
        return None
    return (Decimal(100) * Decimal(num) / Decimal(den)).quantize(
        Decimal("0.001"), ROUND_HALF_UP)


def percentile(hist, q):
    total = sum(hist)
    if total == 0:
        return None
    rank = math.ceil(Decimal(total) * Decimal(q))
    cum = 0
    for i, n in enumerate(hist):
        cum += n
        if cum >= rank:
            return (BOUNDS + [30000])[i]
    raise AssertionError("rank beyond the histogram")


def downtime(incidents, cls, t0, t1, now):
    """Seconds of [t0, t1) in the union of the class's incidents."""
    iv = []
    for c, started, ended in incidents:
        if c != cls:
            continue
        s, e = max(started, t0), min(ended or now, t1)
        if e > s:
            iv.append((s, e))
    iv.sort()
    total = datetime.timedelta(0)
    cur = None
    for s, e in iv:
        if cur is None or s > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    if cur is not None:
        total += cur[1] - cur[0]
    return Decimal(total.days * 86400 + total.seconds) + \
        Decimal(total.microseconds) / Decimal(1000000)


def report(minutes, incidents, first, last, now):
    """Rows as kpi_report gives them, in its order: dicts with the
    figures as the CSV writes them (None: empty). minutes: (minute,
    class, requests, bank, tpp, psu, slow, failed, sum_ms, latency list);
    incidents: (class, started_at, ended_at)."""
    days = []
    d = first
    while d <= last:
        t0 = datetime.datetime(d.year, d.month, d.day, tzinfo=UTC)
        if t0 < now:
            days.append((d, t0, min(t0 + datetime.timedelta(days=1), now)))
        d += datetime.timedelta(days=1)
    agg = {}
    for m in minutes:
        day = m[0].astimezone(UTC).date()
        if not (first <= day <= last):
            continue
        for key in ((day, m[1]), (None, m[1])):
            a = agg.setdefault(key, [0, 0, 0, 0, 0, 0, 0, [0] * 55])
            for i in range(7):
                a[i] += m[2 + i]
            a[7] = [x + y for x, y in zip(a[7], m[9])]
    down = {}
    for day, t0, t1 in days:
        for cls in CLASSES:
            ds = downtime(incidents, cls, t0, t1, now)
            period = Decimal((t1 - t0).days * 86400 + (t1 - t0).seconds) + \
                Decimal((t1 - t0).microseconds) / Decimal(1000000)
            down[(day, cls)] = (ds, period)
            tot = down.setdefault((None, cls), [Decimal(0), Decimal(0)])
            tot[0] += ds
            tot[1] += period
    rows = []
    for day in [x[0] for x in days] + ([None] if days else []):
        for cls in CLASSES:
            ds, period = down.get((day, cls), (Decimal(0), Decimal(0)))
            a = agg.get((day, cls))
            req = a[0] if a else 0
            rows.append({
                "day": day, "class": cls,
                "interface": "customer" if cls == "psu_pages" else
                "dedicated",
                "requests": req,
                "uptime": (Decimal(100) - Decimal(100) * ds / period
                           ).quantize(Decimal("0.001"), ROUND_HALF_UP)
                if period else None,
                "downtime": int(ds.quantize(Decimal(1), ROUND_HALF_UP)),
                "availability": pct(req - a[5], req) if a else None,
                "mean": int((Decimal(a[6]) / Decimal(req)).quantize(
                    Decimal(1), ROUND_HALF_UP)) if a and req else None,
                "median": percentile(a[7], "0.5") if a else None,
                "p95": percentile(a[7], "0.95") if a else None,
                "bank": pct(a[1], req) if a else None,
                "tpp": pct(a[2], req) if a else None,
                "psu": pct(a[3], req) if a else None,
                "slow": a[4] if a else 0,
            })
    return rows


def csv_text(quarter, rows):
    def s(v):
        return "" if v is None else str(v)
    out = [CSV_HEADER]
    for r in rows:
        out.append(",".join([
            quarter, str(r["day"]) if r["day"] else "quarter",
            r["interface"], r["class"], str(r["requests"]), s(r["uptime"]),
            str(r["downtime"]), s(r["availability"]), s(r["mean"]),
            s(r["median"]),
            s(r["p95"]), s(r["bank"]), s(r["tpp"]), s(r["psu"]),
            str(r["slow"])]))
    return "\r\n".join(out) + "\r\n"


def raw_rows(cur, first, last):
    """The raw rows of the days first..last (and the incidents touching
    them), read on cur."""
    cur.execute("""SELECT minute, class, requests, err_bank, err_tpp,
        err_psu, slow, failed, sum_ms, latency FROM kpi_minute
        WHERE minute >= %s::date::timestamp AT TIME ZONE 'UTC'
          AND minute < (%s::date + 1)::timestamp AT TIME ZONE 'UTC'""",
                (first, last))
    minutes = [tuple(r[:9]) + (list(r[9]),) for r in cur.fetchall()]
    cur.execute("SELECT class, started_at, ended_at FROM kpi_incident")
    incidents = cur.fetchall()
    cur.execute("SELECT now()")
    now = cur.fetchone()[0]
    return minutes, incidents, now
