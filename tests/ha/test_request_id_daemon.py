"""The request id reaches psd2-deviced: a payment's
x-request-id (of its initiation) is in the service's log line, in the
payment's SQL (the leading comment) and on the device challenge's row
(device_challenge.request_id, migration 105), and psd2-deviced names it
in every line about that challenge: claimed, answered. So one request is
followed from the service through PostgreSQL to the daemon."""

import re
import uuid

import psycopg2
import pytest

from ha_lib import Daemon, Instance, ha_port, wait_for
from ha_pay import confirm_on_device, initiate, make_payer, wait_decided

SERIAL = "RID%s" % uuid.uuid4().hex[:8].upper()


@pytest.fixture(scope="module")
def inst(service_setup):
    srv = Instance("reqid-dev", ha_port(18), ha_port(19))
    srv.start()
    yield srv
    srv.stop()
    assert not srv.problems, srv.problems


def test_request_id_followed_to_the_daemon(inst, signer, dbinfo):
    d = Daemon("devd-reqid", [SERIAL]).start()
    try:
        payer = make_payer(inst.url, d, SERIAL, dbinfo)
        rid = str(uuid.uuid4())
        log_from = inst.log_size()
        r = initiate(signer, inst.url, payer, "45.67", request_id=rid)
        assert r.status_code == 201, r.text
        pid = r.json()["paymentId"]
        confirm_on_device(d, SERIAL, "45.67")
        r = wait_decided(signer, inst.url, payer, pid)
        assert r.json()["transactionStatus"] == "ACSC", r.text

        # The service's log: the request line and its SQL under rid.
        text = inst.log_text(log_from)
        assert re.search(r"request id=%s method=POST path=/auth/v1/psd2/"
                         r"payments/sepa-credit-transfers status=201" % rid,
                         text), text[-2000:]
        # PostgreSQL: the challenge row of that payment carries it.
        with psycopg2.connect(dbinfo) as c, c.cursor() as cur:
            cur.execute("""SELECT c.id::text, c.request_id::text,
                p.request_id::text FROM payment p
                JOIN payment_authorisation a ON a.payment_id = p.id
                JOIN device_challenge c ON c.id = a.challenge_id
                WHERE p.id = %s""", (pid,))
            cid, crid, prid = cur.fetchone()
        assert crid == rid and prid == rid

        # The daemon: every line about the challenge names the request.
        def lines():
            return [ln for ln in d.log_text().splitlines() if cid in ln]
        wait_for(lambda: any(": approved, counter" in ln for ln in lines()),
                 10, "the daemon's line about the outcome")
        about = lines()
        assert len(about) >= 2, about
        assert all("challenge %s request id=%s " % (cid, rid) in ln
                   for ln in about), about
        assert any("claimed for device %s" % SERIAL in ln for ln in about)
    finally:
        d.stop()


def test_challenge_without_request_says_so(inst, dbinfo):
    """A challenge no request made (inserted by hand): the daemon's
    lines say 'request id=-', never another challenge's id."""
    serial = "RIE%s" % uuid.uuid4().hex[:8].upper()
    d = Daemon("devd-reqid-none", [serial]).start()
    try:
        from ha_pay import enrol
        from psd2lib import make_psu
        psu = make_psu(1)
        enrol(d, serial, psu.username, dbinfo)
        conn = psycopg2.connect(dbinfo)
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute("SELECT id FROM psu WHERE username = %s",
                    (psu.username,))
        psu_id = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
            "amount_minor, currency, payee_name, payee_iban, deadline) "
            "VALUES (%s, %s, %s, 5678, 'EUR', 'No Request', "
            "'DE89370400440532013000', now() + interval '60 seconds') "
            "RETURNING id::text", (serial, psu_id, bytes(32)))
        cid = cur.fetchone()[0]
        conn.close()
        confirm_on_device(d, serial, "56.78")
        wait_for(lambda: "challenge %s request id=- on device %s: "
                 "approved" % (cid, serial) in d.log_text(), 15,
                 "the daemon's line about the outcome")
        assert "challenge %s request id=- claimed for device %s" % (
            cid, serial) in d.log_text()
    finally:
        d.stop()
