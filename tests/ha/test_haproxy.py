"""Two psd2gate instances behind HAProxy on one PostgreSQL (issue 11):
the whole OAuth flow with every request going to the other instance
than the one before (login page on one, password and TOTP on the other,
consent, token, AIS on both, refresh, revoke). Nothing in a worker's
memory is needed by another instance: the login form's state is sealed
under the shared key files, every step is recorded in the database."""

import pytest
import requests

from ha_lib import HAProxy, Instance, ha_port
from psd2lib import (ACCOUNT_LIST, PsuBrowser, authorize_url, location_params,
                     make_client, make_psu, register_tokens)


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


def test_oauth_flow_alternating_instances(pair, signer):
    a, b, lb = pair
    alt = Alternation()
    client = make_client()
    psu = make_psu(2)
    close = {"Connection": "close"}

    br = PsuBrowser(lb.url, headers=close)
    url = authorize_url(lb.url, client.client_id, client.redirect_uri,
                        "ACCOUNT_INFORMATION", "st-ha")
    r = alt.check(br.authorize(url), "authorize (login page)")
    assert r.status_code == 200 and br.page.form("login-form") is not None
    r = alt.check(br.submit_login(psu.username, psu.password), "password")
    assert r.status_code == 200 and br.page.form("otp-form") is not None, \
        r.text[:500]
    r = alt.check(br.submit_otp(psu.totp()), "TOTP")
    assert r.status_code == 200 and br.page.form("consent-form") is not None
    r = alt.check(br.submit_consent("approve"), "consent")
    assert r.status_code == 302, r.text[:500]
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

    r = alt.check(token({"grant_type": "refresh_token",
                         "refresh_token": tok["refresh_token"]}), "refresh")
    assert r.status_code == 200, r.text
    # The spent refresh token, presented at the other instance: refused
    # there too (and its family revoked), as one instance would.
    r = alt.check(token({"grant_type": "refresh_token",
                         "refresh_token": tok["refresh_token"]}),
                  "refresh replayed")
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    assert len(alt.seen) == 9
    # And the instance that HAProxy named logged the step.
    paths = {"authorize (login page)": "/auth/oauth/authorize",
             "password": "/auth/login", "TOTP": "/auth/login/otp",
             "consent": "/auth/oauth/consent", "token": "/auth/oauth/token"}
    for what, srv in alt.seen:
        if what in paths:
            inst = a if srv == "a" else b
            assert "path=%s status=" % paths[what] in inst.log_text(), what
