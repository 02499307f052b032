"""Helpers of the staff suite: staff members, logins by HTTP and in
Chromium, audit rows."""

import datetime
import secrets
import uuid

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

import psd2lib
from psd2lib import Page, fresh_totp, psd2ctl, random_base32, unique

STAFF_PORT = psd2lib.test_port("PSD2_TEST_STAFF_PORT", 18083)
STAFF_URL = "http://127.0.0.1:%d" % STAFF_PORT


class Staff:
    def __init__(self, username, password, secret, name, role):
        self.username = username
        self.password = password
        self.totp_secret = secret
        self.name = name
        self.role = role

    def totp(self):
        return fresh_totp("staff:" + self.username, self.totp_secret)


def make_staff(role="operator"):
    username = unique("st")
    password = "pw-" + secrets.token_urlsafe(12)
    secret = random_base32()
    name = "Staff Member %s" % username[-6:]
    p = psd2ctl("staff", "add", username, "--password", password,
                "--totp-secret", secret, "--name", name, "--role", role)
    assert ("role: %s" % role) in p.stdout
    return Staff(username, password, secret, name, role)


def form_post(sess, page, form_id, fields, base=None):
    form = page.form(form_id)
    assert form is not None, "no form %s" % form_id
    data = dict(form.hidden())
    data.update(fields)
    return sess.post((base or STAFF_URL) + form.action, data=data,
                     allow_redirects=False)


def http_login(staff, sess=None):
    """Logs staff in over plain HTTP; returns the session (cookie set)."""
    sess = sess or psd2lib.http_session()
    r = sess.get(STAFF_URL + "/staff")
    assert r.status_code == 200, r.text
    r = form_post(sess, Page(r.text), "staff-login-form",
                  {"username": staff.username, "password": staff.password})
    assert r.status_code == 200, r.text
    r = form_post(sess, Page(r.text), "staff-otp-form",
                  {"otp": staff.totp()})
    assert r.status_code == 303, (r.status_code, r.text)
    assert r.headers["Location"] == "/staff/home"
    return sess


def wait_for(d, ident, timeout=30):
    """The element with id ident once the page that has it loaded. A look
    that a form's answer interrupts, replacing the page, is aborted by
    that navigation (chromedriver: "aborted by navigation"): look again."""
    present = EC.presence_of_element_located(("id", ident))

    def look(drv):
        try:
            return present(drv)
        except WebDriverException as e:
            if "aborted by navigation" in str(e):
                return False
            raise

    return WebDriverWait(d, timeout).until(look)


def browser_login(d, staff, lang=None):
    d.get(STAFF_URL + "/staff" + ("?lang=" + lang if lang else ""))
    wait_for(d, "username").send_keys(staff.username)
    d.find_element("id", "password").send_keys(staff.password)
    d.find_element("id", "login-submit").click()
    wait_for(d, "otp").send_keys(staff.totp())
    d.find_element("id", "otp-submit").click()
    wait_for(d, "staff-role")


def audit_rows(db, actor, since_id=0):
    cur = db.cursor()
    cur.execute("SELECT id, action, detail FROM audit_log "
                "WHERE actor = %s AND id > %s ORDER BY id",
                (actor, since_id))
    return cur.fetchall()


def audit_max_id(db):
    cur = db.cursor()
    cur.execute("SELECT coalesce(max(id), 0) FROM audit_log")
    return cur.fetchone()[0]


def sql_payment(db, owner, at, amount, creditor="DE89370400440532013000",
                status="ACSC", sca=True, name="Payee"):
    """One payment of owner (psu, client: a PSU with an account and a
    consent) written as the service writes it, in SQL as the tests'
    owner role: executed (ACSC) at time at when status is ACSC, with a
    finalised SCA unless sca is False (a row psd2gate never writes: every
    payment it executes had SCA)."""
    psu, client = owner
    pid = str(uuid.uuid4())
    cur = db.cursor()
    cur.execute("""
        INSERT INTO payment (id, product, psu_id, consent_id, client_id,
            tpp_id, debtor_account_id, debtor_iban, creditor_iban,
            creditor_name, amount_minor, currency, transaction_status,
            reject_reason, booking_ref, created_at, status_at)
        SELECT %(id)s, 'sepa-credit-transfers', u.id, c.id, c.client_id,
            oc.tpp_id, a.id, a.iban, %(creditor)s, %(name)s, %(amount)s,
            'EUR', %(status)s,
            CASE WHEN %(status)s = 'RJCT' THEN 'declined' END,
            CASE WHEN %(status)s = 'ACSC' THEN 'test-' || %(id)s END,
            %(created)s, %(at)s
        FROM psu u JOIN account a ON a.psu_id = u.id
        JOIN consent c ON c.psu_id = u.id
        JOIN oauth_client oc ON oc.client_id = c.client_id
        WHERE u.username = %(psu)s AND oc.client_id = %(client)s
        ORDER BY c.created_at DESC LIMIT 1""", {
        "id": pid, "creditor": creditor, "name": name, "amount": amount,
        "status": status, "created": at - datetime.timedelta(minutes=1),
        "at": at, "psu": psu.username, "client": client.client_id})
    assert cur.rowcount == 1
    if sca:
        cur.execute("""INSERT INTO payment_authorisation (id, payment_id,
                       approach, method, sca_status)
                       VALUES (%s, %s, 'redirect', 'totp', 'finalised')""",
                    (str(uuid.uuid4()), pid))
    return pid
