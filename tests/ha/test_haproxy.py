"""Two psd2gate instances behind HAProxy on one PostgreSQL:
the whole OAuth flow with every request going to the other instance
than the one before (login page on one, password and TOTP on the other,
consent, token, AIS on both, a decoupled payment initiated on one and
seen decided on the other, refresh, revoke), and a decoupled payment
started through one instance, confirmed on the emulated authenticator
(psd2-deviced under umockdev) and decided and visible (ACSC) through the
other. Nothing in a worker's
memory is needed by another instance: the login form's state is sealed
under the shared key files, every step is recorded in the database."""

import re
import time
import uuid

import pytest
import requests

import psd2lib
from ha_lib import Daemon, HAProxy, Instance, ha_port
from ha_pay import (confirm_on_device, initiate, make_payer, pay, set_balance,
                    enrol, status, wait_decided)
from psd2lib import (ACCOUNT_LIST, PsuBrowser, authorize_url, location_params,
                     make_client, make_psu, register_tokens)


SERIALS = ["HAP%s" % uuid.uuid4().hex[:8].upper() for _ in range(2)]


@pytest.fixture(scope="module")
def pair(service_setup):
    a = Instance("ha-a", ha_port(6), ha_port(7))
    b = Instance("ha-b", ha_port(8), ha_port(9))
    a.start()
    b.start()
    lb = HAProxy("haproxy", ha_port(10), [("a", a.port), ("b", b.port)])
    lb.start()
    yield a, b, lb
    lb.stop()
    for s in (a, b):
        s.stop()
        assert not s.problems, s.problems


@pytest.fixture(scope="module")
def daemon(service_setup):
    d = Daemon("devd-haproxy", SERIALS).start()
    yield d
    d.stop()


def test_decoupled_payment_across_instances(pair, daemon, signer, dbinfo):
    """Initiated through a, confirmed on the device, ACSC through b (and
    the payment itself read through b)."""
    a, b, _ = pair
    payer = make_payer(a.url, daemon, SERIALS[1], dbinfo)
    pid = pay(signer, daemon, payer, a.url, status_base=b.url,
              amount="23.45")
    r = signer.for_token(payer.token).request(
        "GET", "%s/auth/v1/psd2/payments/sepa-credit-transfers/%s" %
        (b.url, pid), headers={"Authorization": "Bearer " + payer.token,
                               "PSU-IP-Address": "192.0.2.10"}, timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["transactionStatus"] == "ACSC"
    assert r.json()["instructedAmount"] == {"currency": "EUR",
                                            "amount": "23.45"}
    # And the other way round: through b, decided and seen through a.
    pay(signer, daemon, payer, b.url, status_base=a.url, amount="24.56")


class Alternation:
    """Checks that each answer came from the other instance than the one
    before (each request on a connection of its own: round robin)."""

    def __init__(self):
        self.seen = []

    def check(self, r, what):
        srv = r.headers.get("X-Served-By")
        assert srv in ("a", "b"), (what, r.headers)
        if self.seen:
            assert srv != self.seen[-1][1], (what, self.seen)
        self.seen.append((what, srv))
        return r


def test_oauth_flow_alternating_instances(pair, daemon, signer, dbinfo):
    a, b, lb = pair
    alt = Alternation()
    client = make_client()
    psu = make_psu(2)
    set_balance(dbinfo, psu.accounts[0][0], 10 ** 7)
    enrol(daemon, SERIALS[0], psu.username, dbinfo)
    close = {"Connection": "close"}

    br = PsuBrowser(lb.url, headers=close)
    url = authorize_url(lb.url, client.client_id, client.redirect_uri,
                        "ACCOUNT_INFORMATION PAYMENT_INITIATION", "st-ha")
    r = alt.check(br.authorize(url), "authorize (login page)")
    assert r.status_code == 200 and br.page.form("login-form") is not None
    r = alt.check(br.submit_login(psu.username, psu.password), "password")
    assert r.status_code == 200 and br.page.form("otp-form") is not None, \
        r.text[:500]
    r = alt.check(br.submit_otp(psu.totp()), "TOTP")
    assert r.status_code == 200 and br.page.form("consent-form") is not None
    r = alt.check(br.submit_consent("approve"), "consent")
    assert r.status_code == 303, r.text[:500]
    _, q = location_params(r)
    assert q["state"] == ["st-ha"]
    code = q["code"][0]

    def token(data):
        r = requests.post(lb.url + "/auth/oauth/token", data=data,
                          auth=(client.client_id, client.secret),
                          headers=close, timeout=30)
        if r.status_code == 200:
            register_tokens(r.json(), client)
        return r

    r = alt.check(token({"grant_type": "authorization_code", "code": code,
                         "redirect_uri": client.redirect_uri}), "token")
    assert r.status_code == 200, r.text
    tok = r.json()

    ibans = {iban for iban, _ in psu.accounts}
    for what in ("AIS on one", "AIS on the other"):
        h = {"Content-Type": "application/json", "PSU-IP-Address":
             "192.0.2.10", "Authorization": "Bearer " + tok["access_token"],
             "Connection": "close"}
        r = alt.check(signer.for_token(tok["access_token"]).request(
            "GET", lb.url + ACCOUNT_LIST, headers=h, timeout=30), what)
        assert r.status_code == 200, r.text
        assert {x["iban"] for x in r.json()["accounts"]} == ibans

    # A decoupled payment initiated on one instance, confirmed on the
    # authenticator, its decided status read on the other.
    class P:
        token = tok["access_token"]
        iban = psu.accounts[0][0]
    r = alt.check(initiate(signer, lb.url, P, "34.56",
                           extra={"Connection": "close"}),
                  "payment initiation")
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    confirm_on_device(daemon, SERIALS[0], "34.56")
    # Decided (polled on an instance directly, not to break the turns).
    wait_decided(signer, a.url, P, pid)
    r = alt.check(status(signer, lb.url, P, pid,
                         extra={"Connection": "close"}), "payment status")
    assert r.status_code == 200 and \
        r.json()["transactionStatus"] == "ACSC", r.text

    r = alt.check(token({"grant_type": "refresh_token",
                         "refresh_token": tok["refresh_token"]}), "refresh")
    assert r.status_code == 200, r.text
    # The spent refresh token, presented at the other instance: refused
    # there too (and its family revoked), as one instance would.
    r = alt.check(token({"grant_type": "refresh_token",
                         "refresh_token": tok["refresh_token"]}),
                  "refresh replayed")
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    assert len(alt.seen) == 11
    # And the instance that HAProxy named logged the step.
    paths = {"authorize (login page)": "/auth/oauth/authorize",
             "password": "/auth/login", "TOTP": "/auth/login/otp",
             "consent": "/auth/oauth/consent", "token": "/auth/oauth/token",
             "payment initiation":
             "/auth/v1/psd2/payments/sepa-credit-transfers"}
    for what, srv in alt.seen:
        if what in paths:
            inst = a if srv == "a" else b
            assert "path=%s status=" % paths[what] in inst.log_text(), what


def test_kpi_minutes_per_instance(pair, dbinfo):
    """Each instance writes its KPI minutes under its own name
    (psd2_instance), so two instances on one database neither overwrite
    nor double each other's: the account-list answers in each one's
    kpi_minute rows are those of its own request log (the paths of the
    class ais, src/metrics/kpi_class.c)."""
    ais = re.compile(r"path=(/auth/v1/psd2/(account|consents)/|"
                     r"/xs2a/v1/(consents|accounts|card-accounts))")
    a, b, lb = pair
    c = psd2lib.db_connect(dbinfo)
    try:
        deadline = time.time() + 30
        while True:
            got, want = {}, {}
            for inst in (a, b):
                want[inst.instance] = len(ais.findall(inst.log_text()))
                cur = c.cursor()
                cur.execute("SELECT coalesce(sum(requests), 0) FROM "
                            "kpi_minute WHERE instance = %s AND class = "
                            "'ais'", (inst.instance,))
                got[inst.instance] = int(cur.fetchone()[0])
            if got == want or time.time() > deadline:
                break
            time.sleep(1)
        assert got == want
        assert all(n > 0 for n in want.values()), want
    finally:
        c.close()

