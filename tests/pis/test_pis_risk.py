"""Transaction monitoring (RTS Art. 2): each payment is assessed before
it goes to the PSU for SCA, against the rules the bank configures
(psd2ctl risk; src/db/functions/63_pis_risk.sql). Each rule fires in a
test, and does not fire just below its threshold, through real
initiations; the PSU's history is made of payment rows that passed SCA.
A held payment waits for the staff review queue (four eyes over the
staff pages, as a browser without JavaScript posts them): the proposer
cannot confirm, a second member's release sends it to the device, where
it completes; one rejected (by the review or by the level's action)
never creates a device challenge. The TPP's answers for a held payment
match the contract's OpenAPI document and name no rule.

Every test starts from the configuration of migration 180 (only the
block list on) and leaves it so."""

import datetime
import json
import zoneinfo

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import openapi_check
from conftest import (CREDITOR, REDIRECT, REDIRECT_SECONDS, SCA_SECONDS,
                      SCT, payment_body, payment_row, sql, sql1, wait_shown,
                      wait_status)
from psd2lib import MAIN_URL, Page, psd2ctl
from test_pis_payments_page import login, login_payment
from test_pis_staff import STAFF_URL, form_post, staff_login
from test_pis_staff import staff_server  # noqa: F401 (the fixture)

OTHER = "GB82WEST12345698765432"
BLOCKED = "NL91ABNA0417164300"
# Migration 180's rules: score and parameters.
RULES = {
    "amount_history": (60, {"days": 90, "percent": 500,
                            "statistic": "median", "min_payments": 3}),
    "new_payee": (20, {"days": 365}),
    "velocity_count": (40, {"minutes": 10, "count": 5}),
    "velocity_sum": (40, {"minutes": 60, "sum_minor": 500000}),
    "unusual_ip": (30, {"days": 90, "min_payments": 3, "prefix_v4": 24,
                        "prefix_v6": 48}),
    "blocklist": (100, {}),
    "instant_night": (20, {"from": "23:00", "to": "06:00",
                           "time_zone": "Europe/Berlin"}),
}


@pytest.fixture(autouse=True)
def risk_defaults(db):
    """The configuration of migration 180 before and after each test."""
    def reset():
        for rule, (score, params) in RULES.items():
            sql(db, "SELECT risk_rule_set('test', %s, %s, %s, %s)",
                rule, rule == "blocklist", score, json.dumps(params))
        sql(db, "SELECT risk_level_set('test', 'medium', 50, 'proceed')")
        sql(db, "SELECT risk_level_set('test', 'high', 100, 'hold')")
        sql(db, "DELETE FROM risk_blocklist")
    reset()
    yield
    reset()


def rule_set(rule, *args):
    psd2ctl("risk", "set", rule, "--enable", *args)


def history(db, payer, amounts, creditor=CREDITOR, ip="192.0.2.10",
            status="ACSC"):
    """Payments of payer's PSU that passed SCA in the last days: rows as
    an initiation writes them (from a template payment of the PSU)."""
    tpl = sql1(db, "SELECT id FROM payment WHERE psu_id = (SELECT id FROM "
               "psu WHERE username = %s) ORDER BY created_at LIMIT 1",
               payer.psu.username)
    for i, amount in enumerate(amounts):
        sql(db, """INSERT INTO payment (id, product, psu_id, consent_id,
            client_id, tpp_id, debtor_account_id, debtor_iban,
            creditor_iban, creditor_name, amount_minor, currency,
            transaction_status, booking_ref, psu_ip_address, created_at)
            SELECT gen_random_uuid(), product, psu_id, consent_id,
            client_id, tpp_id, debtor_account_id, debtor_iban, %s,
            creditor_name, %s, currency, %s,
            CASE WHEN %s = 'ACSC' THEN 'TEST-' || gen_random_uuid() END,
            %s::inet, now() - make_interval(days => %s)
            FROM payment WHERE id = %s""",
            creditor, amount, status, status, ip, i + 1, tpl)


def first_payment(api, db, payer):
    """One payment that makes the PSU's template row (nothing on)."""
    r = api.initiate(payer, decoupled=False,
                     headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    r = api.call("DELETE", "%s/%s" % (SCT, pid), payer.token)
    assert r.status_code == 204, r.text
    return pid


def assess(api, db, payer, amount="12.34", creditor=CREDITOR,
           ip="192.0.2.10", product="sepa-credit-transfers"):
    """A redirect initiation: its payment id and the rules that fired
    ({rule: (value, threshold)})."""
    r = api.initiate(payer, decoupled=False, product=product,
                     body=payment_body(payer, amount=amount,
                                       creditor=creditor),
                     headers={"TPP-Redirect-URI": REDIRECT,
                              "PSU-IP-Address": ip})
    assert r.status_code == 201, r.text
    pid = r.json()["paymentId"]
    rules = sql1(db, "SELECT risk_rules FROM payment WHERE id = %s", pid)
    # Each decision is an audit row, one that lets the payment proceed
    # too, naming the rules that fired.
    audit = sql(db, "SELECT detail FROM audit_log WHERE action = "
                "'payment.risk' AND detail->>'payment' = %s", pid)
    assert len(audit) == 1, audit
    held = sql1(db, "SELECT held FROM payment WHERE id = %s", pid)
    assert audit[0][0]["outcome"] == ("held" if held else "proceeded")
    assert audit[0][0]["rules"] == [h["rule"] for h in rules]
    return pid, {h["rule"]: (h["value"], h["threshold"]) for h in rules}


@pytest.fixture
def redirect_payer(payer_factory):
    return payer_factory(device=False)


# ---- each rule ----------------------------------------------------------

def test_amount_against_history(api, db, redirect_payer):
    p = redirect_payer
    first_payment(api, db, p)
    rule_set("amount_history", "--param", "percent=500", "--param",
             "statistic=median", "--param", "min_payments=3")
    history(db, p, [1000, 2000])
    # Two payments are not enough history (min_payments 3).
    assert "amount_history" not in assess(api, db, p, "500.00")[1]
    history(db, p, [3000])
    # Median 20.00, 500 %: 100.00 is not more, 100.01 is.
    assert "amount_history" not in assess(api, db, p, "100.00")[1]
    fired = assess(api, db, p, "100.01")[1]
    assert fired["amount_history"] == ("10001", "10000")
    # p90 of 10.00, 20.00, 30.00 is 30.00: 150.00 at most.
    rule_set("amount_history", "--param", "statistic=p90")
    assert "amount_history" not in assess(api, db, p, "150.00")[1]
    assert assess(api, db, p, "150.01")[1]["amount_history"] == \
        ("15001", "15000")


def test_new_payee(api, db, redirect_payer):
    p = redirect_payer
    first_payment(api, db, p)
    history(db, p, [1000], creditor=CREDITOR)
    history(db, p, [1000], creditor=BLOCKED, status="CANC")
    rule_set("new_payee")
    assert "new_payee" not in assess(api, db, p, creditor=CREDITOR)[1]
    assert assess(api, db, p, creditor=OTHER)[1]["new_payee"][0] == OTHER
    # A payment that never passed SCA does not make a payee known.
    assert "new_payee" in assess(api, db, p, creditor=BLOCKED)[1]


def test_velocity_count(api, db, redirect_payer):
    p = redirect_payer
    rule_set("velocity_count", "--param", "count=3", "--param",
             "minutes=10")
    for n in (1, 2, 3):
        assert "velocity_count" not in assess(api, db, p)[1], n
    assert assess(api, db, p)[1]["velocity_count"] == \
        ("4", "3 in 10 min")


def test_velocity_sum(api, db, redirect_payer):
    p = redirect_payer
    rule_set("velocity_sum", "--param", "sum_minor=5000", "--param",
             "minutes=60")
    assert "velocity_sum" not in assess(api, db, p, "30.00")[1]
    assert "velocity_sum" not in assess(api, db, p, "20.00")[1]
    assert assess(api, db, p, "0.01")[1]["velocity_sum"] == \
        ("5001", "5000 in 60 min")


def test_unusual_ip(api, db, redirect_payer):
    p = redirect_payer
    first_payment(api, db, p)
    rule_set("unusual_ip", "--param", "min_payments=3")
    history(db, p, [1000, 1000], ip="192.0.2.20")
    # Too little history to call an address unusual.
    assert "unusual_ip" not in assess(api, db, p, ip="198.51.100.7")[1]
    history(db, p, [1000], ip="192.0.2.30")
    # The same /24 is usual; another network is not.
    assert "unusual_ip" not in assess(api, db, p, ip="192.0.2.77")[1]
    assert assess(api, db, p, ip="198.51.100.7")[1]["unusual_ip"] == \
        ("198.51.100.7", "none of 3 in /24")
    assert assess(api, db, p, ip="2001:db8::1")[1]["unusual_ip"][0] == \
        "2001:db8::1"


def test_blocklist(api, db, redirect_payer):
    p = redirect_payer
    psd2ctl("risk", "block", BLOCKED, "--reason", "mule account")
    assert "blocklist" not in assess(api, db, p, creditor=OTHER)[1]
    pid, fired = assess(api, db, p, creditor=BLOCKED)
    assert fired["blocklist"][0] == BLOCKED
    # Score 100: high, held.
    assert sql1(db, "SELECT held FROM payment WHERE id = %s", pid)
    psd2ctl("risk", "unblock", BLOCKED)
    assert "blocklist" not in assess(api, db, p, creditor=BLOCKED)[1]


def test_instant_payment_at_night(api, db, redirect_payer):
    p = redirect_payer
    now = datetime.datetime.now(zoneinfo.ZoneInfo("Europe/Berlin"))

    def hm(minutes):
        return (now + datetime.timedelta(minutes=minutes)).strftime("%H:%M")
    # The bank's night as a window that holds now (across midnight or
    # not, the rule reads it the same).
    rule_set("instant_night", "--param", "from=" + hm(-2), "--param",
             "to=" + hm(30), "--param", "time_zone=Europe/Berlin")
    fired = assess(api, db, p, product="instant-sepa-credit-transfers")[1]
    assert fired["instant_night"][1] == "%s-%s" % (hm(-2), hm(30))
    # Not an instant payment.
    assert "instant_night" not in assess(api, db, p)[1]
    # The night ended two minutes ago.
    rule_set("instant_night", "--param", "from=" + hm(-60), "--param",
             "to=" + hm(-2))
    assert "instant_night" not in assess(
        api, db, p, product="instant-sepa-credit-transfers")[1]


def test_config_refuses_bad_values_and_is_audited(db):
    before = sql1(db, "SELECT max(id) FROM audit_log")
    for args in (["set", "velocity_count", "--param", "nope=1"],
                 ["set", "velocity_count", "--param", "count=x"],
                 ["set", "instant_night", "--param", "from=25:00"],
                 ["set", "instant_night", "--param", "time_zone=Mars/Base"],
                 ["set", "no_such_rule", "--enable"],
                 ["level", "low", "--action", "hold"],
                 ["level", "high", "--action", "explode"],
                 ["block", "not-an-iban", "--reason", "x"]):
        with pytest.raises(Exception):
            psd2ctl("risk", *args)
    assert sql1(db, "SELECT count(*) FROM audit_log WHERE id > %s AND "
                "action LIKE 'risk.%%'", before) == 0
    psd2ctl("risk", "set", "velocity_count", "--enable", "--score", "55")
    psd2ctl("risk", "level", "high", "--action", "reject")
    psd2ctl("risk", "block", BLOCKED, "--reason", "mule account")
    rows = sql(db, "SELECT actor, action, detail FROM audit_log WHERE "
               "id > %s AND action LIKE 'risk.%%' ORDER BY id", before)
    assert [r[1] for r in rows] == ["risk.rule_set", "risk.level_set",
                                    "risk.block_add"]
    assert all(r[0].startswith("operator:") for r in rows)
    assert rows[0][2]["score"] == 55 and rows[0][2]["enabled"] is True
    assert rows[0][2]["before"]["score"] == 40
    assert rows[1][2]["action"] == "reject"
    shown = psd2ctl("risk", "show").stdout
    assert "velocity_count\ton\t55" in shown and BLOCKED in shown


# ---- held, reviewed, released or rejected ------------------------------

def tpp_answers(api, payer, pid):
    """The TPP's status and authorisation answers, each checked against
    the contract's OpenAPI document."""
    base = "%s/%s" % (SCT, pid)
    out = []
    auth = api.get(base + "/authorisations", payer.token).json()
    for path in (base + "/status",
                 base + "/authorisations/" + auth["authorisationIds"][0]):
        r = api.get(path, payer.token)
        assert r.status_code == 200, r.text
        assert openapi_check.problems("GET", MAIN_URL + path, 200,
                                      r.headers, r.content) == []
        out.append(r.json())
    return out


def no_rule_named(text):
    low = text.lower()
    assert not any(w in low for w in ("block", "rule", "risk", "fraud",
                                      "score", "mule")), text


def review_step(sess, pid, form):
    r = sess.get(STAFF_URL + "/staff/reviews/payment", params={"id": pid})
    assert r.status_code == 200, r.text
    return form_post(sess, Page(r.text), form)


def challenges(db, payer):
    return sql1(db, """SELECT count(*) FROM device_challenge c JOIN psu u
        ON u.id = c.psu_id WHERE u.username = %s""", payer.psu.username)


def test_held_released_by_a_second_member_then_completes(
        staff_server, api, db, emulator, payer):
    psd2ctl("risk", "block", BLOCKED, "--reason", "mule account")
    r = api.initiate(payer, body=payment_body(payer, creditor=BLOCKED))
    assert r.status_code == 201, r.text
    assert openapi_check.problems("POST", MAIN_URL + SCT, 201, r.headers,
                                  r.content) == []
    body = r.json()
    pid = body["paymentId"]
    # Decoupled was asked for; held, nothing goes to the device.
    assert body["transactionStatus"] == "RCVD"
    assert body["scaStatus"] == "received"
    no_rule_named(r.text)
    assert sql1(db, "SELECT held FROM payment WHERE id = %s", pid)
    assert challenges(db, payer) == 0
    st, sca = tpp_answers(api, payer, pid)
    assert st == {"transactionStatus": "RCVD"}
    assert sca["scaStatus"] == "received"
    no_rule_named(json.dumps([st, sca]))
    risk = sql1(db, "SELECT detail FROM audit_log WHERE action = "
                "'payment.risk' AND detail->>'payment' = %s", pid)
    assert risk["outcome"] == "held" and risk["rules"] == ["blocklist"]

    first, s1 = staff_login()
    second, s2 = staff_login()
    r = s1.get(STAFF_URL + "/staff/reviews", params={"q": BLOCKED})
    assert r.status_code == 200, r.text
    assert ("review-" + pid) in r.text
    r = s1.get(STAFF_URL + "/staff/reviews/payment", params={"id": pid})
    page = Page(r.text)
    assert "blocklist" in page.by_id["rule-blocklist"].text
    assert BLOCKED in page.by_id["rule-blocklist"].text
    assert page.by_id["review-psu"].text.strip().startswith(
        payer.psu.username)
    r = review_step(s1, pid, "propose-release")
    assert r.status_code == 200 and "staff_done_review_propose_release" \
        in r.text, r.text
    # The proposer cannot confirm: four eyes.
    r = review_step(s1, pid, "review-confirm")
    assert r.status_code == 409 and "staff_result_review_same_person" \
        in r.text, r.text
    assert sql1(db, "SELECT held FROM payment WHERE id = %s", pid)
    assert challenges(db, payer) == 0
    # A second member confirms: SCA starts now, deadline from now.
    r = review_step(s2, pid, "review-confirm")
    assert r.status_code == 200 and "staff_done_review_confirm" in r.text
    left = sql1(db, """SELECT extract(epoch FROM c.deadline - now())
        FROM payment_authorisation a JOIN device_challenge c
        ON c.id = a.challenge_id WHERE a.payment_id = %s""", pid)
    assert SCA_SECONDS - 3 < left <= SCA_SECONDS
    shown = wait_shown(emulator, payer.serial)
    assert "12.34 EUR" in shown
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "ACSC", timeout=10) == \
        ("ACSC", None, "finalised")
    steps = sql(db, """SELECT actor, detail->>'step' FROM audit_log WHERE
        action = 'payment.review' AND detail->>'payment' = %s
        ORDER BY id""", pid)
    assert steps == [("staff:" + first, "propose_release"),
                     ("staff:" + second, "confirm_release")]


def test_rejected_on_review_never_reaches_the_device(
        staff_server, api, db, emulator, payer, browser):
    psd2ctl("risk", "block", BLOCKED, "--reason", "mule account")
    pid = api.initiate(payer, body=payment_body(
        payer, creditor=BLOCKED)).json()["paymentId"]
    _, s1 = staff_login()
    second, s2 = staff_login()
    # A proposal can be withdrawn; the review is open again.
    assert review_step(s1, pid, "propose-release").status_code == 200
    assert review_step(s2, pid, "review-withdraw").status_code == 200
    assert sql1(db, "SELECT status FROM payment_review WHERE "
                "payment_id = %s", pid) == "open"
    # Ids that are not a held payment's.
    assert s1.get(STAFF_URL + "/staff/reviews/payment",
                  params={"id": "not-a-uuid"}).status_code == 400
    assert s1.get(STAFF_URL + "/staff/reviews/payment",
                  params={"id": "0" * 8 + "-0000-0000-0000-" + "0" * 12}
                  ).status_code == 404
    assert review_step(s1, pid, "propose-reject").status_code == 200
    r = review_step(s2, pid, "review-confirm")
    assert r.status_code == 200, r.text
    assert payment_row(db, pid) == ("RJCT", "rejected on review", "failed")
    assert challenges(db, payer) == 0
    st, sca = tpp_answers(api, payer, pid)
    assert st["transactionStatus"] == "RJCT"
    no_rule_named(json.dumps([st, sca]))
    # Not in the waiting queue any more; among the rejected ones.
    r = s2.get(STAFF_URL + "/staff/reviews", params={"q": BLOCKED})
    assert ("review-" + pid) not in r.text
    r = s2.get(STAFF_URL + "/staff/reviews", params={"status": "rejected",
                                                     "q": BLOCKED})
    assert ("review-" + pid) in r.text
    steps = sql(db, """SELECT detail->>'step' FROM audit_log WHERE
        action = 'payment.review' AND detail->>'payment' = %s
        ORDER BY id""", pid)
    assert [x[0] for x in steps] == ["propose_release", "withdraw",
                                     "propose_reject", "confirm_reject"]
    # The PSU sees why, in their words (never the score or the values).
    d = browser("en-US")
    login(d, MAIN_URL + "/auth/payments", payer.psu)
    WebDriverWait(d, 20).until(lambda x: x.find_elements(
        By.ID, "payment-" + pid))
    item = d.find_element(By.ID, "payment-" + pid)
    assert item.get_attribute("data-status") == "RJCT"
    assert item.find_element(By.CLASS_NAME, "payment-reason").text == \
        "your bank checked it and did not execute it"
    assert "list of accounts linked to fraud" in item.find_element(
        By.CLASS_NAME, "payment-risk").text


def test_level_rejects_at_once(api, db, emulator, payer):
    psd2ctl("risk", "level", "high", "--action", "reject")
    psd2ctl("risk", "block", BLOCKED, "--reason", "mule account")
    r = api.initiate(payer, body=payment_body(payer, creditor=BLOCKED))
    assert r.status_code == 201, r.text
    assert openapi_check.problems("POST", MAIN_URL + SCT, 201, r.headers,
                                  r.content) == []
    pid = r.json()["paymentId"]
    no_rule_named(r.text)
    assert payment_row(db, pid) == ("RJCT", "suspected fraud", "failed")
    assert challenges(db, payer) == 0
    assert sql1(db, "SELECT count(*) FROM payment_review WHERE "
                "payment_id = %s", pid) == 0
    st, _ = tpp_answers(api, payer, pid)
    assert st == {"transactionStatus": "RJCT",
                  "psuMessage": "The payment was not authorised."}
    # The device stays idle.
    assert "PAY" not in emulator.show(payer.serial)


def test_held_redirect_page_waits_for_the_release(
        staff_server, api, db, server, payer_factory, browser):
    """Redirect SCA: the bank's page of a held payment says it is being
    checked and offers no way to authorise it (a forged post is refused);
    after the release it offers SCA, with the redirect deadline from the
    release."""
    payer = payer_factory(device=False)
    psd2ctl("risk", "block", BLOCKED, "--reason", "mule account")
    r = api.initiate(payer, decoupled=False,
                     body=payment_body(payer, creditor=BLOCKED),
                     headers={"TPP-Redirect-URI": REDIRECT})
    assert r.status_code == 201, r.text
    body = r.json()
    pid, url = body["paymentId"], server.url + \
        body["_links"]["scaRedirect"]["href"]
    no_rule_named(body["psuMessage"])
    assert sql1(db, "SELECT deadline FROM payment_authorisation WHERE "
                "payment_id = %s", pid) is None
    d = browser("de-DE")
    login_payment(d, url, payer.psu)
    item = d.find_element(By.ID, "payment-" + pid)
    assert item.get_attribute("data-status") == "HELD"
    assert d.find_elements(By.ID, "authorise-held")
    assert d.find_elements(By.ID, "authorise-form") == []
    assert d.find_elements(By.ID, "authorise-device-form") == []
    assert "Liste Ihrer Bank" in item.find_element(
        By.CLASS_NAME, "payment-risk").text
    # The page's opening did not start the authorisation.
    assert payment_row(db, pid) == ("RCVD", None, "received")

    _, s1 = staff_login()
    _, s2 = staff_login()
    assert review_step(s1, pid, "propose-release").status_code == 200
    assert review_step(s2, pid, "review-confirm").status_code == 200
    left = sql1(db, "SELECT extract(epoch FROM deadline - now()) FROM "
                "payment_authorisation WHERE payment_id = %s", pid)
    assert REDIRECT_SECONDS - 5 < left <= REDIRECT_SECONDS
    d.get(url)
    WebDriverWait(d, 20).until(lambda x: x.find_elements(
        By.ID, "authorise-form"))
    assert d.find_elements(By.ID, "authorise-held") == []
    assert d.find_element(By.ID, "payment-" + pid).get_attribute(
        "data-status") == "RCVD"
