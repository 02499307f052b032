"""The back office at 1366x768, the screen staff work on: every staff
page is opened in Chromium with long real values (names, redirect URIs,
audit details, IBANs) and no element may overflow its container, nor the
page the window; the navigation stays in view when the page scrolls.
A screenshot of each page is kept in var/test-logs/screens/."""

import os
import secrets

import pytest

import psd2lib
from psd2lib import make_client, make_psu, psd2ctl, run_code_flow
from staff_lib import STAFF_URL, browser_login, wait_for

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
    return psu, client


@pytest.fixture(scope="module")
def admin_module(service_setup):
    from staff_lib import make_staff
    return make_staff("admin")


@pytest.fixture(scope="module")
def db_module(dbinfo):
    c = psd2lib.db_connect(dbinfo)
    yield c
    c.close()


def pages(psu, client, admin):
    return [
        ("home", "/staff/home"),
        ("devices", "/staff/devices"),
        ("consents", "/staff/consents"),
        ("audit", "/staff/audit"),
        ("kpi", "/staff/kpi"),
        ("tpps", "/staff/tpps"),
        ("members", "/staff/members"),
        ("psu", "/staff/psu?username=" + psu.username),
        ("tpp-confirm", "/staff/tpps/confirm?org_id=%s&op=suspend"
         % client.org_id),
        ("member-confirm", "/staff/members/confirm?username=%s&op=unlock"
         % admin.username),
    ]


@pytest.fixture(scope="module")
def wide_driver():
    d = psd2lib.chromium()
    d.set_window_size(WIDTH, HEIGHT)
    yield d
    psd2lib.quit_chromium(d)


def test_every_staff_page_fits_1366x768(wide_driver, admin_module,
                                        wide_data):
    psu, client = wide_data
    d = wide_driver
    browser_login(d, admin_module)
    os.makedirs(SCREENS, exist_ok=True)
    found = {}
    for label, path in pages(psu, client, admin_module):
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
                 "/staff/consents"):
        assert sess.get(STAFF_URL + path, params={"page": "-1"}
                        ).status_code == 400, path
        assert sess.get(STAFF_URL + path, params={"page": "0"}
                        ).status_code == 200, path
