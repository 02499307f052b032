"""The staff TOTP form posted twice (a double click, the back button):
the second post gets the first post's outcome, the same session cookie
and no failure counted, as the PSU login's single-use steps do. Another
login form presenting the same code is still refused (a code is used
once)."""

import threading

import psd2lib
from psd2lib import Page
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
    assert again.cookies["psd2_staff"] == cookie
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


def test_racing_double_click(db):
    member = make_staff("operator")
    sess, action, data = otp_page(member)
    data["otp"] = member.totp()
    results = [None, None]

    def one(i):
        s = psd2lib.http_session()
        s.cookies.update(sess.cookies)
        results[i] = post(s, action, data)

    threads = [threading.Thread(target=one, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in results] == [303, 303], \
        [r.text for r in results]
    assert results[0].cookies["psd2_staff"] == \
        results[1].cookies["psd2_staff"]
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
    assert r.status_code == 401
    assert "log in again" in r.text
    assert Page(r.text).form("staff-login-form") is not None
    assert failures(db, member) == 0
    assert sess.get(STAFF_URL + "/staff/home",
                    allow_redirects=False).status_code != 200


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
    assert failures(db, member) == 1
