"""A PSU's lost passkey or security key, removed by staff with four eyes
on the PSU's page (/staff/psu): one member proposes with a reason,
another confirms (the proposer is refused), a proposal can be withdrawn;
each step an audit row; a removed key is gone from the PSU's login."""

import os
import secrets

from psd2lib import Page
from staff_lib import STAFF_URL, audit_max_id, form_post, http_login
from staff_lib import make_staff


def add_key(db, psu, name):
    """A key row for psu, as psu_key_add stores one (the key material
    does not matter here: nothing verifies with it)."""
    cur = db.cursor()
    cur.execute("""INSERT INTO psu_key (psu_id, credential_id, alg,
        public_key, aaguid, name)
        SELECT id, %s, -7, %s, gen_random_uuid(), %s FROM psu
        WHERE username = %s RETURNING id""",
                (os.urandom(32), os.urandom(64), name, psu.username))
    key_id = cur.fetchone()[0]
    db.commit()
    return key_id


def key_row(db, key_id):
    cur = db.cursor()
    cur.execute("SELECT removed_why, removal_proposed_by, removal_reason "
                "FROM psu_key WHERE id = %s", (key_id,))
    return cur.fetchone()


def psu_page(sess, psu):
    r = sess.get(STAFF_URL + "/staff/psu", params={"username": psu.username})
    assert r.status_code == 200, r.text
    return Page(r.text)


def act(sess, psu, key_id, action, **fields):
    return form_post(sess, psu_page(sess, psu), "key-%s-%d" % (action,
                     key_id), dict(fields))


def audit(db, since):
    cur = db.cursor()
    cur.execute("SELECT actor, action, detail FROM audit_log WHERE id > %s "
                "AND action LIKE 'psu.key_%%' ORDER BY id", (since,))
    return cur.fetchall()


def test_removal_needs_a_second_member(db, psu_factory):
    psu = psu_factory()
    key_id = add_key(db, psu, "Lost phone")
    a, b = make_staff("operator"), make_staff("operator")
    sa, sb = http_login(a), http_login(b)
    since = audit_max_id(db)
    assert "Lost phone" in psu_page(sa, psu).text
    # A reason is required.
    r = act(sa, psu, key_id, "propose", reason="  ")
    assert r.status_code == 409 and "staff_key_result_no_reason" in r.text
    r = act(sa, psu, key_id, "propose", reason="reported lost by phone")
    assert r.status_code == 200 and "staff_done_key_propose" in r.text
    assert key_row(db, key_id) == (None, "staff:" + a.username,
                                   "reported lost by phone")
    # The proposer cannot confirm; another member can.
    r = act(sa, psu, key_id, "confirm")
    assert r.status_code == 409 and "staff_key_result_same_person" in r.text
    assert key_row(db, key_id)[0] is None
    r = act(sb, psu, key_id, "confirm")
    assert r.status_code == 200 and "staff_done_key_confirm" in r.text
    assert key_row(db, key_id)[0] == "staff"
    assert "Lost phone" not in psu_page(sb, psu).text
    rows = audit(db, since)
    assert [(x[0], x[1]) for x in rows] == [
        ("staff:" + a.username, "psu.key_removal"),
        ("staff:" + b.username, "psu.key_removed")]
    assert rows[0][2] == {"psu": psu.username, "key": key_id,
                          "step": "propose",
                          "reason": "reported lost by phone"}
    assert rows[1][2]["why"] == "staff" and \
        rows[1][2]["proposed_by"] == "staff:" + a.username


def test_proposal_withdrawn_keeps_the_key(db, psu_factory):
    psu = psu_factory()
    key_id = add_key(db, psu, "Desk key")
    a = make_staff("operator")
    sa = http_login(a)
    r = act(sa, psu, key_id, "propose", reason="wrong PSU")
    assert r.status_code == 200
    r = act(sa, psu, key_id, "withdraw")
    assert r.status_code == 200 and "staff_done_key_withdraw" in r.text
    assert key_row(db, key_id) == (None, None, None)


def test_forged_or_stale_forms_change_nothing(db, psu_factory):
    psu = psu_factory()
    key_id = add_key(db, psu, "Key " + secrets.token_hex(2))
    sa = http_login(make_staff("operator"))
    page = psu_page(sa, psu)
    form = page.form("key-propose-%d" % key_id)
    data = dict(form.hidden(), reason="lost")
    for bad in ({"csrf": "x"}, {"action": "delete"}, {"key_id": "1x"}):
        r = sa.post(STAFF_URL + form.action, data=dict(data, **bad),
                    allow_redirects=False)
        assert r.status_code in (400, 403), (bad, r.status_code)
    # Confirming with nothing proposed.
    r = sa.post(STAFF_URL + form.action, data=dict(data, action="confirm"),
                allow_redirects=False)
    assert r.status_code == 409 and "staff_key_result_bad_status" in r.text
    assert key_row(db, key_id) == (None, None, None)
