"""Each step of the PSU's login and consent is single-use: a repeated post
(double click, back button, a re-sent form) creates nothing new and shows
the result of the first post.

- Password step: it changes nothing on success, so a repeat shows the TOTP
  page again.
- TOTP step: a repeat of the same form with the same code shows the same
  next page to the browser that holds the session the first post opened,
  with no new cookie; no second session, no failure counted. Any other
  client posting the same form (hidden fields, used code, pre-login
  cookie) gets no session: the code is refused as used, and a used code
  never counts as a failure.
- Consent step: one authorisation request gets one decision. A repeat
  while the code is unspent redirects again with the SAME code; once the
  code was exchanged (or expired) it shows a page saying the request was
  already answered, with no code (a spent code sent again would make the
  TPP's second exchange revoke its tokens). No second consent, no second
  code. A deny is final as well.
"""

import threading

import psd2lib
from psd2lib import (MAIN_URL, Page, PsuBrowser, authorize_url,
                     exchange_code, location_params, sandbox_client)

SC = sandbox_client()


def db_one(dbinfo, sql, *args):
    c = psd2lib.db_connect(dbinfo)
    try:
        cur = c.cursor()
        cur.execute(sql, args)
        return cur.fetchone()
    finally:
        c.close()


def consents_of(dbinfo, psu):
    return db_one(dbinfo, "SELECT count(*) FROM consent c JOIN psu p ON "
                  "p.id = c.psu_id WHERE p.username = %s", psu.username)[0]


def codes_of(dbinfo, psu):
    return db_one(dbinfo, "SELECT count(*) FROM auth_code a JOIN consent c "
                  "ON c.id = a.consent_id JOIN psu p ON p.id = c.psu_id "
                  "WHERE p.username = %s", psu.username)[0]


def sessions_of(dbinfo, psu):
    return db_one(dbinfo, "SELECT count(*) FROM web_session s JOIN psu p ON "
                  "p.id = s.subject_id WHERE s.subject_kind = 'psu' AND "
                  "p.username = %s", psu.username)[0]


def failures_of(dbinfo, psu):
    return db_one(dbinfo, "SELECT failed_logins FROM psu WHERE username = "
                  "%s", psu.username)[0]


def consent_form_data(b, decision="approve"):
    f = b.form("consent-form")
    data = list(f.hidden().items())
    data.append(("decision", decision))
    data += [("account", rid) for rid, _ in b.consent_accounts()]
    data.append(("validity_days", "90"))
    return data


def to_consent(psu, state="st-once"):
    b = PsuBrowser()
    b.login_to_consent(authorize_url(MAIN_URL, SC.client_id,
                                     SC.redirect_uri, "ACCOUNT_INFORMATION",
                                     state), psu)
    return b


def session_cookie(r):
    for h in psd2lib.set_cookie_headers(r):
        if h.startswith("psd2_session="):
            return h.split(";", 1)[0].split("=", 1)[1]
    return None


def at_otp_step(psu, state):
    """A PSU's browser at the TOTP step of a new authorisation request:
    (browser, the TOTP form's fields with a fresh code)."""
    b = PsuBrowser()
    b.authorize(authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                              "ACCOUNT_INFORMATION", state))
    b.submit_login(psu.username, psu.password)
    data = b.form("otp-form").hidden()
    data["otp"] = psu.totp()
    return b, data


def pre_login_copy(b):
    """Another client with the cookies b had before its session: the
    pre-login cookie, not the session."""
    other = psd2lib.http_session()
    for c in b.s.cookies:
        if c.name != "psd2_session":
            other.cookies.set(c.name, c.value, domain=c.domain, path=c.path)
    return other


# -- consent ---------------------------------------------------------------

def test_consent_repost_redirects_with_the_same_code(psu_factory, dbinfo):
    psu = psu_factory()
    b = to_consent(psu, state="st-twice")
    data = consent_form_data(b)
    r1 = b.post("/auth/oauth/consent", data)
    assert r1.status_code == 303, r1.text[:500]
    _, q1 = location_params(r1)
    r2 = b.post("/auth/oauth/consent", data)
    assert r2.status_code == 303, r2.text[:500]
    assert r2.headers["Location"] == r1.headers["Location"]
    _, q2 = location_params(r2)
    assert q2["code"] == q1["code"] and q2["state"] == ["st-twice"]
    assert consents_of(dbinfo, psu) == 1
    assert codes_of(dbinfo, psu) == 1
    tok = exchange_code(SC, q1["code"][0])
    assert tok.status_code == 200, tok.text


def test_consent_repost_after_exchange_says_done_without_code(psu_factory,
                                                              dbinfo, signer):
    psu = psu_factory()
    b = to_consent(psu)
    data = consent_form_data(b)
    r1 = b.post("/auth/oauth/consent", data)
    code = location_params(r1)[1]["code"][0]
    tok = exchange_code(SC, code)
    assert tok.status_code == 200, tok.text
    r2 = b.post("/auth/oauth/consent", data)
    assert r2.status_code == 200, (r2.status_code, r2.text[:500])
    assert "Location" not in r2.headers
    assert code not in r2.text
    assert 'id="consent_done"' in r2.text
    p = Page(r2.text)
    assert p.form("consent-form") is None
    assert not p.error_messages()
    assert consents_of(dbinfo, psu) == 1 and codes_of(dbinfo, psu) == 1
    # The tokens of the first exchange still work.
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST,
                        tok.json()["access_token"])
    assert r.status_code == 200, r.text


def test_consent_double_click_one_consent_one_code(psu_factory, dbinfo):
    psu = psu_factory()
    b = to_consent(psu)
    data = consent_form_data(b)
    out = [None, None]
    go = threading.Barrier(2)

    def post(i):
        s = psd2lib.http_session()
        s.cookies.update(b.s.cookies)
        go.wait()
        out[i] = s.post(MAIN_URL + "/auth/oauth/consent", data=data,
                        allow_redirects=False, timeout=30)

    ts = [threading.Thread(target=post, args=(i,)) for i in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert [r.status_code for r in out] == [303, 303], \
        [(r.status_code, r.text[:300]) for r in out]
    assert out[0].headers["Location"] == out[1].headers["Location"]
    assert "code" in location_params(out[0])[1]
    assert consents_of(dbinfo, psu) == 1 and codes_of(dbinfo, psu) == 1


def test_deny_is_final(psu_factory, dbinfo):
    psu = psu_factory()
    b = to_consent(psu, state="st-deny")
    r1 = b.post("/auth/oauth/consent", consent_form_data(b, "deny"))
    assert r1.status_code == 303
    r2 = b.post("/auth/oauth/consent", consent_form_data(b, "approve"))
    assert r2.status_code == 303, r2.text[:500]
    _, q = location_params(r2)
    assert q["error"] == ["access_denied"] and q["state"] == ["st-deny"]
    assert "code" not in q
    assert consents_of(dbinfo, psu) == 0


def test_approve_then_deny_repost_keeps_the_approval(psu_factory, dbinfo):
    psu = psu_factory()
    b = to_consent(psu)
    r1 = b.post("/auth/oauth/consent", consent_form_data(b))
    r2 = b.post("/auth/oauth/consent", consent_form_data(b, "deny"))
    assert r2.status_code == 303
    assert r2.headers["Location"] == r1.headers["Location"]
    assert consents_of(dbinfo, psu) == 1


def test_a_new_authorisation_request_gets_a_new_consent(psu_factory, dbinfo):
    psu = psu_factory()
    codes = set()
    for _ in range(2):
        code, _, _, _ = psd2lib.run_code_flow(SC, psu)
        codes.add(code)
    assert len(codes) == 2 and consents_of(dbinfo, psu) == 2


# -- TOTP step -------------------------------------------------------------

def test_otp_repost_shows_the_consent_page_again(psu_factory, dbinfo):
    psu = psu_factory()
    b = PsuBrowser()
    b.authorize(authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                              "ACCOUNT_INFORMATION", "st-otp"))
    b.submit_login(psu.username, psu.password)
    f = b.form("otp-form")
    data = f.hidden()
    data["otp"] = psu.totp()
    r1 = b.post("/auth/login/otp", data)
    assert r1.status_code == 200 and b.page.form("consent-form") is not None
    s1 = session_cookie(r1)
    assert s1
    r2 = b.post("/auth/login/otp", data)
    assert r2.status_code == 200, r2.text[:500]
    assert b.page.form("consent-form") is not None
    assert not b.page.error_messages()
    assert session_cookie(r2) is None
    assert b.s.cookies["psd2_session"] == s1
    assert sessions_of(dbinfo, psu) == 1
    assert failures_of(dbinfo, psu) == 0
    # The flow goes on as if the second post had been the only one.
    r = b.submit_consent("approve")
    assert r.status_code == 303 and "code" in location_params(r)[1]


def test_otp_double_click_one_session(psu_factory, dbinfo):
    """Both posts leave the browser without the session cookie (the second
    is sent before the first answer arrives): one opens the session and
    gets the consent page, the other is told the code was used and gets
    no session; no failure counted."""
    psu = psu_factory()
    b, data = at_otp_step(psu, "st-dbl")
    out = [None, None]
    go = threading.Barrier(2)

    def post(i):
        s = psd2lib.http_session()
        s.cookies.update(b.s.cookies)
        go.wait()
        out[i] = s.post(MAIN_URL + "/auth/login/otp", data=data,
                        allow_redirects=False, timeout=30)

    ts = [threading.Thread(target=post, args=(i,)) for i in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(r.status_code for r in out) == [200, 401], \
        [(r.status_code, r.text[:300]) for r in out]
    ok = [r for r in out if r.status_code == 200][0]
    used = [r for r in out if r.status_code == 401][0]
    assert Page(ok.text).form("consent-form") is not None
    assert session_cookie(ok) is not None
    assert session_cookie(used) is None
    assert "already been used" in used.text
    assert sessions_of(dbinfo, psu) == 1
    assert failures_of(dbinfo, psu) == 0


def test_otp_replay_by_another_client_gets_no_session(psu_factory, dbinfo):
    """The TOTP form re-posted by another client after the PSU's login
    (its hidden fields, the used code, the pre-login cookie): no session
    cookie, no consent page, no failure counted."""
    psu = psu_factory()
    b, data = at_otp_step(psu, "st-replay")
    r1 = b.post("/auth/login/otp", data)
    assert r1.status_code == 200 and session_cookie(r1)
    thief = pre_login_copy(b)
    r = thief.post(MAIN_URL + "/auth/login/otp", data=data,
                   allow_redirects=False, timeout=30)
    assert r.status_code == 401, (r.status_code, r.text[:300])
    assert session_cookie(r) is None
    assert "psd2_session" not in thief.cookies
    assert Page(r.text).form("consent-form") is None
    assert "already been used" in r.text
    assert sessions_of(dbinfo, psu) == 1
    assert failures_of(dbinfo, psu) == 0
    # The PSU's own flow goes on.
    r = b.submit_consent("approve")
    assert r.status_code == 303 and "code" in location_params(r)[1]


def test_used_code_from_another_login_is_no_failure(psu_factory, dbinfo):
    psu = psu_factory()
    first, data = at_otp_step(psu, "st-used-1")
    assert first.post("/auth/login/otp", data).status_code == 200
    other, data2 = at_otp_step(psu, "st-used-2")
    data2["otp"] = data["otp"]
    r = other.post("/auth/login/otp", data2)
    assert r.status_code == 401 and session_cookie(r) is None
    assert "already been used" in r.text
    assert failures_of(dbinfo, psu) == 0


def test_otp_repost_with_another_wrong_code_still_fails(psu_factory, dbinfo):
    psu = psu_factory()
    b = PsuBrowser()
    b.authorize(authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                              "ACCOUNT_INFORMATION", "st-wrong"))
    b.submit_login(psu.username, psu.password)
    data = b.form("otp-form").hidden()
    data["otp"] = psu.totp()
    assert b.post("/auth/login/otp", data).status_code == 200
    good = data["otp"]
    data["otp"] = "%06d" % ((int(good) + 1) % 1000000)
    r = b.post("/auth/login/otp", data)
    assert r.status_code == 401
    assert failures_of(dbinfo, psu) == 1


# -- password step ---------------------------------------------------------

def test_password_repost_shows_the_otp_page_again(psu_factory, dbinfo):
    psu = psu_factory()
    b = PsuBrowser()
    b.authorize(authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                              "ACCOUNT_INFORMATION", "st-pw"))
    data = b.form("login-form").hidden()
    data.update({"username": psu.username, "password": psu.password})
    for _ in range(2):
        r = b.post("/auth/login", data)
        assert r.status_code == 200 and b.page.form("otp-form") is not None
        assert not b.page.error_messages()
    assert failures_of(dbinfo, psu) == 0 and sessions_of(dbinfo, psu) == 0
    # After the TOTP step, the password form sent again still shows the
    # TOTP page, and its repeated TOTP post the consent page (one session).
    r = b.submit_otp(psu.totp())
    assert r.status_code == 200 and b.page.form("consent-form") is not None
    r = b.post("/auth/login", data)
    assert r.status_code == 200 and b.page.form("otp-form") is not None
    assert sessions_of(dbinfo, psu) == 1


# -- the PSU's consents page -----------------------------------------------

def test_consents_page_login_and_revoke_repost(psu_factory, dbinfo):
    psu = psu_factory()
    code, _, _, _ = psd2lib.run_code_flow(SC, psu)
    b = PsuBrowser()
    r = b.get("/auth/consents")
    assert r.status_code == 200 and b.page.form("login-form") is not None
    b.submit_login(psu.username, psu.password)
    data = b.form("otp-form").hidden()
    data["otp"] = psu.totp()
    sessions_before = sessions_of(dbinfo, psu)
    r1 = b.post("/auth/login/otp", data)
    r2 = b.post("/auth/login/otp", data)
    for r in (r1, r2):
        assert r.status_code == 303, (r.status_code, r.text[:300])
        assert r.headers["Location"] == "/auth/consents"
    assert session_cookie(r1) and session_cookie(r2) is None
    assert sessions_of(dbinfo, psu) == sessions_before + 1
    r = b.get("/auth/consents")
    assert r.status_code == 200
    forms = [f for f in b.page.forms
             if (f.action or "").endswith("/auth/consents/revoke")]
    assert len(forms) == 1
    rdata = forms[0].hidden()
    for _ in range(2):
        r = b.post("/auth/consents/revoke", rdata)
        assert r.status_code == 303, (r.status_code, r.text[:300])
        assert r.headers["Location"] == "/auth/consents"
    assert db_one(dbinfo, "SELECT status FROM consent c JOIN psu p ON "
                  "p.id = c.psu_id WHERE p.username = %s",
                  psu.username)[0] == "revokedByPsu"
