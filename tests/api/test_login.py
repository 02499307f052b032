"""POST /auth/login and /auth/login/otp: generic failures, lock, TOTP,
CSRF binding."""

import secrets

import pytest

import psd2lib
from psd2lib import (MAIN_URL, Page, PsuBrowser, authorize_url,
                     sandbox_client, totp_at, current_step)
from test_authorize import assert_security_headers

SC = sandbox_client()


def login_url(state="st-login", **extra):
    return authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                         "ACCOUNT_INFORMATION", state, **extra)


def fresh_browser():
    b = PsuBrowser()
    r = b.authorize(login_url())
    assert r.status_code == 200, r.text[:500]
    return b


def generic_message(b):
    msgs = b.page.error_messages()
    assert len(msgs) == 1, "expected one <p class=error role=alert>: %r" % (
        msgs,)
    assert msgs[0]
    return msgs[0]


def test_login_success_shows_totp_page(psu_factory):
    psu = psu_factory()
    b = fresh_browser()
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 200
    assert_security_headers(r)
    f = b.page.form("otp-form")
    assert f is not None
    assert f.action == "/auth/login/otp"
    assert f.method == "post"
    otp = f.input("otp")
    assert otp is not None
    assert otp.get("autocomplete") == "one-time-code"
    assert otp.get("inputmode") == "numeric"
    assert otp.get("id") and b.page.label_for(otp.get("id")) is not None
    assert f.button(ident="otp-submit") is not None
    h = f.hidden()
    assert h.get("authreq") and h.get("csrf")
    assert "step" in h
    assert b.page.form("login-form") is None


def test_failures_share_one_message(psu_factory):
    psu = psu_factory()
    b = fresh_browser()
    r = b.submit_login("nobody-" + secrets.token_hex(4), psu.password)
    assert r.status_code == 401
    assert_security_headers(r)
    m_unknown = generic_message(b)
    assert b.page.form("login-form") is not None
    r = b.submit_login(psu.username, "wrong-" + secrets.token_hex(4))
    assert r.status_code == 401
    m_wrong = generic_message(b)
    r = b.submit_login(psu.username, "")
    assert r.status_code == 401
    m_empty = generic_message(b)
    assert m_unknown == m_wrong == m_empty
    # The message names neither element.
    low = m_wrong.lower()
    assert psu.username not in m_wrong
    # Failures do not leak the username back into the field's error state
    # in a way that differs between cases: same form fields present.
    assert b.page.form("login-form").input("password") is not None


def test_username_is_case_and_space_exact(psu_factory):
    psu = psu_factory()
    b = fresh_browser()
    r = b.submit_login(psu.username.upper(), psu.password)
    assert r.status_code == 401
    r = b.submit_login(psu.username, psu.password + " ")
    assert r.status_code == 401


def test_login_form_after_failure_still_works(psu_factory):
    psu = psu_factory()
    b = fresh_browser()
    assert b.submit_login(psu.username, "nope").status_code == 401
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 200
    assert b.page.form("otp-form") is not None


def lock(psu, b):
    for i in range(5):
        r = b.submit_login(psu.username, "wrong-%d" % i)
        assert r.status_code == 401, "attempt %d: %d" % (i + 1, r.status_code)


def test_five_failures_lock_the_psu(psu_factory):
    psu = psu_factory()
    b = fresh_browser()
    lock(psu, b)
    generic = generic_message(b)
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 403
    assert_security_headers(r)
    assert "locked" in b.page.by_id, r.text[:1000]
    assert b.page.form("otp-form") is None
    # A wrong password while locked: the generic 401, no lock shown.
    r = b.submit_login(psu.username, "still-wrong")
    assert r.status_code == 401
    assert "locked" not in b.page.by_id
    assert generic_message(b) == generic
    # A fresh browser sees the lock too (it is the PSU's, not a session's).
    b2 = fresh_browser()
    r = b2.submit_login(psu.username, psu.password)
    assert r.status_code == 403 and "locked" in b2.page.by_id


def test_four_failures_then_success_resets(psu_factory):
    """Four failures, then a complete login (password and TOTP: the
    authentication succeeded) resets the count."""
    psu = psu_factory()
    b = fresh_browser()
    for i in range(4):
        assert b.submit_login(psu.username, "bad%d" % i).status_code == 401
    assert b.submit_login(psu.username, psu.password).status_code == 200
    r = b.submit_otp(psu.totp())
    assert r.status_code == 200 and b.page.form("consent-form") is not None
    # Counter reset: four more failures do not lock.
    b = fresh_browser()
    for i in range(4):
        assert b.submit_login(psu.username, "bad%d" % i).status_code == 401
    assert b.submit_login(psu.username, psu.password).status_code == 200


def test_lock_of_one_psu_leaves_others(psu_factory):
    a, other = psu_factory(), psu_factory()
    b = fresh_browser()
    lock(a, b)
    r = b.submit_login(other.username, other.password)
    assert r.status_code == 200


def test_psd2ctl_unlock(psu_factory):
    psu = psu_factory()
    b = fresh_browser()
    lock(psu, b)
    assert b.submit_login(psu.username, psu.password).status_code == 403
    psd2lib.psd2ctl("psu", "unlock", psu.username)
    b = fresh_browser()
    assert b.submit_login(psu.username, psu.password).status_code == 200


# -- TOTP ------------------------------------------------------------------

def to_otp(psu):
    b = fresh_browser()
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 200 and b.page.form("otp-form") is not None
    return b


def test_right_code_shows_consent(psu_factory):
    psu = psu_factory()
    b = to_otp(psu)
    r = b.submit_otp(psu.totp())
    assert r.status_code == 200
    assert b.page.form("consent-form") is not None
    assert_security_headers(r)


def test_wrong_code_is_401_with_generic_message(psu_factory):
    psu = psu_factory()
    b = to_otp(psu)
    good = totp_at(psu.totp_secret, current_step())
    wrong = "%06d" % ((int(good) + 500000) % 1000000)
    r = b.submit_otp(wrong)
    assert r.status_code == 401
    assert_security_headers(r)
    assert b.page.form("otp-form") is not None
    m1 = generic_message(b)
    # Two more (three failures in all: five would lock the PSU).
    for bad in ("12345", "abcdef"):
        r = b.submit_otp(bad)
        assert r.status_code == 401, bad
        assert b.page.form("otp-form") is not None
        assert generic_message(b) == m1
    # The right code still works afterwards.
    r = b.submit_otp(psu.totp())
    assert r.status_code == 200 and b.page.form("consent-form") is not None


def test_code_from_far_past_refused(psu_factory):
    psu = psu_factory()
    b = to_otp(psu)
    r = b.submit_otp(totp_at(psu.totp_secret, current_step() - 10))
    assert r.status_code == 401


def test_totp_code_accepted_once(psu_factory):
    psu = psu_factory()
    code = psu.totp()
    b = to_otp(psu)
    assert b.submit_otp(code).status_code == 200
    b2 = to_otp(psu)
    r = b2.submit_otp(code)
    assert r.status_code == 401
    assert b2.page.form("otp-form") is not None
    assert b2.page.form("consent-form") is None
    # A new code (the next step, within the allowed drift) works.
    r = b2.submit_otp(psu.totp())
    assert r.status_code == 200 and b2.page.form("consent-form") is not None


def test_session_cookie_after_totp_is_httponly_lax(psu_factory):
    psu = psu_factory()
    b = to_otp(psu)
    r = b.submit_otp(psu.totp())
    assert r.status_code == 200
    cookies = psd2lib.set_cookie_headers(r)
    assert cookies, "no session cookie set after the TOTP step"
    for c in cookies:
        attrs = [a.strip().lower() for a in c.split(";")[1:]]
        assert "httponly" in attrs, c
        assert "samesite=lax" in attrs, c
        assert "secure" not in attrs, c


def test_otp_step_without_password_step_refused(psu_factory):
    """The otp form's hidden 'step' from one PSU's login cannot be forged."""
    psu = psu_factory()
    b = fresh_browser()
    f = b.page.form("login-form")
    data = f.hidden()
    data.update({"otp": psu.totp(), "step": "forged" + "A" * 40})
    r = b.post("/auth/login/otp", data)
    assert r.status_code in (400, 401, 403)
    assert b.page is None or b.page.form("consent-form") is None


# -- CSRF ------------------------------------------------------------------

NOCHANGE_EXCLUDE = ("audit", "rate_counter")


def assert_refused(b, r):
    assert r.status_code == 403, (r.status_code, r.text[:500])
    assert_security_headers(r)
    assert b.page is None or (b.page.form("otp-form") is None and
                              b.page.form("consent-form") is None)


def csrf_cases(psu):
    """Yields (name, browser, data) of login posts with bad CSRF."""
    # Missing csrf field.
    b = fresh_browser()
    d = b.page.form("login-form").hidden()
    d.pop("csrf")
    yield "missing csrf", b, d
    # Forged csrf.
    b = fresh_browser()
    d = b.page.form("login-form").hidden()
    d["csrf"] = d["csrf"][:-4] + ("AAAA" if not d["csrf"].endswith("AAAA")
                                  else "BBBB")
    yield "forged csrf", b, d
    # Empty csrf.
    b = fresh_browser()
    d = b.page.form("login-form").hidden()
    d["csrf"] = ""
    yield "empty csrf", b, d
    # csrf of page A with the authreq (and cookie) of page B, same browser.
    b = PsuBrowser()
    b.authorize(login_url("state-A"))
    page_a = b.page.form("login-form").hidden()
    b.authorize(login_url("state-B"))
    page_b = b.page.form("login-form").hidden()
    d = dict(page_b)
    d["csrf"] = page_a["csrf"]
    yield "csrf of another page", b, d
    # Both fields from a page another browser loaded: our cookie is ours.
    other = fresh_browser()
    b = fresh_browser()
    yield "fields of another browser", b, other.page.form("login-form").hidden()
    # No pre-login cookie at all.
    src = fresh_browser()
    b = PsuBrowser()
    yield "no pre-login cookie", b, src.page.form("login-form").hidden()
    # Missing authreq.
    b = fresh_browser()
    d = b.page.form("login-form").hidden()
    d.pop("authreq")
    yield "missing authreq", b, d


def csrf_round(psu, dbinfo):
    """Posts every bad-CSRF case (wrong and right password); returns the
    tables written meanwhile."""
    before = psd2lib.db_rows(dbinfo, exclude=NOCHANGE_EXCLUDE)
    n = 0
    for name, b, data in csrf_cases(psu):
        for pw in ("wrong-password", psu.password):
            d = dict(data)
            d.update({"username": psu.username, "password": pw})
            r = b.post("/auth/login", d)
            ok = (400, 403) if name == "missing authreq" else (403,)
            assert r.status_code in ok, "%s (%s): %d %s" % (
                name, "right pw" if pw == psu.password else "wrong pw",
                r.status_code, r.text[:300])
            assert b.page is None or b.page.form("otp-form") is None, name
            n += 1
    assert n >= 10
    after = psd2lib.db_rows(dbinfo, exclude=NOCHANGE_EXCLUDE)
    return psd2lib.rows_written(before, after)


def test_csrf_refused_and_nothing_changes(psu_factory, dbinfo):
    psu = psu_factory()
    # Housekeeping may write at any moment: fail only if every round saw
    # a write.
    seen = []
    for attempt in range(3):
        written = csrf_round(psu, dbinfo)
        if not written:
            break
        seen.append(written)
    else:
        pytest.fail("CSRF-refused posts wrote to %s" % seen)
    # Up to 21 wrong passwords were refused before counting: no lock.
    b = fresh_browser()
    r = b.submit_login(psu.username, psu.password)
    assert r.status_code == 200, "PSU locked or login broken after CSRF " \
        "refusals: %d" % r.status_code


def test_otp_post_without_csrf_refused(psu_factory):
    psu = psu_factory()
    b = to_otp(psu)
    code = psu.totp()
    r = b.submit_otp(code, drop=("csrf",))
    assert_refused(b, r)
    b2 = to_otp(psu)
    r = b2.submit_otp(code, overrides={"csrf": "x" * 43})
    assert_refused(b2, r)


def test_otp_post_with_other_browsers_fields_refused(psu_factory):
    psu = psu_factory()
    victim = to_otp(psu)
    fields = victim.page.form("otp-form").hidden()
    attacker = fresh_browser()
    d = dict(fields)
    d["otp"] = psu.totp()
    r = attacker.post("/auth/login/otp", d)
    assert r.status_code in (401, 403)
    assert attacker.page is None or attacker.page.form("consent-form") is None


def test_consent_post_without_csrf_refused(psu_factory):
    psu = psu_factory()
    c = sandbox_client()
    b = PsuBrowser()
    b.login_to_consent(login_url("st-c"), psu)
    consent_page = b.page
    r = b.submit_consent("approve", drop=("csrf",))
    assert r.status_code == 403
    assert "Location" not in r.headers
    b.page = consent_page
    r = b.submit_consent("approve", overrides={"csrf": "A" * 43})
    assert r.status_code == 403
    assert "Location" not in r.headers
    # The real form still works: the refusals changed nothing.
    b.page = consent_page
    r = b.submit_consent("approve")
    assert r.status_code == 303
    assert "code" in psd2lib.location_params(r)[1]


def test_five_wrong_totp_codes_lock(psu_factory):
    """Wrong second factors count as failures too (no brute force of the
    six digits): after five, the right password shows the lock."""
    psu = psu_factory()
    b = to_otp(psu)
    good = totp_at(psu.totp_secret, current_step())
    for i in range(5):
        wrong = "%06d" % ((int(good) + 1 + i * 7919) % 1000000)
        r = b.submit_otp(wrong)
        assert r.status_code in (401, 403), (i, r.status_code)
    r = b.submit_otp(psu.totp())
    assert b.page is None or b.page.form("consent-form") is None
    b2 = fresh_browser()
    r = b2.submit_login(psu.username, psu.password)
    assert r.status_code == 403 and "locked" in b2.page.by_id
