"""Per-address rate limits on the instance with limits on (port 18081,
conf/test-ratelimit.conf: 5 login attempts and 10 token requests a minute
per address). Each test binds its connections to a fresh loopback
address, so earlier runs and other tests do not share its counters."""

import secrets
import time

import pytest

import psd2lib
from psd2lib import (RATELIMIT_URL, MAIN_URL, PsuBrowser, authorize_url,
                     basic_auth, random_loopback, sandbox_client,
                     token_request, http_session)

SC = sandbox_client()


@pytest.fixture
def rl(ratelimit_server):
    """The counters are per calendar minute (rate_hit): a test's requests
    must all fall into one, or the limit starts again halfway (seen under
    the sanitizer build). Start with at least 30 s of the minute left."""
    left = 60 - time.time() % 60
    if left < 30:
        time.sleep(left + 0.5)
    return ratelimit_server


def login_attempts(base, n, source, username=None):
    b = PsuBrowser(base, source=source)
    r = b.authorize(authorize_url(base, SC.client_id, SC.redirect_uri,
                                  "ACCOUNT_INFORMATION", "rl"))
    assert r.status_code == 200
    statuses = []
    form_page = b.page
    for i in range(n):
        b.page = form_page
        r = b.submit_login(username or "nobody-" + secrets.token_hex(4),
                           "wrong")
        statuses.append(r.status_code)
        if r.status_code == 401:
            form_page = b.page
    return statuses


def test_login_rate_limit_429(rl):
    src = random_loopback()
    statuses = login_attempts(RATELIMIT_URL, 7, src)
    assert statuses[:5] == [401] * 5, statuses
    assert statuses[5:] == [429, 429], statuses


def test_login_rate_limit_is_per_address(rl, psu_factory):
    src = random_loopback()
    login_attempts(RATELIMIT_URL, 6, src)
    # Another address is not limited; a right password logs in.
    psu = psu_factory()
    b = PsuBrowser(RATELIMIT_URL, source=random_loopback())
    b.authorize(authorize_url(RATELIMIT_URL, SC.client_id, SC.redirect_uri,
                              "ACCOUNT_INFORMATION", "rl"))
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 200
    assert b.page.form("otp-form") is not None


def test_limited_right_password_is_429_not_login(rl, psu_factory):
    psu = psu_factory()
    src = random_loopback()
    login_attempts(RATELIMIT_URL, 5, src)
    b = PsuBrowser(RATELIMIT_URL, source=src)
    b.authorize(authorize_url(RATELIMIT_URL, SC.client_id, SC.redirect_uri,
                              "ACCOUNT_INFORMATION", "rl"))
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 429
    assert b.page is None or b.page.form("otp-form") is None


def test_token_rate_limit_429(rl):
    s = http_session(random_loopback())
    statuses = []
    for i in range(12):
        r = token_request({"grant_type": "authorization_code",
                           "code": "c" * 36,
                           "redirect_uri": SC.redirect_uri}, SC,
                          base=RATELIMIT_URL, session=s)
        statuses.append(r.status_code)
    assert statuses[:10] == [400] * 10, statuses
    assert statuses[10:] == [429, 429], statuses


def test_main_instance_has_no_token_limit():
    s = http_session(random_loopback())
    for i in range(15):
        r = token_request({"grant_type": "authorization_code",
                           "code": "c" * 36,
                           "redirect_uri": SC.redirect_uri}, SC,
                          base=MAIN_URL, session=s)
        assert r.status_code == 400, (i, r.status_code)
