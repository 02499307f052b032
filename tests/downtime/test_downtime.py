"""Downtime by EBA GL/2018/07 GL 2.2 (five consecutive requests of a KPI
class not answered within 30 s), with the real fault: the test cluster
is stopped (`pg_ctl stop -m fast`, tests/pgcluster.sh stop) and started
again.

- Under signed account-list calls and token requests, 40 s without the
  database start one incident per class (source 'service'): started_at
  is the send time of the first of the failed requests, ended_at the
  first answer after the restart; the rows are written after the
  database is back, with the times the instance kept; an audit row for
  the start and for the end; psd2_interface_down was 1 meanwhile and
  psd2_incidents_total counted one.
- The probe, with no outside traffic, finds the same outage in every
  class (source 'probe'), and its requests stay out of the request log
  and the service's own detector.
- Four failures and then an answer start nothing.
- A stop while a timer's query waits closes that query's connection too
  (LeakSanitizer, under make sanitize-test).

Every test leaves the shared cluster running (a finally starts it).
"""

import os
import re
import subprocess
import threading
import time

import pytest
import requests

import psd2_fixtures
import psd2lib
from ha_lib import Instance, ha_port, samples, value
from psd2lib import (ACCOUNT_LIST, exchange_code, make_client, make_psu,
                     run_code_flow)

CLASSES = ("oauth", "ais", "pis", "funds", "psu_pages")
TIMEOUT = 10
REQUEST_LINE = re.compile(r"request id=\S+ method=\S+ path=/auth")
TOL = 0.25      # seconds: client and server clocks are one clock; rounding


def cluster(cmd):
    env = dict(os.environ, PSD2_PGPORT=os.environ["PGPORT"])
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pgcluster.sh"),
                    cmd], check=True, cwd=psd2lib.TOP, env=env,
                   stdout=subprocess.DEVNULL, timeout=120)


@pytest.fixture
def cluster_restored():
    yield
    cluster("start")


def db():
    return psd2lib.db_connect(psd2lib.as_superuser(
        psd2lib.pgcluster_start()))


def incidents(instance):
    c = db()
    try:
        cur = c.cursor()
        cur.execute("""SELECT id, class, source,
                              extract(epoch FROM started_at)::float8,
                              extract(epoch FROM ended_at)::float8,
                              extract(epoch FROM recorded_at)::float8, detail
                       FROM kpi_incident WHERE instance = %s
                       ORDER BY started_at, class""", (instance,))
        return cur.fetchall()
    finally:
        c.close()


def audit_rows(instance):
    c = db()
    try:
        cur = c.cursor()
        cur.execute("""SELECT action, detail FROM audit_log
                       WHERE actor = %s ORDER BY id""",
                    ("service:" + instance,))
        return cur.fetchall()
    finally:
        c.close()


def start_instance(name, extra, n):
    inst = Instance(name, ha_port(2 * n), ha_port(2 * n + 1), extra)
    inst.start()
    psd2_fixtures._servers.append(inst)
    return inst


def unique_name(prefix):
    return "%s-%s" % (prefix, os.urandom(4).hex())


def unknown_client_token(base):
    """The token endpoint with an unknown client: the database decides
    (401 invalid_client when it is up)."""
    return requests.post(base + "/auth/oauth/token",
                         data={"grant_type": "refresh_token",
                               "refresh_token": "x"},
                         auth=("nobody-" + os.urandom(4).hex(), "x"),
                         timeout=TIMEOUT)


class Load:
    """Threads sending requests of a class in a loop; every answer kept
    with its wall-clock send and answer times."""

    def __init__(self):
        self.results = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = []

    def add(self, cls, fn, pause=0.1):
        def loop():
            while not self.stop.is_set():
                t0 = time.time()
                try:
                    status = fn().status_code
                except requests.RequestException:
                    status = 0
                with self.lock:
                    self.results.append((cls, t0, time.time(), status))
                time.sleep(pause)
        self.threads.append(threading.Thread(target=loop, daemon=True))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(TIMEOUT + 5)

    def of(self, cls):
        with self.lock:
            return sorted([r for r in self.results if r[0] == cls],
                          key=lambda r: r[2])


def outage_bounds(results):
    """The first failed answer of the outage and the first good one
    after it (answer order, as the detector sees them)."""
    first_bad = first_good = None
    for r in results:
        bad = r[3] == 0 or r[3] >= 500
        if bad and first_bad is None:
            first_bad = r
        elif not bad and first_bad is not None:
            first_good = r
            break
    return first_bad, first_good


def test_database_stopped_40s_under_traffic(service_setup, signer,
                                            cluster_restored):
    name = unique_name("dt-service")
    inst = start_instance("downtime-service", "psd2_instance %s\n" % name, 0)
    try:
        client = make_client()
        psu = make_psu(1)
        code, _, _, _ = run_code_flow(client, psu, base=inst.url)
        tok = exchange_code(client, code, base=inst.url).json()
        at = tok["access_token"]

        def ais():
            h = {"Authorization": "Bearer " + at,
                 "PSU-IP-Address": "192.0.2.10"}
            return signer.for_token(at).request(
                "GET", inst.url + ACCOUNT_LIST, headers=h, timeout=TIMEOUT)

        assert ais().status_code == 200
        load = Load()
        load.add("ais", ais)
        load.add("ais", ais)
        load.add("oauth", lambda: unknown_client_token(inst.url))
        with load:
            time.sleep(2)
            t_stop = time.time()
            cluster("stop")
            time.sleep(20)
            during = samples(inst.scrape())
            time.sleep(20)
            t_start = time.time()
            cluster("start")
            deadline = time.time() + 30
            while time.time() < deadline:
                ok = [r for r in load.of("ais") if r[1] > t_start and
                      r[3] == 200]
                if len(ok) >= 5:
                    break
                time.sleep(0.5)
            time.sleep(2)
        assert value(during, "psd2_interface_down", **{
            "class": "ais", "source": "service"}) == 1
        assert value(during, "psd2_interface_down", **{
            "class": "oauth", "source": "service"}) == 1

        # Written once the database answers again (worker 1, every 1 s).
        deadline = time.time() + 15
        while time.time() < deadline:
            rows = incidents(name)
            if {r[1] for r in rows} == {"ais", "oauth"} and \
                    all(r[4] is not None for r in rows):
                break
            time.sleep(0.5)
        # The outage's incident is each class's first. Right after the
        # restart one worker may still wait out its reconnect backoff (up
        # to 2 s, patch 0020) and answer 503 while the other answers:
        # five of those in a row are a short downtime of their own, which
        # is recorded too (they were not answered), after the restart.
        by_class = {}
        for r in sorted(rows, key=lambda r: r[3]):
            if r[1] not in by_class:
                by_class[r[1]] = r
            else:
                assert r[3] >= t_start - TOL and r[4] - r[3] <= 5, rows
        assert set(by_class) == {"ais", "oauth"}, rows
        for cls, expect_good in (("ais", 200), ("oauth", 401)):
            _, kls, source, started, ended, recorded, detail = by_class[cls]
            assert source == "service"
            first_bad, first_good = outage_bounds(load.of(cls))
            assert first_bad is not None and first_good is not None
            assert first_good[3] == expect_good, first_good
            # The first of the five: sent no earlier than the last request
            # before it was answered, no later than the first failure's.
            assert t_stop - 3 <= started <= first_bad[2] + TOL, \
                (cls, started, first_bad, t_stop)
            failed_sent = [r[1] for r in load.of(cls)
                           if (r[3] == 0 or r[3] >= 500)]
            assert min(failed_sent) - TOL <= started, (cls, started)
            # The end: the first answer after the restart.
            assert first_good[1] - TOL <= ended <= first_good[2] + TOL, \
                (cls, ended, first_good)
            assert ended >= t_start - TOL
            assert ended - started >= 38, (cls, started, ended)
            # Recorded after the database came back, with the kept times.
            assert recorded >= t_start - TOL and started < t_start
            assert "503" in detail or "status 5" in detail, detail

        # An audit row for each start and end, with the incident's id.
        rows_a = audit_rows(name)
        seen = {(a, d["class"], d["id"]) for a, d in rows_a}
        for r in rows:
            assert ("incident.start", r[1], r[0]) in seen, rows_a
            assert ("incident.end", r[1], r[0]) in seen, rows_a
        assert len(rows_a) == 2 * len(rows), rows_a

        after = samples(inst.scrape())
        for cls in CLASSES:
            assert value(after, "psd2_interface_down", **{
                "class": cls, "source": "service"}) == 0
            assert value(after, "psd2_incidents_total", **{
                "class": cls, "source": "service"}) == \
                sum(1 for r in rows if r[1] == cls)
    finally:
        psd2_fixtures._stop(inst)


def test_probe_finds_the_outage_without_traffic(service_setup,
                                                cluster_restored):
    name = unique_name("dt-probe")
    port = ha_port(2)
    inst = start_instance("downtime-probe", "psd2_instance %s\n"
                          "psd2_probe_url http://127.0.0.1:%d\n"
                          "psd2_probe_seconds 1\n" % (name, port), 1)
    try:
        time.sleep(3)
        s = samples(inst.scrape())
        for cls in CLASSES:
            assert value(s, "psd2_probe_requests_total", **{
                "class": cls, "outcome": "answered"}) >= 1, cls
            assert value(s, "psd2_probe_requests_total", **{
                "class": cls, "outcome": "failed"}) == 0, cls
        # The probe's requests are not in the request log.
        assert not REQUEST_LINE.search(inst.log_text()), inst.tail()

        t_stop = time.time()
        cluster("stop")
        time.sleep(9)
        during = samples(inst.scrape())
        t_start = time.time()
        cluster("start")
        deadline = time.time() + 30
        while time.time() < deadline:
            rows = incidents(name)
            if len(rows) == len(CLASSES) and \
                    all(r[4] is not None for r in rows):
                break
            time.sleep(0.5)
        assert sorted(r[1] for r in rows) == sorted(CLASSES), rows
        for _, cls, source, started, ended, recorded, detail in rows:
            assert source == "probe"
            assert t_stop - TOL <= started <= t_start, (cls, started)
            assert ended >= t_start - TOL, (cls, ended)
        for cls in CLASSES:
            assert value(during, "psd2_interface_down", **{
                "class": cls, "source": "probe"}) == 1, cls
            assert value(during, "psd2_probe_requests_total", **{
                "class": cls, "outcome": "failed"}) >= 5, cls
            # The probe's answers never reached the service's detector.
            assert value(during, "psd2_interface_down", **{
                "class": cls, "source": "service"}) == 0, cls
        after = samples(inst.scrape())
        assert sum(value(after, "psd2_interface_down", **{
            "class": c, "source": "probe"}) for c in CLASSES) == 0
        assert len(audit_rows(name)) == 2 * len(CLASSES)
        # Not in the request log; their error lines say source=probe.
        text = inst.log_text()
        assert not REQUEST_LINE.search(text), REQUEST_LINE.search(text)
        errors = [ln for ln in text.splitlines() if "errorId=" in ln]
        assert errors and all(ln.endswith(" source=probe")
                              for ln in errors), errors[:3]
    finally:
        psd2_fixtures._stop(inst)


def test_four_failures_then_an_answer_start_nothing(service_setup,
                                                   cluster_restored):
    """A flap: four requests not answered, then one answered. One worker
    (every request meets the same connection state); its purge every
    second reconnects it once the database is back, before the good
    request."""
    name = unique_name("dt-flap")
    inst = start_instance("downtime-flap", "psd2_instance %s\n"
                          "psd2_purge_interval 1\nworkers 1\n" % name, 2)
    try:
        assert unknown_client_token(inst.url).status_code == 401
        since = inst.log_size()
        cluster("stop")
        for _ in range(4):
            assert unknown_client_token(inst.url).status_code == 503
        cluster("start")
        deadline = time.time() + 20
        while "database db is back" not in inst.log_text(since):
            assert time.time() < deadline, inst.tail()
            time.sleep(0.2)
        assert unknown_client_token(inst.url).status_code == 401
        # And four more failures after the answer do not add up to five.
        since = inst.log_size()
        cluster("stop")
        for _ in range(4):
            assert unknown_client_token(inst.url).status_code == 503
        s = samples(inst.scrape())
        cluster("start")
        assert value(s, "psd2_interface_down", **{
            "class": "oauth", "source": "service"}) == 0
        assert value(s, "psd2_incidents_total", **{
            "class": "oauth", "source": "service"}) == 0
        deadline = time.time() + 20
        while "database db is back" not in inst.log_text(since):
            assert time.time() < deadline, inst.tail()
            time.sleep(0.2)
        time.sleep(2)
        assert incidents(name) == []
        assert audit_rows(name) == []
        assert "downtime:" not in inst.log_text()
    finally:
        psd2_fixtures._stop(inst)


def test_answers_after_30s_count_as_not_answered(service_setup):
    """The other half of GL 2.2: answered, but not within 30 s. The
    database stalls (a lock on the clients' table, held 31 s) under five
    token requests: they are answered (401) after 30 s, which starts a
    downtime at the first one's send time; the next answer in time ends
    it."""
    name = unique_name("dt-slow")
    inst = start_instance("downtime-slow", "psd2_instance %s\n" % name, 3)
    c = db()
    try:
        assert unknown_client_token(inst.url).status_code == 401
        cur = c.cursor()
        cur.execute("BEGIN")
        cur.execute("LOCK TABLE oauth_client IN ACCESS EXCLUSIVE MODE")
        out = []

        def slow():
            t0 = time.time()
            r = requests.post(inst.url + "/auth/oauth/token",
                              data={"grant_type": "refresh_token",
                                    "refresh_token": "x"},
                              auth=("nobody-" + os.urandom(4).hex(), "x"),
                              timeout=(5, 90))
            out.append((t0, time.time(), r.status_code))

        threads = [threading.Thread(target=slow) for _ in range(5)]
        for t in threads:
            t.start()
            time.sleep(0.1)
        time.sleep(31)
        cur.execute("COMMIT")
        for t in threads:
            t.join(60)
        assert len(out) == 5 and all(s == 401 and t1 - t0 >= 30
                                     for t0, t1, s in out), out
        g0 = time.time()
        assert unknown_client_token(inst.url).status_code == 401
        g1 = time.time()
        deadline = time.time() + 10
        while time.time() < deadline:
            rows = incidents(name)
            if rows and rows[0][4] is not None:
                break
            time.sleep(0.3)
        assert len(rows) == 1, rows
        _, cls, source, started, ended, _, detail = rows[0]
        assert (cls, source) == ("oauth", "service")
        first = min(t0 for t0, _, _ in out)
        assert first - TOL <= started <= first + TOL, (started, out)
        assert g0 - TOL <= ended <= g1 + TOL, (ended, g0, g1)
        assert detail.startswith("status 401 after "), detail
        # The request log (and with it the latency histogram and the
        # KPIs) counts the wait for the database too, not only the
        # handler's own runs.
        slow_ms = [int(m) for m in re.findall(
            r"path=/auth/oauth/token status=401 ms=(\d+)", inst.log_text())]
        assert sum(1 for ms in slow_ms if ms >= 30000) == 5, slow_ms
    finally:
        c.close()
        psd2_fixtures._stop(inst)


def test_a_restarted_instance_ends_what_it_left_open(service_setup):
    """An instance stopped during a downtime never sees its end: when it
    starts again (the same psd2_instance) the open incidents end at its
    start, noted as such, with their audit rows; other instances' are
    left alone."""
    name = unique_name("dt-restart")
    other = unique_name("dt-other")
    c = db()
    try:
        cur = c.cursor()
        for inst, cls in ((name, "ais"), (name, "pis"), (other, "ais")):
            cur.execute("SELECT kpi_incident_event(%s, 'service', %s, "
                        "'start', now() - interval '5 minutes', "
                        "'status 503')", (cls, inst))
    finally:
        c.close()
    t0 = time.time()
    inst = start_instance("downtime-restart", "psd2_instance %s\n" % name,
                          4)
    try:
        deadline = time.time() + 15
        while time.time() < deadline:
            rows = incidents(name)
            if all(r[4] is not None for r in rows):
                break
            time.sleep(0.3)
        assert len(rows) == 2, rows
        for _, cls, _, started, ended, _, detail in rows:
            assert t0 - 5 <= ended <= time.time(), (cls, ended, t0)
            assert detail.endswith("end unknown (instance restarted)"), \
                detail
        assert [r[4] for r in incidents(other)] == [None]
        ends = [d for a, d in audit_rows(name) if a == "incident.end"]
        assert sorted(d["class"] for d in ends) == ["ais", "pis"]
    finally:
        psd2_fixtures._stop(inst)
        c = db()
        try:
            c.cursor().execute("SELECT kpi_incident_event(NULL, NULL, %s, "
                               "'restart', now(), NULL)", (other,))
        finally:
            c.close()


def test_a_stop_while_a_timer_query_waits_closes_its_connection(
        service_setup):
    """The worker's timers give their connection back as it exits
    (kore_worker_teardown, src/app/main.c): stopped while its purge
    waits on a lock, the instance closes that connection too. Kore
    closed only the pooled ones, and LeakSanitizer (make sanitize-test)
    reported the purge's; this suite runs under it there."""
    name = unique_name("dt-stop")
    inst = start_instance("downtime-stop", "psd2_instance %s\n"
                          "psd2_purge_interval 1\nworkers 1\n" % name, 5)
    holder = db()
    stopped = False
    try:
        cur = holder.cursor()
        cur.execute("BEGIN")
        cur.execute("LOCK TABLE pushed_request IN ACCESS EXCLUSIVE MODE")
        watch = db()
        try:
            deadline = time.time() + 20
            while True:
                with watch.cursor() as w:
                    w.execute("SELECT count(*) FROM pg_stat_activity "
                              "WHERE wait_event_type = 'Lock' AND "
                              "query LIKE '%psd2_purge%'")
                    if w.fetchone()[0] > 0:
                        break
                assert time.time() < deadline, inst.tail()
                time.sleep(0.2)
        finally:
            watch.close()
        stopped = True
        psd2_fixtures._stop(inst)
    finally:
        cur.execute("ROLLBACK")
        holder.close()
        if not stopped:
            psd2_fixtures._stop(inst)
    assert "worker [wrk 1] exited" in inst.log_text()
