"""Every line about a request carries its request id, and so does each of
its SQL statements (a leading comment, seen in pg_stat_activity), so one
request can be followed from the log through PostgreSQL. A
made-up id (no or a malformed x-request-id) lives in the request (Kore
patch 0021): two requests in flight in one worker keep theirs."""

import re
import threading
import time
import uuid

import psycopg2
import pytest

from ha_lib import Instance, ha_port
from psd2lib import (as_superuser, make_client, revoke_request,
                     token_request)

RID_SQL = re.compile(r"^/\* rid=([0-9a-f-]{36}) \*/ ")


@pytest.fixture(scope="module")
def inst(service_setup):
    # One worker: the two requests below are in flight in the same one.
    srv = Instance("reqid", ha_port(2), ha_port(3), extra="workers\t1\n")
    srv.start()
    yield srv
    srv.stop()
    assert not srv.problems, srv.problems


def blocked_statements(dbinfo, n, timeout=20):
    """The texts of n statements of the service waiting for a lock."""
    deadline = time.time() + timeout
    with psycopg2.connect(as_superuser(dbinfo)) as conn, \
            conn.cursor() as cur:
        while True:
            cur.execute("SELECT query FROM pg_stat_activity WHERE "
                        "wait_event_type = 'Lock' AND query LIKE '/* rid=%%'")
            rows = [r[0] for r in cur.fetchall()]
            conn.rollback()
            if len(rows) >= n or time.time() > deadline:
                return rows
            time.sleep(0.1)


def request_lines(text):
    out = {}
    for m in re.finditer(r"request id=(\S+) method=(\S+) path=(\S+) "
                         r"status=(\d+)", text):
        out.setdefault(m.group(3), []).append(m.group(1))
    return out


def test_request_id_from_log_through_postgresql(inst, dbinfo):
    c1, c2 = make_client(), make_client()
    theirs = str(uuid.uuid4())
    results = {}
    log_from = inst.log_size()

    lock = psycopg2.connect(dbinfo)
    cur = lock.cursor()
    cur.execute("LOCK TABLE oauth_client IN ACCESS EXCLUSIVE MODE")
    try:
        def grant():
            results["token"] = token_request(
                {"grant_type": "refresh_token", "refresh_token": "nope"},
                c1, base=inst.url, headers={"X-Request-ID": theirs})

        def revoke():
            # A malformed x-request-id is not taken: one is made up.
            results["revoke"] = revoke_request(
                {"token": "nope"}, c2, base=inst.url)
        threads = [threading.Thread(target=grant),
                   threading.Thread(target=revoke)]
        threads[0].start()
        time.sleep(0.3)
        threads[1].start()
        rows = blocked_statements(dbinfo, 2)
    finally:
        lock.rollback()
        lock.close()
    for t in threads:
        t.join(30)
    assert results["token"].status_code == 400, results["token"].text
    assert results["revoke"].status_code == 200, results["revoke"].text

    ids = set()
    for q in rows:
        m = RID_SQL.match(q)
        assert m, q[:200]
        ids.add(m.group(1))
    assert len(rows) == 2 and len(ids) == 2, rows
    assert theirs in ids
    made_up = (ids - {theirs}).pop()

    deadline = time.time() + 5
    while True:
        lines = request_lines(inst.log_text(log_from))
        if "/auth/oauth/revoke" in lines and "/auth/oauth/token" in lines:
            break
        assert time.time() < deadline, inst.log_text(log_from)
        time.sleep(0.1)
    assert lines["/auth/oauth/token"] == [theirs]
    assert lines["/auth/oauth/revoke"] == [made_up]


def test_error_lines_carry_the_request_id(inst, dbinfo):
    """A statement that fails: the db line and the error line (with the
    errorId of the 500 body) name the request's id."""
    client = make_client()
    rid = str(uuid.uuid4())
    log_from = inst.log_size()
    conn = psycopg2.connect(dbinfo)
    conn.autocommit = True
    cur = conn.cursor()
    # The grant's first statement fails while its function is away (for
    # this one request; put back whatever happens).
    cur.execute("SELECT oid::regprocedure FROM pg_proc "
                "WHERE proname = 'token_client'")
    sig = cur.fetchone()[0]
    cur.execute("ALTER FUNCTION %s RENAME TO token_client_away" % sig)
    try:
        r = token_request({"grant_type": "refresh_token",
                           "refresh_token": "nope"}, client, base=inst.url,
                          headers={"X-Request-ID": rid})
    finally:
        cur.execute("ALTER FUNCTION %s RENAME TO token_client" %
                    sig.replace("token_client(", "token_client_away(", 1))
        conn.close()
    assert r.status_code == 500, r.text
    error_id = r.json()["errorId"]
    text = inst.log_text(log_from)
    assert re.search(r"db id=%s query: .*token_client" % rid, text), text
    assert re.search(r"error id=%s errorId=%s " % (rid, error_id), text)
    assert re.search(r"request id=%s method=POST path=/auth/oauth/token "
                     r"status=500" % rid, text)
