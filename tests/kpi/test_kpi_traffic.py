"""Real traffic at a running instance, counted to the request: good
answers, TPP errors, PSU-page errors and (the database stopped) the
bank's, per KPI class, in kpi_minute under the instance's name; then the
day's KPIs of kpi_report against the same figures recomputed from the raw
rows."""

import os
import re
import subprocess
import time

import pytest
import requests

import kpi_lib
import psd2lib
from ais_shared import Api, get_tokens
from conftest import kpi_instance
from psd2_fixtures import _servers

ACCOUNT_LIST = "/auth/v1/psd2/account/account-list"
FUNDS = "/auth/v1/psd2/funds-confirmations"
PAYMENT = "/auth/v1/psd2/payments/sepa-credit-transfers"
PSU_IP = {"PSU-IP-Address": "192.0.2.10"}
FIELDS = ("requests", "bank", "tpp", "psu", "slow", "failed")


class Counter:
    """What the instance must have counted, from the answers seen."""

    def __init__(self):
        self.want = {}

    def seen(self, cls, r):
        w = self.want.setdefault(cls, dict.fromkeys(FIELDS, 0))
        w["requests"] += 1
        if r.status_code >= 500:
            w["bank"] += 1
            w["failed"] += 1
        elif r.status_code >= 400:
            w["psu" if cls == "psu_pages" else "tpp"] += 1
        return r


def counted(db, instance):
    cur = db.cursor()
    cur.execute("""SELECT class, sum(requests), sum(err_bank),
        sum(err_tpp), sum(err_psu), sum(slow), sum(failed),
        array_agg(latency), sum(sum_ms) FROM kpi_minute
        WHERE instance = %s GROUP BY class""", (instance,))
    out = {}
    for row in cur.fetchall():
        out[row[0]] = dict(zip(FIELDS, [int(x) for x in row[1:7]]))
        out[row[0]]["latency_total"] = sum(sum(h) for h in row[7])
        out[row[0]]["sum_ms"] = int(row[8])
    return out


def wait_counted(db, instance, want, timeout=20):
    deadline = time.time() + timeout
    while True:
        got = counted(db, instance)
        plain = {c: {k: v[k] for k in FIELDS} for c, v in got.items()}
        if plain == want or time.time() > deadline:
            return got, plain
        time.sleep(0.5)


@pytest.fixture(scope="module")
def token(server):
    return get_tokens(psd2lib.sandbox_client(),
                      psd2lib.make_psu(n_accounts=1))["access_token"]


def test_traffic_counted_to_the_request(kpi_server, signer, token, db):
    api = Api(signer, base=kpi_server.url)
    base = kpi_server.url
    c = Counter()
    for _ in range(5):
        r = c.seen("ais", api.get(ACCOUNT_LIST, token, headers=PSU_IP))
        assert r.status_code == 200, r.text
    for _ in range(3):
        r = c.seen("ais", api.get(ACCOUNT_LIST, "not-a-token",
                                  headers=PSU_IP))
        assert r.status_code == 401, r.text
    for _ in range(2):
        r = c.seen("funds", api.call("POST", FUNDS, "not-a-token",
                                     body={"instructedAmount": {}}))
        assert 400 <= r.status_code < 500, r.text
    r = c.seen("pis", api.call("POST", PAYMENT, "not-a-token", body={}))
    assert 400 <= r.status_code < 500, r.text
    for _ in range(2):
        r = c.seen("oauth", requests.get(
            base + "/.well-known/oauth-authorization-server", timeout=10))
        assert r.status_code == 200
        r = c.seen("oauth", requests.get(
            base + "/auth/oauth/authorize?response_type=code", timeout=10))
        assert r.status_code == 400
    for _ in range(3):
        r = c.seen("psu_pages", requests.get(base + "/auth/consents",
                                             timeout=10,
                                             allow_redirects=False))
        assert r.status_code < 400
    for _ in range(2):
        # A login form without its fields: the PSU's error (4xx).
        r = c.seen("psu_pages", requests.post(base + "/auth/login",
                                              data={}, timeout=10))
        assert 400 <= r.status_code < 500, r.status_code
    # Not counted: health, assets, the statistics themselves.
    for path in ("/health", "/assets/style.css", "/psd2/statistics"):
        assert requests.get(base + path, timeout=10).status_code == 200

    got, plain = wait_counted(db, kpi_server.instance, c.want)
    assert plain == c.want
    for cls, v in got.items():
        assert v["latency_total"] == v["requests"], (cls, v)
    # The milliseconds of the counted answers, as the request log has them.
    counted_paths = {ACCOUNT_LIST, FUNDS, PAYMENT, "/auth/consents",
                     "/auth/login", "/auth/oauth/authorize",
                     "/.well-known/oauth-authorization-server"}
    logged = [(m.group(1), int(m.group(2))) for m in re.finditer(
        r"method=\S+ path=(\S+) status=\d+ ms=(\d+)",
        kpi_server.log_text())]
    assert sum(ms for p, ms in logged if p in counted_paths) == \
        sum(v["sum_ms"] for v in got.values())
    assert len([p for p, _ in logged if p in counted_paths]) == \
        sum(v["requests"] for v in got.values())


def test_day_kpis_from_the_raw_rows(kpi_server, db, dbinfo):
    """kpi_report for today against the raw rows, read in one snapshot
    (other instances of the suite write meanwhile)."""
    conn = psd2lib.db_connect(dbinfo)
    try:
        conn.autocommit = False
        conn.set_session(isolation_level="REPEATABLE READ")
        cur = conn.cursor()
        cur.execute("SELECT (now() AT TIME ZONE 'UTC')::date")
        today = cur.fetchone()[0]
        minutes, incidents, now = kpi_lib.raw_rows(cur, today, today)
        cur.execute("SELECT day, class, interface, requests, uptime_pct, "
                    "downtime_s, availability_pct, mean_ms, median_ms, "
                    "p95_ms, "
                    "err_bank_pct, err_tpp_pct, err_psu_pct, slow "
                    "FROM kpi_report(%s, %s)", (today, today))
        got = cur.fetchall()
        conn.rollback()
    finally:
        conn.close()
    want = kpi_lib.report(minutes, incidents, today, today, now)
    keys = ("day", "class", "interface", "requests", "uptime", "downtime",
            "availability", "mean", "median", "p95", "bank", "tpp", "psu",
            "slow")
    assert [dict(zip(keys, g)) for g in got] == want
    # This module's traffic is in them.
    mine = counted(db, kpi_server.instance)
    for row in want:
        if row["day"] is not None and row["class"] in mine:
            assert row["requests"] >= mine[row["class"]]["requests"]


def cluster(cmd):
    env = dict(os.environ, PSD2_PGPORT=os.environ["PGPORT"])
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pgcluster.sh"),
                    cmd], check=True, cwd=psd2lib.TOP, env=env,
                   stdout=subprocess.DEVNULL, timeout=120)


def test_minutes_kept_while_the_database_is_down(service_setup, server,
                                                 signer, token, dbinfo):
    """The real fault: PostgreSQL stopped. The answers meanwhile are the
    bank's errors (503); the instance keeps its minutes and writes them
    once the database answers again."""
    srv = kpi_instance()
    srv.start()
    _servers.append(srv)
    api = Api(signer, base=srv.url)
    c = Counter()
    try:
        cluster("stop")
        try:
            for _ in range(4):
                r = c.seen("ais", api.get(ACCOUNT_LIST, token,
                                          headers=PSU_IP))
                assert r.status_code == 503, r.text
            # A few flush rounds fail meanwhile.
            time.sleep(3)
        finally:
            cluster("start")
        db = psd2lib.db_connect(dbinfo)
        try:
            got, plain = wait_counted(db, srv.instance, c.want, timeout=30)
        finally:
            db.close()
        assert plain == {"ais": {"requests": 4, "bank": 4, "tpp": 0,
                                 "psu": 0, "slow": 0, "failed": 4}}
    finally:
        srv.stop()
    assert not [p for p in srv.problems], srv.problems


def test_recording_off_records_nothing(service_setup, server, signer,
                                       token, db):
    srv = kpi_instance("psd2_kpi_recording\tno\n")
    srv.start()
    _servers.append(srv)
    try:
        api = Api(signer, base=srv.url)
        for _ in range(3):
            assert api.get(ACCOUNT_LIST, token,
                           headers=PSU_IP).status_code == 200
        time.sleep(3)
        assert counted(db, srv.instance) == {}
    finally:
        srv.stop()


def test_bounds_match_the_c_table(db):
    cur = db.cursor()
    cur.execute("SELECT kpi_latency_bounds_ms()")
    assert cur.fetchone()[0] == kpi_lib.BOUNDS
    assert len(kpi_lib.BOUNDS) + 1 == 55


def test_snapshots_leave_out_the_kpi_writes(kpi_server, dbinfo):
    """The tests' 'nothing changed' snapshot (psd2lib.db_snapshot) is not
    disturbed by the minutes an instance writes meanwhile (the running
    minute is written again every round)."""
    for _ in range(3):
        requests.get(kpi_server.url + "/auth/consents", timeout=10)
    time.sleep(1.5)
    quiet = ("web_session", "audit_chain")
    before = psd2lib.db_snapshot(dbinfo, exclude=quiet)
    time.sleep(2.5)
    assert psd2lib.db_snapshot(dbinfo, exclude=quiet) == before
