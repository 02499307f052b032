"""psd2-deviced exposes its own metrics: a Prometheus text
file for the node exporter's textfile collector, rewritten each second:
devices present and seen by this daemon, challenge ends it wrote, its
database connection. The service's /metrics shows the same challenge
from the database."""

import psycopg2
import pytest

from ha_lib import (Daemon, Instance, ha_port, promtool_check, samples,
                    value, wait_for)
from psd2lib import make_psu, psd2ctl


@pytest.fixture(scope="module")
def inst(service_setup):
    srv = Instance("devmetrics", ha_port(4), ha_port(5))
    srv.start()
    yield srv
    srv.stop()
    assert not srv.problems, srv.problems


def test_daemon_metrics_file(inst, dbinfo):
    psu = make_psu(1)
    serial = "HAM%05d" % (abs(hash(psu.username)) % 10 ** 5)
    d = Daemon("devd", [serial]).start()
    try:
        def present():
            s = d.metrics() and samples(d.metrics())
            return s and value(s, "psd2_deviced_devices_present",
                               host="devd") == 1 and s
        s = wait_for(present, 20, "the device in the metrics file")
        promtool_check(d.metrics())
        assert value(s, "psd2_deviced_devices_seen", host="devd") == 1
        assert value(s, "psd2_deviced_database_connected", host="devd") == 1
        assert value(s, "psd2_deviced_database_connects_total",
                     host="devd") == 1

        psd2ctl("device", "enrol", serial)
        psd2ctl("device", "break-glass-assign", serial, psu.username,
                "--reason", "test setup")
        conn = psycopg2.connect(dbinfo)
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute("SELECT id FROM psu WHERE username = %s",
                    (psu.username,))
        psu_id = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
            "amount_minor, currency, payee_name, payee_iban, deadline) "
            "VALUES (%s, %s, %s, 12345, 'EUR', 'Metrics Creditor', "
            "'DE89370400440532013000', now() + interval '60 seconds') "
            "RETURNING id", (serial, psu_id, bytes(range(32))))
        cid = cur.fetchone()[0]
        wait_for(lambda: "123.45" in d.emu("show", serial).stdout or
                 "123,45" in d.emu("show", serial).stdout, 20,
                 "the challenge on the display")
        assert d.emu("pin", serial, "1234").returncode == 0
        assert d.emu("press", serial).returncode == 0

        def done():
            cur.execute("SELECT status, outcome FROM device_challenge "
                        "WHERE id = %s", (cid,))
            return cur.fetchone() == ("done", "approved")
        wait_for(done, 20, "the approved outcome in the database")
        conn.close()
        wait_for(lambda: value(samples(d.metrics()),
                               "psd2_deviced_challenge_ends_total",
                               host="devd", outcome="approved") == 1,
                 5, "the approved end in the metrics file")
        promtool_check(d.metrics())
        svc = samples(inst.scrape())
        assert value(svc, "psd2_device_challenges", status="done",
                     outcome="approved") >= 1
    finally:
        d.stop()
