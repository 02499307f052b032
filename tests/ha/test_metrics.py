"""Prometheus metrics: a listener of their own, one answer for
all workers of an instance (shared memory mapped by the parent before the
workers fork), the families conf/README.md names, `promtool check metrics`."""

import socket
import threading

import psycopg2
import pytest
import requests

from ha_lib import (Instance, ha_port, promtool_check, samples, total,
                    value, worker_pids_in_log)
from psd2lib import exchange_code, make_client, make_psu, run_code_flow, \
    token_request

HTTP = "psd2_http_request_duration_seconds"


@pytest.fixture(scope="module")
def inst(service_setup):
    # One connection per accept: the workers take turns sooner, so a
    # short test sees both answer.
    srv = Instance("metrics", ha_port(0), ha_port(1),
                   extra="worker_accept_threshold\t1\n")
    srv.start()
    yield srv
    srv.stop()
    assert not srv.problems, srv.problems


def test_metrics_not_on_public_listener(inst):
    r = requests.get(inst.url + "/metrics", timeout=10)
    assert r.status_code == 404, r.text[:200]
    assert "psd2_" not in r.text
    # Whatever the Host header says: routes are per listener.
    r = requests.get(inst.url + "/metrics", headers={"Host": "metrics"},
                     timeout=10)
    assert r.status_code == 404
    # And the metrics listener serves nothing of the API.
    r = requests.get(inst.metrics_url.replace("/metrics", "/health"),
                     timeout=10)
    assert r.status_code == 404
    assert "psd2_http_request_duration_seconds" in inst.scrape()


def raw_get(port, path, n):
    """n GET requests on n connections held open together (so that both
    workers accept some), each answered before any is closed."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=10)
             for _ in range(n)]
    try:
        for s in socks:
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n"
                       "Connection: close\r\n\r\n" % path).encode())
        statuses = []
        for s in socks:
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            statuses.append(int(data.split(b" ", 2)[1]))
        return statuses
    finally:
        for s in socks:
            s.close()


def test_one_answer_covers_every_worker(inst):
    before = samples(inst.scrape())
    log_from = inst.log_size()
    sent = 0
    threads = []
    results = []
    lock = threading.Lock()

    def burst():
        st = raw_get(inst.port, "/health", 40)
        with lock:
            results.extend(st)

    for _ in range(4):
        t = threading.Thread(target=burst)
        threads.append(t)
        t.start()
    for t in threads:
        t.join(60)
    sent = len(results)
    assert sent == 160 and set(results) == {200}, results
    # Both workers answered some (read from their own log lines).
    assert len(worker_pids_in_log(inst.log_text(log_from), "/health")) == 2
    after = samples(inst.scrape())
    lbl = dict(route="/health", method="GET", status="200")
    assert value(after, HTTP + "_count", **lbl) - \
        value(before, HTTP + "_count", **lbl) == sent
    assert value(after, HTTP + "_bucket", le="+Inf", **lbl) == \
        value(after, HTTP + "_count", **lbl)


def test_families_and_promtool(inst, dbinfo):
    before = samples(inst.scrape())
    client = make_client()
    psu = make_psu(1)
    code, _, _, _ = run_code_flow(client, psu, base=inst.url)
    r = exchange_code(client, code, base=inst.url)
    assert r.status_code == 200, r.text
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": r.json()["refresh_token"]},
                      client, base=inst.url)
    assert r.status_code == 200, r.text
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": "no-such-token"}, client,
                      base=inst.url)
    assert r.status_code == 400
    r = requests.get(inst.url + "/no/such/route", timeout=10)
    assert r.status_code == 404

    text = inst.scrape()
    promtool_check(text)
    after = samples(text)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    g = "psd2_token_grants_total"
    assert delta(g, grant_type="authorization_code", outcome="ok") == 1
    assert delta(g, grant_type="refresh_token", outcome="ok") == 1
    assert delta(g, grant_type="refresh_token", outcome="invalid_grant") == 1
    assert delta("psd2_sca_total", kind="login", outcome="ok") == 1
    assert delta("psd2_sca_total", kind="consent", outcome="ok") == 1
    # The payment counter is declared, at zero until payments exist.
    assert ("psd2_sca_total", frozenset({("kind", "payment"),
                                         ("outcome", "ok")})) in after
    tok = dict(route="/auth/oauth/token", method="POST")
    assert delta(HTTP + "_count", status="200", **tok) == 2
    assert delta(HTTP + "_count", status="400", **tok) == 1
    assert delta(HTTP + "_count", route="unrouted", method="GET",
                 status="404") == 1
    # Every statement of the flow is timed, and its wait for a connection.
    q = total(after, "psd2_db_query_duration_seconds_count") - \
        total(before, "psd2_db_query_duration_seconds_count")
    w = total(after, "psd2_db_pool_wait_seconds_count") - \
        total(before, "psd2_db_pool_wait_seconds_count")
    assert q >= 6 and w >= q, (q, w)
    assert total(after, "psd2_db_query_duration_seconds_sum") > \
        total(before, "psd2_db_query_duration_seconds_sum")
    assert "psd2_db_unavailable_total" in {n for n, _ in after}


def test_device_challenges_from_database(inst, dbinfo):
    """The gauge is what the database holds, by status and outcome."""
    psu = make_psu(1)
    serial = "MET%08d" % (abs(hash(psu.username)) % 10 ** 8)
    conn = psycopg2.connect(dbinfo)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT id FROM psu WHERE username = %s",
                    (psu.username,))
        psu_id = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO device (serial, model, firmware, public_key, "
            "attestation, attestation_ok, host, status, psu_id) VALUES "
            "(%s, 'metrics', '1', %s, '\\x00', true, 'test', 'active', %s)",
            (serial, b"\x04" + b"\x01" * 64, psu_id))
        for status, outcome in (("done", "approved"), ("done", "declined"),
                                ("done", "approved"), ("pending", None)):
            cur.execute(
                "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
                "amount_minor, currency, payee_name, payee_iban, deadline, "
                "status, outcome, counter, signature) VALUES (%s, %s, %s, 100, "
                "'EUR', 'Creditor', 'DE89370400440532013000', "
                "now() + interval '1 minute', %s, %s, %s, %s)",
                (serial, psu_id, bytes(32), status, outcome,
                 1 if outcome else None, b"\x30" if outcome else None))
        cur.execute("SELECT status, coalesce(outcome, ''), count(*) "
                    "FROM device_challenge GROUP BY 1, 2")
        want = {(s, o): n for s, o, n in cur.fetchall()}
    conn.close()
    s = samples(inst.scrape())
    got = {}
    for (name, labels), v in s.items():
        if name == "psd2_device_challenges":
            d = dict(labels)
            got[(d["status"], d["outcome"])] = int(v)
    assert got == want
    assert got[("done", "approved")] >= 2
    assert value(s, "psd2_device_challenges_read") == 1


def test_payment_sca_outcomes_counted(inst, signer):
    """A payment confirmed by redirect SCA with TOTP (no authenticator)
    and a wrong code before it: psd2_sca_total{kind="payment"} rises by
    one ok and one failed, and the exposition still passes promtool."""
    import json
    import re as re_

    from psd2lib import PsuBrowser
    psu = make_psu(1)
    iban = psu.accounts[0][0]
    client = make_client(redirect_uris=("https://tpp.example/ok",))
    code, _, _, _ = run_code_flow(client, psu, "PAYMENT_INITIATION",
                                  accounts=[iban], base=inst.url)
    r = exchange_code(client, code, base=inst.url)
    assert r.status_code == 200, r.text
    tok = r.json()["access_token"]
    body = json.dumps({
        "instructedAmount": {"currency": "EUR", "amount": "1.23"},
        "debtorAccount": {"iban": iban},
        "creditorAccount": {"iban": "DE89370400440532013000"},
        "creditorName": "Max Mustermann"}).encode()
    r = signer.for_token(tok).request(
        "POST", inst.url + "/auth/v1/psd2/payments/sepa-credit-transfers",
        body=body, headers={"Content-Type": "application/json",
                            "Authorization": "Bearer " + tok,
                            "PSU-IP-Address": "192.0.2.10",
                            "TPP-Redirect-URI": "https://tpp.example/ok"},
        timeout=30, allow_redirects=False)
    assert r.status_code == 201, r.text
    href = r.json()["_links"]["scaRedirect"]["href"]
    href = href[href.index("/auth/"):]

    before = samples(inst.scrape())
    b = PsuBrowser(base=inst.url)
    b.get(inst.url + href)
    # The payment page's login is the password alone (its SCA follows).
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 303, r.text[:500]
    assert r.headers["Location"].endswith(href), r.headers
    page = b.get(inst.url + href)
    assert 'id="authorise-form"' in page.text, page.text[:2000]
    csrf = re_.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    good = psu.totp()
    wrong = "%06d" % ((int(good) + 500000) % 1000000)
    r = b.s.post(inst.url + href, data={"csrf": csrf, "otp": wrong,
                                       "lang": "en"},
                 allow_redirects=False, timeout=10)
    assert r.status_code == 401, r.text[:500]
    r = b.s.post(inst.url + href, data={"csrf": csrf, "otp": good,
                                       "lang": "en"},
                 allow_redirects=False, timeout=10)
    assert r.status_code == 303, r.text[:500]
    assert r.headers["Location"] == "https://tpp.example/ok"

    text = inst.scrape()
    promtool_check(text)
    after = samples(text)

    def delta(outcome):
        return value(after, "psd2_sca_total", kind="payment",
                     outcome=outcome) - value(before, "psd2_sca_total",
                                              kind="payment",
                                              outcome=outcome)
    assert delta("ok") == 1
    assert delta("failed") == 1
