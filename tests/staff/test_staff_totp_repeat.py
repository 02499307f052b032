"""The staff TOTP form posted twice (a double click, the back button):
the browser that holds the session the first post opened gets the first
outcome again (303 /staff/home, no new cookie) and no failure is counted.
Any other client re-posting the same form (the same hidden fields, the
used code, the pre-login cookie) gets no session: a used code opens
nothing a second time, and a repeat of a used code never counts as a
failure against the member."""

import threading

import psd2lib
from psd2lib import Page, set_cookie_headers
from staff_lib import (STAFF_URL, audit_max_id, audit_rows, form_post,
                       make_staff)


def otp_page(member):
    """A session at the TOTP step: (session, the TOTP form's fields)."""
    sess = psd2lib.http_session()
    r = sess.get(STAFF_URL + "/staff")
    r = form_post(sess, Page(r.text), "staff-login-form",
                  {"username": member.username, "password": member.password})
    assert r.status_code == 200, r.text
    form = Page(r.text).form("staff-otp-form")
    assert form is not None, r.text
    return sess, form.action, dict(form.hidden())


def failures(db, member):
    cur = db.cursor()
    cur.execute("SELECT failed_logins FROM staff WHERE username = %s",
                (member.username,))
    return cur.fetchone()[0]


def post(sess, action, data):
    return sess.post(STAFF_URL + action, data=data, allow_redirects=False)


def staff_cookie_set(r):
    return [h for h in set_cookie_headers(r) if h.startswith("psd2_staff=")]


def assert_no_session_set(r):
    """No session cookie set (clearing a dead one is allowed)."""
    assert all(h.startswith("psd2_staff=;") for h in staff_cookie_set(r)), \
        staff_cookie_set(r)


def refused_without_session(db, member, sess, r):
    """A repeat refused: 401, no session, no failure, not logged in."""
    assert r.status_code == 401
    assert_no_session_set(r)
    assert failures(db, member) == 0
    assert sess.get(STAFF_URL + "/staff/home",
                    allow_redirects=False).status_code != 200


def pre_login_copy(sess):
    """Another client with everything the form's browser had before the
    login: the pre-login cookie, not the session."""
    other = psd2lib.http_session()
    for c in sess.cookies:
        if c.name != "psd2_staff":
            other.cookies.set(c.name, c.value, domain=c.domain, path=c.path)
    return other


def test_second_post_gets_the_first_outcome(db):
    member = make_staff("operator")
    since = audit_max_id(db)
    sess, action, data = otp_page(member)
    data["otp"] = member.totp()
    first = post(sess, action, data)
    assert first.status_code == 303, first.text
    cookie = first.cookies["psd2_staff"]
    again = post(sess, action, data)
    assert again.status_code == 303, again.text
    assert again.headers["Location"] == "/staff/home"
    assert staff_cookie_set(again) == []
    assert sess.cookies["psd2_staff"] == cookie
    assert failures(db, member) == 0
    # one login row: the repeat writes none
    assert [a for _, a, _ in audit_rows(db, "staff:" + member.username,
                                        since)] == ["staff.login"]
    cur = db.cursor()
    cur.execute("SELECT count(*) FROM web_session w JOIN staff s ON "
                "s.id = w.subject_id WHERE w.subject_kind = 'staff' AND "
                "s.username = %s", (member.username,))
    assert cur.fetchone()[0] == 1
    home = sess.get(STAFF_URL + "/staff/home", allow_redirects=False)
    assert home.status_code == 200
    assert member.username in home.text


def test_replayed_form_from_another_client_gets_no_session(db):
    member = make_staff("operator")
    sess, action, data = otp_page(member)
    data["otp"] = member.totp()
    first = post(sess, action, data)
    assert first.status_code == 303, first.text
    thief = pre_login_copy(sess)
    r = post(thief, action, data)
    assert r.status_code == 401, (r.status_code, r.headers)
    assert staff_cookie_set(r) == []
    assert "psd2_staff" not in thief.cookies
    assert "already been used" in r.text
    home = thief.get(STAFF_URL + "/staff/home", allow_redirects=False)
    assert home.status_code != 200
    assert failures(db, member) == 0
    # the member's own session is untouched
    assert sess.get(STAFF_URL + "/staff/home",
                    allow_redirects=False).status_code == 200


def test_racing_double_click(db):
    """Two posts racing, neither holding a session: one opens it, the
    other is told the code was used; no failure either way."""
    member = make_staff("operator")
    sess, action, data = otp_page(member)
    data["otp"] = member.totp()
    results = [None, None]

    def one(i):
        s = pre_login_copy(sess)
        results[i] = post(s, action, data)

    threads = [threading.Thread(target=one, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status_code for r in results) == [303, 401], \
        [r.text for r in results]
    assert sum(len(staff_cookie_set(r)) for r in results) == 1
    assert failures(db, member) == 0


def test_repeat_after_the_session_ended_says_so(db):
    member = make_staff("operator")
    sess, action, data = otp_page(member)
    data["otp"] = member.totp()
    assert post(sess, action, data).status_code == 303
    cur = db.cursor()
    cur.execute("UPDATE web_session SET expires_at = now() - interval '1 s' "
                "FROM staff s WHERE s.id = web_session.subject_id AND "
                "web_session.subject_kind = 'staff' AND s.username = %s",
                (member.username,))
    r = post(sess, action, data)
    assert "log in again" in r.text
    assert Page(r.text).form("staff-login-form") is not None
    refused_without_session(db, member, sess, r)


def test_repeat_after_logout_is_no_failure(db):
    member = make_staff("operator")
    sess, action, data = otp_page(member)
    data["otp"] = member.totp()
    assert post(sess, action, data).status_code == 303
    home = Page(sess.get(STAFF_URL + "/staff/home").text)
    r = form_post(sess, home, "logout-form", {})
    assert r.status_code == 303, r.text
    assert sess.get(STAFF_URL + "/staff/home",
                    allow_redirects=False).status_code != 200
    r = post(sess, action, data)
    assert "already been used" in r.text
    refused_without_session(db, member, sess, r)


def test_same_code_from_another_login_form_is_refused(db):
    member = make_staff("operator")
    code = member.totp()
    sess, action, data = otp_page(member)
    data["otp"] = code
    assert post(sess, action, data).status_code == 303
    other, action2, data2 = otp_page(member)
    data2["otp"] = code
    r = post(other, action2, data2)
    assert r.status_code == 401
    assert "psd2_staff" not in other.cookies
    assert "already been used" in r.text
    # a used code again: refused, but not a fresh failure
    assert failures(db, member) == 0
    # a wrong code still counts
    data2["otp"] = "%06d" % ((int(code) + 1) % 1000000)
    assert post(other, action2, data2).status_code == 401
    assert failures(db, member) == 1
