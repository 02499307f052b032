"""Staff accounts page (admin only): role changes, disabling
(the member's session ends at once), enabling, unlocking, each confirmed
first and audited; an operator is refused; an admin cannot disable or
demote themselves."""

from psd2lib import Page
from staff_lib import STAFF_URL, audit_max_id, form_post, http_login, \
    make_staff


def op(sess, username, name):
    r = sess.get(STAFF_URL + "/staff/members/confirm",
                 params={"username": username, "op": name})
    assert r.status_code == 200, r.text
    return form_post(sess, Page(r.text), "confirm-form", {})


def role_status(db, username):
    cur = db.cursor()
    cur.execute("SELECT role, status FROM staff WHERE username = %s",
                (username,))
    return cur.fetchone()


def test_admin_changes_role_disables_and_enables(admin, db):
    member = make_staff("operator")
    victim_session = http_login(member)
    since = audit_max_id(db)
    sess = http_login(admin)
    # 50 members a page: the search finds the member on any page
    found = sess.get(STAFF_URL + "/staff/members",
                     params={"q": member.username}).text
    assert 'id="member-%s"' % member.username in found
    assert op(sess, member.username, "make_admin").status_code == 200
    assert role_status(db, member.username) == ("admin", "active")
    assert op(sess, member.username, "disable").status_code == 200
    assert role_status(db, member.username) == ("admin", "disabled")
    r = victim_session.get(STAFF_URL + "/staff/home", allow_redirects=False)
    assert r.status_code == 303             # the session ended at once
    assert op(sess, member.username, "enable").status_code == 200
    cur = db.cursor()
    cur.execute("SELECT actor, action FROM audit_log WHERE id > %s AND "
                "detail->>'username' = %s ORDER BY id",
                (since, member.username))
    assert cur.fetchall() == [
        ("staff:" + admin.username, "staff.make_admin"),
        ("staff:" + admin.username, "staff.disable"),
        ("staff:" + admin.username, "staff.enable")]


def test_admin_cannot_disable_or_demote_themselves(admin, db):
    sess = http_login(admin)
    for name in ("disable", "make_operator"):
        r = op(sess, admin.username, name)
        assert r.status_code == 409 and "staff_result_self" in r.text
    assert role_status(db, admin.username) == ("admin", "active")


def test_operator_cannot_manage_staff(operator, db):
    other = make_staff("operator")
    sess = http_login(operator)
    assert sess.get(STAFF_URL + "/staff/members").status_code == 403
    csrf = Page(sess.get(STAFF_URL + "/staff/home").text).form(
        "logout-form").hidden()["csrf"]
    r = sess.post(STAFF_URL + "/staff/members/action", data={
        "csrf": csrf, "op": "make_admin", "username": operator.username},
        allow_redirects=False)
    assert r.status_code == 403
    r = sess.post(STAFF_URL + "/staff/members/action", data={
        "csrf": csrf, "op": "disable", "username": other.username},
        allow_redirects=False)
    assert r.status_code == 403
    assert role_status(db, operator.username) == ("operator", "active")
    assert role_status(db, other.username) == ("operator", "active")
