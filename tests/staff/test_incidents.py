"""The staff page of downtime incidents (/staff/incidents): every staff
member sees the open and the ended incidents (EBA GL 2.2; written by the
service, tests/downtime), newest first, filtered by class, source,
state and instance, 50 a page; a bad filter is a 400; in the
navigation, en/de/nl.
The rows are written here through kpi_incident_event(), the function
the service writes them with (dated in 2099)."""

import os

import psd2lib
from psd2lib import Page
from staff_lib import STAFF_URL, browser_login, http_login, wait_for


def rows(page):
    return page.find("tr", class_="incident-row")


def record(db, cls, source, instance, start, end, detail="status 503"):
    """One incident as the service writes it: its id."""
    cur = db.cursor()
    cur.execute("SELECT kpi_incident_event(%s, %s, %s, 'start', %s, %s)",
                (cls, source, instance, start, detail))
    iid = cur.fetchone()[0]
    if end is not None:
        cur.execute("SELECT kpi_incident_event(%s, %s, %s, 'end', %s, "
                    "'answered: status 200')", (cls, source, instance, end))
    return iid


def follow_pager(sess, page, button):
    form = page.form("pager")
    b = form.button(button)
    data = dict(form.hidden())
    data[b.get("name")] = b.get("value")
    return sess.get(STAFF_URL + form.action, params=data)


def test_open_and_ended_incidents_filtered(operator, db):
    inst = "staff-test-" + os.urandom(4).hex()
    ended = record(db, "ais", "service", inst, "2099-01-02 10:00:00+00",
                   "2099-01-02 10:00:41.5+00")
    open_ = record(db, "pis", "probe", inst, "2099-01-03 11:00:00+00", None)
    sess = http_login(operator)
    r = sess.get(STAFF_URL + "/staff/incidents", params={"instance": inst})
    assert r.status_code == 200, r.text
    page = Page(r.text)
    found = {e.attrs["id"]: psd2lib.norm_text(e.text) for e in rows(page)}
    assert "incident-%d" % ended in found and "incident-%d" % open_ in found
    text = found["incident-%d" % ended]
    assert "ais" in text and "service" in text and inst in text
    assert "2099-01-02 10:00:00.000" in text
    assert "2099-01-02 10:00:41.500" in text and "42" in text
    assert "ongoing" in found["incident-%d" % open_]
    assert int(psd2lib.norm_text(page.by_id["incidents-open"].text)
               .split()[-1]) >= 1
    # newest first
    ids = [e.attrs["id"] for e in rows(page)]
    assert ids.index("incident-%d" % open_) < ids.index(
        "incident-%d" % ended)
    assert len(ids) == 2
    r = sess.get(STAFF_URL + "/staff/incidents",
                 params={"class": "pis", "state": "open", "instance": inst})
    ids = [e.attrs["id"] for e in rows(Page(r.text))]
    assert ids == ["incident-%d" % open_]
    r = sess.get(STAFF_URL + "/staff/incidents",
                 params={"source": "service", "state": "ended",
                         "instance": inst})
    ids = [e.attrs["id"] for e in rows(Page(r.text))]
    assert ids == ["incident-%d" % ended]
    r = sess.get(STAFF_URL + "/staff/incidents",
                 params={"class": "ais", "source": "probe",
                         "instance": inst})
    assert rows(Page(r.text)) == []
    # the service ends it later: no longer open
    db.cursor().execute("SELECT kpi_incident_event('pis', 'probe', %s, "
                        "'end', '2099-01-03 11:05:00+00', 'answered')",
                        (inst,))
    r = sess.get(STAFF_URL + "/staff/incidents",
                 params={"class": "pis", "state": "open", "instance": inst})
    assert rows(Page(r.text)) == []


def test_incidents_paged_with_filters_kept(operator, db):
    inst = "staff-page-" + os.urandom(4).hex()
    ids = [record(db, "funds", "probe", inst,
                  "2099-06-01 00:%02d:%02d+00" % (i // 60, i % 60),
                  "2099-06-01 01:00:00+00") for i in range(52)]
    sess = http_login(operator)
    r = sess.get(STAFF_URL + "/staff/incidents",
                 params={"class": "funds", "source": "probe",
                         "state": "ended", "instance": inst})
    page = Page(r.text)
    first = [e.attrs["id"] for e in rows(page)]
    assert len(first) == 50
    assert first[0] == "incident-%d" % ids[-1]
    r = follow_pager(sess, page, "page-next")
    page = Page(r.text)
    second = [e.attrs["id"] for e in rows(page)]
    assert second == ["incident-%d" % ids[1], "incident-%d" % ids[0]]
    assert "page-previous" in page.by_id and "page-next" not in page.by_id
    assert page.form("pager").hidden()["instance"] == inst


def test_bad_filters_are_refused(operator):
    sess = http_login(operator)
    for params in ({"class": "nope"}, {"source": "x"}, {"state": "closed"},
                   {"page": "-1"}):
        r = sess.get(STAFF_URL + "/staff/incidents", params=params)
        assert r.status_code == 400, (params, r.status_code)


def test_incident_writes_are_audited_and_repeatable(db):
    """The same start written twice (the service retries when it did not
    see the result) is one incident and one audit row."""
    inst = "staff-retry-" + os.urandom(4).hex()
    a = record(db, "oauth", "service", inst, "2099-02-01 00:00:00+00", None)
    b = record(db, "oauth", "service", inst, "2099-02-01 00:00:00+00", None)
    assert a == b
    cur = db.cursor()
    cur.execute("SELECT kpi_incident_event('oauth', 'service', %s, 'end', "
                "'2099-02-01 00:01:00+00', 'answered')", (inst,))
    assert cur.fetchone()[0] == a
    cur.execute("SELECT kpi_incident_event('oauth', 'service', %s, 'end', "
                "'2099-02-01 00:01:00+00', 'answered')", (inst,))
    assert cur.fetchone()[0] is None
    cur.execute("SELECT action, detail->>'id' FROM audit_log WHERE actor = "
                "%s ORDER BY id", ("service:" + inst,))
    assert cur.fetchall() == [("incident.start", str(a)),
                              ("incident.end", str(a))]
    # a restart of the instance ends nothing more (none open)
    cur.execute("SELECT kpi_incident_event(NULL, NULL, %s, 'restart', "
                "now(), NULL)", (inst,))
    assert cur.fetchone()[0] == 0


def test_incidents_page_from_the_navigation(driver, operator):
    for lang, title in (("de", "Störungen"), ("nl", "Storingen"),
                        ("en", "Incidents")):
        browser_login(driver, operator, lang=lang)
        driver.find_element("id", "nav-incidents").click()
        wait_for(driver, "incidents-filter")
        assert driver.find_element("tag name", "h1").text == title
        assert driver.find_element("id", "nav-incidents").get_attribute(
            "aria-current") == "page"
