"""The back office at 1366x768, the screen staff work on: every staff
page is opened in Chromium with long real values (names, redirect URIs,
audit details, IBANs) and no element may overflow its container, nor the
page the window; the navigation stays in view when the page scrolls.
A screenshot of each page is kept in var/test-logs/screens/."""

import datetime
import os
import secrets

import pytest

import psd2lib
from psd2lib import make_client, make_psu, psd2ctl, run_code_flow
from staff_lib import STAFF_URL, browser_login, sql_payment, wait_for

WIDTH, HEIGHT = 1366, 768
SCREENS = os.path.join(psd2lib.LOG_DIR, "screens")

# Every element whose box leaves its parent's box (the parent not a
# scrolling one), every box whose content is wider than itself, and a
# page wider than the window. Inline boxes (clientWidth 0) are measured
# through their containing blocks.
OVERFLOWS_JS = r"""
function name(el) {
  let s = el.tagName.toLowerCase();
  if (el.id) s += '#' + el.id;
  if (el.className && typeof el.className === 'string')
    s += '.' + el.className.trim().split(/\s+/).join('.');
  return s;
}
const out = [];
const root = document.documentElement;
if (root.scrollWidth > root.clientWidth + 1)
  out.push('page ' + root.scrollWidth + 'px wide in a ' +
           root.clientWidth + 'px window');
for (const el of document.querySelectorAll('body *')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  const p = el.parentElement;
  if (p && p !== document.body &&
      getComputedStyle(p).overflowX === 'visible') {
    const pr = p.getBoundingClientRect();
    if (r.right > pr.right + 1 || r.left < pr.left - 1)
      out.push(name(el) + ' (' + Math.round(r.left) + '..' +
               Math.round(r.right) + ') leaves ' + name(p) + ' (' +
               Math.round(pr.left) + '..' + Math.round(pr.right) + ')');
  }
  if (el.clientWidth > 0 && getComputedStyle(el).overflowX === 'visible' &&
      el.scrollWidth > el.clientWidth + 1)
    out.push(name(el) + ' content ' + el.scrollWidth + 'px in ' +
             el.clientWidth + 'px');
}
return out;
"""


@pytest.fixture(scope="module")
def wide_data(admin_module, db_module):
    """Long values of every kind the pages show."""
    psu = make_psu(3)
    long_uri = "https://" + "very-long-subdomain-" * 4 + "tpp.example/" \
        + "callback/" * 6
    client = make_client(redirect_uris=(long_uri,
                                        "https://tpp.example/callback"),
                         name="Example Fintech Aktiengesellschaft "
                              "Zweigniederlassung Deutschland " +
                              secrets.token_hex(4))
    run_code_flow(client, psu, accounts=[a[0] for a in psu.accounts])
    # A payment marked as fraud, corrected, with long reasons and payee.
    pid = sql_payment(db_module, (psu, client),
                      datetime.datetime.now(datetime.timezone.utc),
                      99999999999, creditor="FR1420041010050500013M02606",
                      name="Société Générale Immobilière et Financière "
                           "du Grand Ouest SA")
    cur = db_module.cursor()
    for act, ftype in (("mark", "issued_by_fraudster"),
                       ("correct", "payer_manipulated")):
        cur.execute("SELECT staff_fraud_act(%s, %s, %s, %s, %s)", (
            "staff:" + admin_module.username, pid, act, ftype,
            "The PSU called the hotline and explained at length that a "
            "caller claiming to be from the bank's security department "
            "asked for this transfer to a so-called safe account " +
            secrets.token_hex(8)))
        assert cur.fetchone()[0] == "ok"
    psu.fraud_payment = pid
    # Incidents with the longest instance name and detail there are.
    inst = ("gateway-" + secrets.token_hex(28))[:64]
    for cls in ("psu_pages", "funds"):
        cur.execute("SELECT kpi_incident_event(%s, 'probe', %s, 'start', "
                    "now() - interval '90 seconds', %s)",
                    (cls, inst, "status 503 after 30000 ms; " * 3))
    cur.execute("SELECT kpi_incident_event('funds', 'probe', %s, 'end', "
                "now(), 'answered: status 401')", (inst,))
    yield psu, client
    # Not left open: other suites count open downtime.
    cur.execute("SELECT kpi_incident_event('psu_pages', 'probe', %s, "
                "'end', now(), 'answered: status 200')", (inst,))


@pytest.fixture(scope="module")
def held_review(wide_data, db_module):
    """A payment the transaction monitoring held, with long values and a
    history of the PSU (rows as pis_initiate writes them): the review
    queue and its detail page."""
    import json
    import uuid
    psu, _ = wide_data
    pid = str(uuid.uuid4())
    rules = [{"rule": r, "score": 40, "value": v, "threshold": t}
             for r, v, t in (
                 ("amount_history", "123456789", "1500000"),
                 ("new_payee", "GB82WEST12345698765432", "365 days"),
                 ("unusual_ip", "2001:db8:1234:5678:9abc:def0:1234:5678",
                  "none of 12 in /48"),
                 ("instant_night", "03:12 Europe/Berlin", "23:00-06:00"))]
    cur = db_module.cursor()
    insert = """INSERT INTO payment (id, product, psu_id, consent_id,
        client_id, tpp_id, debtor_account_id, debtor_iban, creditor_iban,
        creditor_name, remittance, amount_minor, currency, psu_ip_address,
        transaction_status, booking_ref, risk_score, risk_level,
        risk_rules, held, created_at)
        SELECT %s, 'instant-sepa-credit-transfers', c.psu_id, c.id,
        c.client_id, oc.tpp_id, a.id, a.iban, %s,
        'Example Creditor Aktiengesellschaft Zweigniederlassung Nord',
        'Invoice 2026-000123456789 for services rendered in the quarter',
        %s, 'EUR', %s::inet, %s, %s, %s, %s, %s::jsonb, %s,
        now() - make_interval(days => %s)
        FROM consent c JOIN oauth_client oc ON oc.client_id = c.client_id
        JOIN psu u ON u.id = c.psu_id JOIN account a ON a.psu_id = u.id
        WHERE u.username = %s ORDER BY a.id LIMIT 1"""
    for i in range(12):
        cur.execute(insert, (str(uuid.uuid4()), "DE89370400440532013000",
                             1500000 + i, "2001:db8:aaaa:bbbb::%d" % i,
                             "ACSC", "TEST-%d-%s" % (i, pid), None, None,
                             None, False, i + 1, psu.username))
    cur.execute(insert, (pid, "GB82WEST12345698765432", 123456789,
                         "2001:db8:1234:5678:9abc:def0:1234:5678", "RCVD",
                         None, 160, "high", json.dumps(rules), True, 0,
                         psu.username))
    cur.execute("""INSERT INTO payment_authorisation (id, payment_id,
        approach, sca_status) VALUES (gen_random_uuid(), %s, 'decoupled',
        'received')""", (pid,))
    cur.execute("""INSERT INTO payment_review (payment_id, sca_seconds,
        nonce) VALUES (%s, 60, decode('00', 'hex'))""", (pid,))
    return pid


@pytest.fixture(scope="module")
def admin_module(service_setup):
    from staff_lib import make_staff
    return make_staff("admin")


@pytest.fixture(scope="module")
def db_module(dbinfo):
    c = psd2lib.db_connect(dbinfo)
    yield c
    c.close()


def pages(psu, client, admin, review):
    return [
        ("home", "/staff/home"),
        ("devices", "/staff/devices"),
        ("consents", "/staff/consents"),
        ("audit", "/staff/audit"),
        ("incidents", "/staff/incidents"),
        # wide_data's open one, whatever other suites left newer
        ("incidents-long", "/staff/incidents?class=psu_pages&state=open"),
        ("kpi", "/staff/kpi"),
        ("tpps", "/staff/tpps"),
        ("members", "/staff/members"),
        ("psu", "/staff/psu?username=" + psu.username),
        ("tpp-confirm", "/staff/tpps/confirm?org_id=%s&op=suspend"
         % client.org_id),
        ("member-confirm", "/staff/members/confirm?username=%s&op=unlock"
         % admin.username),
        ("fraud", "/staff/fraud"),
        ("fraud-payment", "/staff/fraud/payment?id=" + psu.fraud_payment),
        ("reviews", "/staff/reviews"),
        ("review", "/staff/reviews/payment?id=" + review),
        ("keys", "/staff/keys"),
    ]


@pytest.fixture(scope="module")
def wide_keys(admin_module, db_module):
    """Security keys with the longest names, waiting: one of the admin's,
    one of another member's (the page's two tables)."""
    from staff_lib import make_staff
    other = make_staff("operator")
    cur = db_module.cursor()
    for member in (admin_module, other):
        cur.execute("""INSERT INTO staff_key (staff_id, credential_id, alg,
            public_key, aaguid, name) SELECT id, %s, -7, %s,
            gen_random_uuid(), %s FROM staff WHERE username = %s""",
                    (os.urandom(64), os.urandom(64),
                     "Hardware security key of the back office, desk "
                     "4, drawer 12", member.username))
    db_module.commit()


@pytest.fixture(scope="module")
def wide_driver():
    d = psd2lib.chromium()
    d.set_window_size(WIDTH, HEIGHT)
    yield d
    psd2lib.quit_chromium(d)


def test_every_staff_page_fits_1366x768(wide_driver, admin_module,
                                        wide_data, held_review, wide_keys):
    psu, client = wide_data
    d = wide_driver
    browser_login(d, admin_module)
    os.makedirs(SCREENS, exist_ok=True)
    found = {}
    for label, path in pages(psu, client, admin_module, held_review):
        d.get(STAFF_URL + path)
        wait_for(d, "staff-role")
        inner = d.execute_script("return [window.innerWidth, "
                                 "window.innerHeight]")
        assert inner[0] <= WIDTH, inner
        d.save_screenshot(os.path.join(SCREENS, "staff-%s-%dx%d.png" % (
            label, WIDTH, HEIGHT)))
        bad = d.execute_script(OVERFLOWS_JS)
        if bad:
            found[label] = bad[:10]
    assert not found, found


def test_fraud_confirmation_fits_1366x768(wide_driver, admin_module,
                                          wide_data):
    """The fraud act's confirmation page, reached only by its form's
    POST: filled in Chromium with a long reason (nothing is done)."""
    psu, _ = wide_data
    d = wide_driver
    browser_login(d, admin_module)
    d.get(STAFF_URL + "/staff/fraud/payment?id=" + psu.fraud_payment)
    wait_for(d, "reason").send_keys(
        "Wiederholte Rückfrage beim Zahlungsempfänger ergab keinen "
        "Hinweis auf Betrug " * 4)
    d.find_element("id", "fraud-act-submit").click()
    wait_for(d, "confirm-question")
    d.save_screenshot(os.path.join(SCREENS, "staff-fraud-confirm-%dx%d.png"
                                   % (WIDTH, HEIGHT)))
    bad = d.execute_script(OVERFLOWS_JS)
    assert not bad, bad[:10]


def test_navigation_stays_in_view(wide_driver, admin_module, wide_data):
    d = wide_driver
    browser_login(d, admin_module)
    d.get(STAFF_URL + "/staff/audit")
    wait_for(d, "audit")
    d.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    top = d.execute_script("return document.getElementById('nav-audit')"
                           ".getBoundingClientRect().top")
    assert 0 <= top < HEIGHT, top
    current = d.find_element("id", "nav-audit").get_attribute(
        "aria-current")
    assert current == "page"


def test_audit_detail_shown_as_fields(admin_module, wide_data):
    from psd2lib import Page
    from staff_lib import http_login
    psu, client = wide_data
    sess = http_login(admin_module)
    r = sess.get(STAFF_URL + "/staff/audit",
                 params={"actor": "psu:" + psu.username,
                         "action": "psu.consent_approved"})
    page = Page(r.text)
    assert len(page.find("tr", class_="audit-row")) == 1
    # each key a term, its value readable (a list joined, no JSON)
    fields = dict(zip([e.text for e in page.find("dt")],
                      [e.text for e in page.find("dd")]))
    assert fields["client_id"] == client.client_id
    assert fields["scopes"] == "ACCOUNT_INFORMATION"
    assert set(fields) == {"client_id", "consent_id", "scopes"}


def test_every_list_is_filtered_and_paged(admin_module, db_module):
    """Devices, TPPs, staff members and consents: 50 a page, the pager a
    form (no JavaScript) that keeps the filter; bad page numbers are 400."""
    from psd2lib import Page
    from staff_lib import http_login
    tag = "pg" + secrets.token_hex(3)
    for _ in range(51):
        psd2ctl("staff", "add", tag + secrets.token_hex(3), "--password",
                "pw-" + secrets.token_urlsafe(12), "--totp-secret",
                psd2lib.random_base32(), "--name", "Paged Member",
                "--role", "operator")
    sess = http_login(admin_module)
    r = sess.get(STAFF_URL + "/staff/members", params={"q": tag})
    page = Page(r.text)
    first = [e for e in page.elements if e.tag == "tr" and
             (e.get("id") or "").startswith("member-" + tag)]
    assert len(first) == 50
    form = page.form("pager")
    assert form.hidden()["q"] == tag
    nxt = form.button("page-next")
    r = sess.get(STAFF_URL + form.action, params=dict(
        form.hidden(), page=nxt.get("value")))
    second = [e for e in Page(r.text).elements if e.tag == "tr" and
              (e.get("id") or "").startswith("member-" + tag)]
    assert len(second) == 1
    for path in ("/staff/members", "/staff/tpps", "/staff/devices",
                 "/staff/consents", "/staff/reviews",
                 "/staff/incidents"):
        assert sess.get(STAFF_URL + path, params={"page": "-1"}
                        ).status_code == 400, path
        assert sess.get(STAFF_URL + path, params={"page": "0"}
                        ).status_code == 200, path
