"""The staff page of consents (/staff/consents): every staff member sees
the consents of both surfaces (the contract's OAuth flow and the Berlin
Group interface) with their TPP, PSU, status now, accounts and rights,
filtered and paged; bad input is a 400 and changes nothing."""

import uuid

import psd2lib
from psd2lib import Page, make_client, make_psu, run_code_flow
from staff_lib import STAFF_URL, browser_login, http_login, wait_for


def rows(page):
    return page.find("tr", class_="consent-row")


def follow_pager(sess, page, button):
    """Submits the pager form with one of its buttons (no JavaScript)."""
    form = page.form("pager")
    assert form is not None
    b = form.button(button)
    assert b is not None, button
    data = dict(form.hidden())
    data[b.get("name")] = b.get("value")
    return sess.get(STAFF_URL + form.action, params=data)


def insert_bg_received(db, client, n):
    """n Berlin Group consents waiting for their PSU (as POST
    /xs2a/v1/consents stores them), oldest first; their ids."""
    cur = db.cursor()
    ids = []
    for i in range(n):
        cid = str(uuid.uuid4())
        cur.execute(
            "INSERT INTO consent (id, client_id, scopes, status, "
            "valid_until, frequency_per_day, surface, access_kind, "
            "access_request, created_at) VALUES (%s, %s, "
            "'{ACCOUNT_INFORMATION}', 'received', current_date + 30, 4, "
            "'bg', 'allPsd2', '{\"allPsd2\": \"allAccounts\"}', "
            "now() - make_interval(secs => %s))",
            (cid, client.client_id, n - i))
        ids.append(cid)
    return ids


def test_contract_consent_shown_with_accounts_and_rights(operator, db):
    psu = make_psu(2)
    client = make_client()
    iban = psu.accounts[0][0]
    run_code_flow(client, psu, accounts=[iban])
    sess = http_login(operator)
    r = sess.get(STAFF_URL + "/staff/consents", params={"psu": psu.username})
    assert r.status_code == 200, r.text
    found = rows(Page(r.text))
    assert len(found) == 1
    text = psd2lib.norm_text(found[0].text)
    assert "valid" in text and client.org_id in text
    assert iban in text and "list, balances, transactions" in text
    assert psu.accounts[1][0] not in text
    cur = db.cursor()
    cur.execute("SELECT c.id FROM consent c JOIN psu p ON p.id = c.psu_id "
                "WHERE p.username = %s", (psu.username,))
    assert found[0].attrs["id"] == "consent-%s" % cur.fetchone()[0]


def test_bg_consents_filtered_and_paged(operator, db):
    client = make_client()
    ids = insert_bg_received(db, client, 52)
    sess = http_login(operator)
    r = sess.get(STAFF_URL + "/staff/consents",
                 params={"tpp": client.org_id, "status": "received"})
    assert r.status_code == 200, r.text
    page = Page(r.text)
    first = rows(page)
    assert len(first) == 50
    # newest first
    assert first[0].attrs["id"] == "consent-" + ids[-1]
    assert "Berlin Group interface (allPsd2)" in psd2lib.norm_text(
        first[0].text)
    assert "page-next" in page.by_id and "page-previous" not in page.by_id
    r = follow_pager(sess, page, "page-next")
    page = Page(r.text)
    second = rows(page)
    assert [e.attrs["id"] for e in second] == [
        "consent-" + ids[1], "consent-" + ids[0]]
    assert "page-next" not in page.by_id
    assert "page-previous" in page.by_id
    # the filters are kept from page to page
    assert len(rows(Page(follow_pager(sess, page,
                                      "page-previous").text))) == 50
    # the status now: one left unauthorised for over an hour shows as
    # rejected before the housekeeping writes it
    db.cursor().execute("UPDATE consent SET created_at = now() - "
                        "interval '61 minutes' WHERE id = %s", (ids[0],))
    r = sess.get(STAFF_URL + "/staff/consents",
                 params={"tpp": client.org_id, "status": "rejected"})
    assert [e.attrs["id"] for e in rows(Page(r.text))] == [
        "consent-" + ids[0]]
    r = sess.get(STAFF_URL + "/staff/consents",
                 params={"tpp": client.org_id, "status": "received"})
    assert len(rows(Page(r.text))) == 50


def test_bad_page_is_refused_and_changes_nothing(operator, dbinfo):
    sess = http_login(operator)
    # the session's last-seen time moves on every page, and the audit
    # sealer links earlier rows meanwhile: neither is this request's
    quiet = ("web_session", "audit_chain")
    before = psd2lib.db_snapshot(dbinfo, exclude=quiet)
    for bad in ("-1", "x", "100001"):
        r = sess.get(STAFF_URL + "/staff/consents", params={"page": bad})
        assert r.status_code == 400, (bad, r.status_code)
    assert psd2lib.db_snapshot(dbinfo, exclude=quiet) == before


def test_consents_page_in_chromium_from_the_navigation(driver, operator):
    browser_login(driver, operator, lang="de")
    driver.find_element("id", "nav-consents").click()
    wait_for(driver, "consents-filter")
    assert "Einwilligungen" in driver.title or \
        "Einwilligungen" in driver.page_source
