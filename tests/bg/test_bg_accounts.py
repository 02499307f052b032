"""Account information of the standard interface (src/bg/README.md
"Account information"): GET /xs2a/v1/accounts, /accounts/{account-id},
/balances, /transactions, /transactions/{transactionId} and the card
accounts' 405. Every shape, each right refused, the consent's and the
resource's refusals, the access limit shared with the contract's paths,
paging, the balances' arithmetic and every unsupported parameter.

Consents of the contract's OAuth flow come from the real flow; consents
of the standard interface as a PSU gave them, with restricted rights,
are rows written here (their authorisation by the PSU is another part of
the interface); the TPP's own token comes from the client credentials
grant."""

import contextlib
import datetime
import json
import uuid
from decimal import Decimal

import psycopg2
import pytest

import psd2lib
from bg_openapi import expect_invalid_request
from psd2lib import token_request
from conftest import (ACCOUNT_LIST, BALANCE, BG, add_balance,
                      add_transactions, account_row, consent_of, day,
                      get_tokens, jload, sql, token_hash, tpp_error,
                      tx_path)

ACCOUNTS = BG + "/accounts"
PAGE = 50


class World:
    pass


def xs2a_token(client):
    """The TPP's own token: the client credentials grant, scope xs2a."""
    r = token_request({"grant_type": "client_credentials",
                       "scope": "xs2a"}, client)
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def consent_token(db, client_id, consent):
    """A PSU's access token of a standard consent, as its authorisation
    (the integrated OAuth approach, scope AIS:{consentId}) would issue
    it: a row here, that authorisation being another part of the
    interface."""
    tok = str(uuid.uuid4())
    sql(db, """INSERT INTO token (token_hash, kind, family, client_id,
        consent_id, scopes, expires_at) VALUES (%s, 'access', %s, %s, %s,
        '{ACCOUNT_INFORMATION}', now() + interval '1 hour')""",
        token_hash(tok), str(uuid.uuid4()), client_id, consent)
    return tok


def bg_consent(db, client_id, psu_id, rights, kind="dedicated",
               status="valid", frequency=4, valid_until=None,
               sca_ago="2 hours"):
    """A consent of the standard interface as the PSU gave it: rights
    [(account id, balances, transactions)]."""
    cid = str(uuid.uuid4())
    ibans = dict(sql(db, "SELECT id, iban FROM account WHERE id = ANY(%s)",
                     [r[0] for r in rights]))
    request = {"accounts": [{"iban": ibans[a]} for a, _, _ in rights],
               "balances": [{"iban": ibans[a]} for a, b, _ in rights if b],
               "transactions": [{"iban": ibans[a]}
                                for a, _, t in rights if t]}
    sql(db, """INSERT INTO consent (id, psu_id, client_id, scopes, status,
        valid_until, frequency_per_day, sca_at, surface, access_kind,
        access_request) VALUES (%s, %s, %s, '{ACCOUNT_INFORMATION}', %s,
        coalesce(%s, current_date + 30), %s, now() - %s::interval, 'bg', %s,
        %s)""", cid, psu_id, client_id, status, valid_until, frequency,
        sca_ago, kind, json.dumps(request))
    for acc, bal, tx in rights:
        sql(db, """INSERT INTO consent_account (consent_id, account_id,
            balances, transactions) VALUES (%s, %s, %s, %s)""",
            cid, acc, bal, tx)
    return cid


def invalid_if(flag):
    """Marks a request the official file itself calls invalid."""
    return expect_invalid_request() if flag else contextlib.nullcontext()


def access_rows(db, consent):
    return sql(db, "SELECT count(*) FROM access_log WHERE consent_id = %s",
               consent)[0][0]


@pytest.fixture(scope="module")
def w(service_setup, server, db, today):
    w = World()
    w.today = today
    w.client = psd2lib.sandbox_client()
    w.psu = psd2lib.make_psu(n_accounts=3)
    w.other = psd2lib.make_psu(n_accounts=1)
    (w.a_iban, w.a_name), (w.b_iban, w.b_name), (w.c_iban, _) = \
        w.psu.accounts
    w.d_iban = w.other.accounts[0][0]
    w.a_pk, w.a_id = account_row(db, w.a_iban)
    w.b_pk, w.b_id = account_row(db, w.b_iban)
    w.c_pk, w.c_id = account_row(db, w.c_iban)
    w.d_pk, w.d_id = account_row(db, w.d_iban)
    w.psu_id = sql(db, "SELECT psu_id FROM account WHERE id = %s",
                   w.a_pk)[0][0]
    # Account A: 120 booked transactions, 3 a day over 40 days, and one
    # older than every period asked for here.
    rows = [(day(today, i // 3), day(today, i // 3),
             -(i * 101 + 7) if i % 4 else i * 1000 + 5, "A tx %03d" % i)
            for i in range(120)]
    rows.append((day(today, 400), day(today, 400), 1, "old"))
    w.a_tx = list(zip(add_transactions(db, w.a_iban, rows), rows))
    w.b_tx = add_transactions(db, w.b_iban,
                              [(day(today, 1), day(today, 2), 250, "B in")])
    add_balance(db, w.a_iban, 123450)
    add_balance(db, w.b_iban, -5)
    add_balance(db, w.c_iban, 100)

    # The contract's consent (accounts A and B) with its PSU token; the
    # TPP's own token reads it by Consent-ID too.
    w.token = get_tokens(w.client, w.psu, "ACCOUNT_INFORMATION",
                         accounts=[w.a_iban, w.b_iban])["access_token"]
    w.consent = consent_of(db, w.token)
    w.tpp = xs2a_token(w.client)
    # A standard consent: A with every right, B the list only.
    w.restricted = bg_consent(db, w.client.client_id, w.psu_id,
                              [(w.a_pk, True, True), (w.b_pk, False, False)])
    return w


def get(api, path, tok, consent, headers=None):
    h = {"Consent-ID": consent} if consent is not None else {}
    h.update(headers or {})
    return api.get(path, tok, headers=h)


def account_json(w, resource_id, iban, name, links=("balances",
                                                    "transactions")):
    a = {"resourceId": resource_id, "iban": iban, "currency": "EUR",
         "name": name, "cashAccountType": "CACC", "status": "enabled",
         "ownerName": w.psu.name}
    if links:
        a["_links"] = {k: {"href": "%s/%s/%s" % (ACCOUNTS, resource_id, k)}
                       for k in links}
    return a


def balances_of(body):
    return {b["balanceType"]: b for b in body}


# ---------------------------------------------------------------- shapes

def test_account_list_shape_xs2a_token(w, api):
    r = get(api, ACCOUNTS, w.tpp, w.consent)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.json() == {"accounts": [
        account_json(w, w.a_id, w.a_iban, w.a_name),
        account_json(w, w.b_id, w.b_iban, w.b_name)]}
    assert r.headers["X-Request-ID"] == r.request.headers["X-Request-ID"]


def test_account_list_psu_token_own_consent(w, api):
    r = get(api, ACCOUNTS, w.token, w.consent)
    assert r.status_code == 200, r.text
    assert [a["resourceId"] for a in r.json()["accounts"]] == [w.a_id,
                                                               w.b_id]


def test_account_list_links_follow_rights(w, api):
    r = get(api, ACCOUNTS, w.tpp, w.restricted)
    assert r.status_code == 200, r.text
    assert r.json() == {"accounts": [
        account_json(w, w.a_id, w.a_iban, w.a_name),
        account_json(w, w.b_id, w.b_iban, w.b_name, links=())]}


def test_account_list_with_balance_where_given(w, api):
    r = get(api, ACCOUNTS + "?withBalance=true", w.tpp, w.restricted)
    assert r.status_code == 200, r.text
    a, b = jload(r)["accounts"]
    assert [x["balanceType"] for x in a["balances"]] == [
        "closingBooked", "interimAvailable", "expected"]
    assert balances_of(a["balances"])["interimAvailable"][
        "balanceAmount"] == {"currency": "EUR", "amount": "1234.50"}
    assert "balances" not in b
    r = get(api, ACCOUNTS + "?withBalance=false", w.tpp, w.restricted)
    assert all("balances" not in x for x in r.json()["accounts"])


def test_account_details_shape(w, api):
    r = get(api, "%s/%s" % (ACCOUNTS, w.a_id), w.tpp, w.consent)
    assert r.status_code == 200, r.text
    assert r.json() == {"account": account_json(w, w.a_id, w.a_iban,
                                                w.a_name)}
    r = get(api, "%s/%s?withBalance=true" % (ACCOUNTS, w.b_id), w.token,
            w.consent)
    assert r.status_code == 200, r.text
    body = r.json()["account"]
    assert balances_of(body["balances"])["interimAvailable"][
        "balanceAmount"] == {"currency": "EUR", "amount": "-0.05"}
    r = get(api, "%s/%s?withBalance=true" % (ACCOUNTS, w.b_id), w.tpp,
            w.restricted)
    assert r.json() == {"account": account_json(w, w.b_id, w.b_iban,
                                                w.b_name, links=())}


def test_balances_shape(w, api, today):
    r = get(api, "%s/%s/balances" % (ACCOUNTS, w.a_id), w.tpp, w.consent)
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["account", "balances"]
    assert body["account"] == {"iban": w.a_iban, "currency": "EUR"}
    closing, interim, expected = body["balances"]
    assert list(closing) == ["balanceType", "balanceAmount",
                             "referenceDate"]
    assert closing["balanceType"] == "closingBooked"
    assert closing["referenceDate"] == day(today, 1).isoformat()
    assert interim["balanceType"] == "interimAvailable"
    assert list(interim) == ["balanceType", "balanceAmount",
                             "lastChangeDateTime"]
    assert expected["balanceType"] == "expected"
    for b in body["balances"]:
        assert isinstance(b["balanceAmount"]["amount"], str)
    assert interim["lastChangeDateTime"].endswith("Z")
    datetime.datetime.strptime(interim["lastChangeDateTime"],
                               "%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def arith(db, w, dbinfo, today):
    """An account with a balance, bookings today and yesterday, and one
    payment past its SCA that the booking must not take while the test
    runs (its row is locked; it is cancelled at the end)."""
    psu = psd2lib.make_psu(n_accounts=1)
    iban = psu.accounts[0][0]
    pk, rid = account_row(db, iban)
    psu_id = sql(db, "SELECT psu_id FROM account WHERE id = %s", pk)[0][0]
    add_balance(db, iban, 100000)
    add_transactions(db, iban, [(today, today, -1250, "today out"),
                                (today, today, 200, "today in"),
                                (day(today, 1), day(today, 1), -300,
                                 "yesterday")])
    consent = bg_consent(db, w.client.client_id, psu_id, [(pk, True, True)],
                         kind="allPsd2")
    tpp_id = sql(db, "SELECT tpp_id FROM oauth_client WHERE client_id = %s",
                 w.client.client_id)[0][0]
    lock = psycopg2.connect(psd2lib.as_superuser(dbinfo))
    lock.autocommit = True
    pay = str(uuid.uuid4())
    cur = lock.cursor()
    # No notification (replica role): the booking would book it at once.
    cur.execute("SET session_replication_role = replica")
    cur.execute("""INSERT INTO payment (id, product, psu_id, consent_id,
        client_id, tpp_id, debtor_account_id, debtor_iban, creditor_iban,
        creditor_name, remittance, amount_minor, currency,
        transaction_status) VALUES (%s, 'sepa-credit-transfers', %s, %s,
        %s, %s, %s, %s, 'DE89370400440532013000', 'Shop GmbH', 'order 7',
        725, 'EUR', 'ACTC')""", (pay, psu_id, consent, w.client.client_id,
                                 tpp_id, pk, iban))
    lock.autocommit = False
    cur.execute("SELECT 1 FROM payment WHERE id = %s FOR UPDATE", (pay,))
    yield consent, rid, iban
    cur.execute("UPDATE payment SET transaction_status = 'CANC' "
                "WHERE id = %s", (pay,))
    lock.commit()
    lock.close()


def test_balances_arithmetic(w, api, arith, today):
    consent, rid, iban = arith
    r = get(api, "%s/%s/balances" % (ACCOUNTS, rid), w.tpp, consent)
    assert r.status_code == 200, r.text
    b = balances_of(r.json()["balances"])
    # 1000.00 now; today's bookings (-12.50 + 2.00) taken off for the
    # end of yesterday; the payment of 7.25 waiting for its booking.
    assert b["interimAvailable"]["balanceAmount"] == {
        "currency": "EUR", "amount": "1000.00"}
    assert b["closingBooked"]["balanceAmount"] == {
        "currency": "EUR", "amount": "1010.50"}
    assert b["closingBooked"]["referenceDate"] == day(today, 1).isoformat()
    assert b["expected"]["balanceAmount"] == {
        "currency": "EUR", "amount": "992.75"}


def test_pending_transactions(w, api, arith, today):
    consent, rid, iban = arith
    q = "%s/%s/transactions?bookingStatus=%%s&dateFrom=%s" % (
        ACCOUNTS, rid, day(today, 5).isoformat())
    pending = [{"transactionAmount": {"currency": "EUR", "amount": "-7.25"},
                "creditorName": "Shop GmbH",
                "creditorAccount": {"iban": "DE89370400440532013000"},
                "remittanceInformationUnstructured": "order 7"}]
    r = get(api, q % "pending", w.tpp, consent)
    assert r.status_code == 200, r.text
    tx = r.json()["transactions"]
    assert "booked" not in tx
    assert tx["pending"] == pending
    r = get(api, q % "both", w.tpp, consent)
    tx = r.json()["transactions"]
    assert tx["pending"] == pending
    assert [t["transactionAmount"]["amount"] for t in tx["booked"]] == [
        "2.00", "-12.50", "-3.00"]
    r = get(api, q % "booked", w.tpp, consent)
    assert "pending" not in r.json()["transactions"]


def tx_url(w, rid, date_from, extra=""):
    return "%s/%s/transactions?bookingStatus=booked&dateFrom=%s%s" % (
        ACCOUNTS, rid, date_from.isoformat(), extra)


def test_transactions_shape(w, api, today):
    r = get(api, tx_url(w, w.b_id, day(today, 10)), w.tpp, w.consent)
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["account", "transactions"]
    assert body["account"] == {"iban": w.b_iban, "currency": "EUR"}
    href = ("%s/%s/transactions?bookingStatus=booked&dateFrom=%s&dateTo=%s"
            "&pageIndex=0") % (ACCOUNTS, w.b_id, day(today, 10).isoformat(),
                               today.isoformat())
    assert body["transactions"] == {
        "booked": [{
            "transactionId": w.b_tx[0],
            "bookingDate": day(today, 1).isoformat(),
            "valueDate": day(today, 2).isoformat(),
            "transactionAmount": {"currency": "EUR", "amount": "2.50"},
            "remittanceInformationUnstructured": "B in"}],
        "_links": {"account": {"href": "%s/%s" % (ACCOUNTS, w.b_id)},
                   "first": {"href": href}}}


def test_transactions_with_balance(w, api, today):
    r = get(api, tx_url(w, w.b_id, day(today, 10), "&withBalance=true"),
            w.tpp, w.consent)
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["account", "transactions", "balances"]
    assert [b["balanceType"] for b in body["balances"]] == [
        "closingBooked", "interimAvailable", "expected"]
    assert "withBalance=true" in body["transactions"]["_links"]["first"][
        "href"]


def test_paging_through_links(w, api, today):
    """Newest first, PAGE a page; next / previous / first lead through
    the same query; the amounts are the exact strings."""
    date_from = day(today, 30)
    expect = [(tid, row) for tid, row in w.a_tx if row[0] >= date_from]
    expect.sort(key=lambda x: x[1][0], reverse=True)
    # Inside a day the later insertion first (id order).
    order = {tid: i for i, (tid, _) in enumerate(w.a_tx)}
    expect.sort(key=lambda x: (x[1][0], order[x[0]]), reverse=True)
    url = tx_url(w, w.a_id, date_from)
    seen, pages, prev_href = [], 0, None
    while url:
        r = get(api, url, w.tpp, w.consent)
        assert r.status_code == 200, r.text
        tx = r.json()["transactions"]
        links = tx["_links"]
        assert links["account"] == {"href": "%s/%s" % (ACCOUNTS, w.a_id)}
        assert links["first"]["href"].endswith("&pageIndex=0")
        if pages == 0:
            assert "previous" not in links
        else:
            assert links["previous"]["href"] == prev_href
        prev_href = links["first"]["href"] if pages == 0 else url
        assert len(tx["booked"]) <= PAGE
        seen += tx["booked"]
        pages += 1
        url = links.get("next", {}).get("href")
    assert pages == (len(expect) + PAGE - 1) // PAGE
    assert [t["transactionId"] for t in seen] == [tid for tid, _ in expect]
    for t, (_, row) in zip(seen, expect):
        assert t["bookingDate"] == row[0].isoformat()
        assert Decimal(t["transactionAmount"]["amount"]) == \
            Decimal(row[2]) / 100
        assert t["transactionAmount"]["amount"] == \
            "%s" % (Decimal(row[2]) / 100).quantize(Decimal("0.01"))


def test_page_past_the_end(w, api, today):
    r = get(api, tx_url(w, w.a_id, day(today, 30), "&pageIndex=9"), w.tpp,
            w.consent)
    assert r.status_code == 200, r.text
    tx = r.json()["transactions"]
    assert tx["booked"] == []
    assert tx["_links"]["previous"]["href"].endswith("&pageIndex=8")
    assert "next" not in tx["_links"]


def test_date_to_bounds_the_period(w, api, today):
    r = get(api, tx_url(w, w.a_id, day(today, 2), "&dateTo=%s" %
                        day(today, 1).isoformat()), w.tpp, w.consent)
    assert r.status_code == 200, r.text
    dates = {t["bookingDate"] for t in r.json()["transactions"]["booked"]}
    assert dates == {day(today, 1).isoformat(), day(today, 2).isoformat()}


def test_transaction_details(w, api):
    tid, row = w.a_tx[5]
    r = get(api, "%s/%s/transactions/%s" % (ACCOUNTS, w.a_id, tid), w.tpp,
            w.consent)
    assert r.status_code == 200, r.text
    assert r.json() == {"transactionsDetails": {
        "transactionId": tid,
        "bookingDate": row[0].isoformat(),
        "valueDate": row[1].isoformat(),
        "transactionAmount": {"currency": "EUR", "amount": "%s" % (
            Decimal(row[2]) / 100).quantize(Decimal("0.01"))},
        "remittanceInformationUnstructured": row[3]}}


def test_corrected_transaction_shows_as_corrected(w, api, db, today):
    # Both pages read each entry as its row stores it (migration 191): a
    # row written again shows what was written, on the page and in the
    # details, its text cut to the schema's 140 characters.
    tid = w.b_tx[0]
    long_text = 'corrected "entry" ' + "x" * 200
    try:
        sql(db, """UPDATE account_transaction SET explanation = %s,
                   amount_minor = %s, value_date = %s
                   WHERE transaction_id = %s""",
            long_text, -4711, day(today, 3), tid)
        want = {"transactionId": tid,
                "bookingDate": day(today, 1).isoformat(),
                "valueDate": day(today, 3).isoformat(),
                "transactionAmount": {"currency": "EUR", "amount": "-47.11"},
                "remittanceInformationUnstructured": long_text[:140]}
        r = get(api, tx_url(w, w.b_id, day(today, 10)), w.tpp, w.consent)
        assert r.status_code == 200, r.text
        assert r.json()["transactions"]["booked"] == [want]
        r = get(api, "%s/%s/transactions/%s" % (ACCOUNTS, w.b_id, tid),
                w.tpp, w.consent)
        assert r.status_code == 200, r.text
        assert r.json() == {"transactionsDetails": want}
    finally:
        sql(db, """UPDATE account_transaction SET explanation = %s,
                   amount_minor = %s, value_date = %s
                   WHERE transaction_id = %s""",
            "B in", 250, day(today, 2), tid)


def test_transaction_details_unknown(w, api):
    for tid in ("T" + uuid.uuid4().hex[:20].upper(), w.b_tx[0], "x" * 65,
                "bad!id"):
        r = get(api, "%s/%s/transactions/%s" % (ACCOUNTS, w.a_id, tid),
                w.tpp, w.consent)
        tpp_error(r, 404, "RESOURCE_UNKNOWN", path="transactionId")


def test_card_accounts_not_offered(w, api):
    for p in ("/card-accounts", "/card-accounts/%s" % w.a_id,
              "/card-accounts/%s/balances" % w.a_id,
              "/card-accounts/%s/transactions?bookingStatus=booked" % w.a_id):
        r = get(api, BG + p, w.tpp, w.consent)
        tpp_error(r, 405, "SERVICE_INVALID")
    # Methods the official file does not have there either.
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        with expect_invalid_request():
            r = api.call(method, BG + "/card-accounts/%s" % w.a_id, w.tpp,
                         headers={"Consent-ID": w.consent})
        tpp_error(r, 405, "SERVICE_INVALID")


# ------------------------------------------------------------- refusals

def paths(w, rid, tid="T0"):
    return ["%s/%s" % (ACCOUNTS, rid), "%s/%s/balances" % (ACCOUNTS, rid),
            tx_url(w, rid, w.today), "%s/%s/transactions/%s" % (ACCOUNTS,
                                                                rid, tid)]


def test_rights_refused(w, api):
    """B is in the consent for the list only: its balances, transactions
    and a transaction are 401 CONSENT_INVALID."""
    for p in paths(w, w.b_id, w.b_tx[0])[1:]:
        r = get(api, p, w.tpp, w.restricted)
        tpp_error(r, 401, "CONSENT_INVALID")
    assert get(api, "%s/%s" % (ACCOUNTS, w.b_id), w.tpp,
               w.restricted).status_code == 200


def test_rights_separately(w, api, db, today):
    balances_only = bg_consent(db, w.client.client_id, w.psu_id,
                               [(w.a_pk, True, False)],
                               kind="availableAccountsWithBalance")
    tx_only = bg_consent(db, w.client.client_id, w.psu_id,
                         [(w.a_pk, False, True)])
    bal, tx, det = paths(w, w.a_id, w.a_tx[0][0])[1:]
    assert get(api, bal, w.tpp, balances_only).status_code == 200
    tpp_error(get(api, tx, w.tpp, balances_only), 401, "CONSENT_INVALID")
    tpp_error(get(api, det, w.tpp, balances_only), 401, "CONSENT_INVALID")
    tpp_error(get(api, bal, w.tpp, tx_only), 401, "CONSENT_INVALID")
    assert get(api, tx, w.tpp, tx_only).status_code == 200
    assert get(api, det, w.tpp, tx_only).status_code == 200
    r = get(api, ACCOUNTS, w.tpp, balances_only)
    assert r.json()["accounts"][0]["_links"] == {
        "balances": {"href": "%s/%s/balances" % (ACCOUNTS, w.a_id)}}


def test_contract_paths_honour_the_rights(w, api, db, today):
    """The contract's account-balance and transactions on a consent whose
    account lacks the right: 401 CONSENT_INVALID, nothing recorded."""
    list_only = bg_consent(db, w.client.client_id, w.psu_id,
                           [(w.a_pk, False, False)],
                           kind="availableAccounts")
    psu_tok = consent_token(db, w.client.client_id, list_only)
    assert api.get(ACCOUNT_LIST, psu_tok).status_code == 200
    n = access_rows(db, list_only)
    r = api.get(BALANCE, psu_tok, body={"referenceId": w.a_id})
    tpp_error(r, 401, "CONSENT_INVALID")
    r = api.get(tx_path(w.a_id), psu_tok)
    tpp_error(r, 401, "CONSENT_INVALID")
    assert access_rows(db, list_only) == n
    # The same token on the standard interface.
    tpp_error(get(api, "%s/%s/balances" % (ACCOUNTS, w.a_id), psu_tok,
                  list_only), 401, "CONSENT_INVALID")
    assert get(api, ACCOUNTS, psu_tok, list_only).status_code == 200


def test_resource_unknown_403_vs_404(w, api):
    # C: the PSU's account, not in the consent: 403.
    for p in paths(w, w.c_id):
        tpp_error(get(api, p, w.tpp, w.consent), 403, "RESOURCE_UNKNOWN",
                  path="account-id")
    # D: another PSU's; an id that is no account; one that cannot be.
    for rid in (w.d_id, "no-such-account", "x" * 65, "bad%21id"):
        for p in paths(w, rid):
            tpp_error(get(api, p, w.tpp, w.consent), 404,
                      "RESOURCE_UNKNOWN", path="account-id")


def test_consent_unknown(w, api, db):
    # Not a consent; a consent of another TPP's client; another consent
    # for a PSU's token.
    other = psd2lib.make_client()
    theirs = bg_consent(db, other.client_id, w.psu_id,
                        [(w.a_pk, True, True)])
    for tok, consent in ((w.tpp, str(uuid.uuid4())),
                         (w.tpp, theirs),
                         (w.token, w.restricted)):
        for p in [ACCOUNTS] + paths(w, w.a_id):
            tpp_error(get(api, p, tok, consent), 403, "CONSENT_UNKNOWN",
                      path="Consent-ID")


def test_consent_header_required_and_a_uuid(w, api):
    with expect_invalid_request():
        r = get(api, ACCOUNTS, w.tpp, None)
    tpp_error(r, 400, "FORMAT_ERROR", path="Consent-ID")
    tpp_error(get(api, ACCOUNTS, w.tpp, "not-a-uuid"), 400, "FORMAT_ERROR",
              path="Consent-ID")


@pytest.mark.parametrize("status,code", [
    ("revokedByPsu", "CONSENT_INVALID"),
    ("terminatedByTpp", "CONSENT_INVALID"),
    ("expired", "CONSENT_EXPIRED"),
    ("past validUntil", "CONSENT_EXPIRED"),
    ("received", "CONSENT_INVALID"),
    ("rejected", "CONSENT_INVALID"),
])
def test_consent_not_valid(w, api, db, status, code, today):
    if status == "past validUntil":
        cid = bg_consent(db, w.client.client_id, w.psu_id,
                         [(w.a_pk, True, True)], valid_until=day(today, 1))
    elif status in ("received", "rejected"):
        cid = bg_consent(db, w.client.client_id, w.psu_id,
                         [(w.a_pk, True, True)])
        sql(db, "UPDATE consent SET status = %s, psu_id = NULL, "
            "sca_at = NULL WHERE id = %s", status, cid)
        sql(db, "DELETE FROM consent_account WHERE consent_id = %s", cid)
    else:
        cid = bg_consent(db, w.client.client_id, w.psu_id,
                         [(w.a_pk, True, True)], status=status)
    for p in [ACCOUNTS] + paths(w, w.a_id):
        tpp_error(get(api, p, w.tpp, cid), 401, code)
    assert access_rows(db, cid) == 0


def test_no_token(w, api):
    r = api.get(ACCOUNTS, None, headers={"Consent-ID": w.consent})
    tpp_error(r, 401, "TOKEN_INVALID")
    r = get(api, ACCOUNTS, str(uuid.uuid4()), w.consent)
    tpp_error(r, 401, "TOKEN_INVALID")


# ------------------------------------------------------------------ input

@pytest.mark.parametrize("query,code,path,invalid", [
    ("bookingStatus=information&dateFrom={d}", "PARAMETER_NOT_SUPPORTED",
     "bookingStatus", False),
    ("bookingStatus=all&dateFrom={d}", "PARAMETER_NOT_SUPPORTED",
     "bookingStatus", False),
    ("bookingStatus=booked&dateFrom={d}&entryReferenceFrom=1234",
     "PARAMETER_NOT_SUPPORTED", None, False),
    ("bookingStatus=booked&dateFrom={d}&deltaList=true",
     "PARAMETER_NOT_SUPPORTED", None, False),
    ("bookingStatus=booked&dateFrom={d}&itemsPerPage=10",
     "PARAMETER_NOT_SUPPORTED", None, False),
    ("dateFrom={d}", "FORMAT_ERROR", "bookingStatus", True),
    ("bookingStatus=BOOKED&dateFrom={d}", "FORMAT_ERROR", "bookingStatus",
     True),
    ("bookingStatus=booked", "FORMAT_ERROR", "dateFrom", False),
    ("bookingStatus=booked&dateFrom=2024-02-30", "FORMAT_ERROR", "dateFrom",
     True),
    ("bookingStatus=booked&dateFrom={d}&dateTo=yesterday", "FORMAT_ERROR",
     "dateTo", True),
    ("bookingStatus=booked&dateFrom={d}&withBalance=yes", "FORMAT_ERROR",
     "withBalance", True),
    ("bookingStatus=booked&dateFrom={d}&pageIndex=-1", "FORMAT_ERROR",
     "pageIndex", False),
    ("bookingStatus=booked&dateFrom={d}&pageIndex=1234567890",
     "FORMAT_ERROR", "pageIndex", False),
    ("bookingStatus=booked&dateFrom={d}&dateFrom={d}", "FORMAT_ERROR",
     "dateFrom", True),
    ("bookingStatus=booked&dateFrom={d}&dateTo={e}", "PERIOD_INVALID",
     "dateFrom", False),
    ("bookingStatus=booked&dateFrom={f}", "PERIOD_INVALID", "dateFrom", False),
])
def test_transactions_input_refused(w, api, db, today, query, code, path,
                                   invalid):
    q = query.format(d=day(today, 3).isoformat(),
                     e=day(today, 4).isoformat(),
                     f=(today + datetime.timedelta(days=1)).isoformat())
    n = access_rows(db, w.consent)
    with invalid_if(invalid):
        r = get(api, "%s/%s/transactions?%s" % (ACCOUNTS, w.a_id, q),
                w.tpp, w.consent)
    tpp_error(r, 400, code, path=path)
    assert access_rows(db, w.consent) == n


def test_other_parameters_refused(w, api, db):
    n = access_rows(db, w.consent)
    for p in (ACCOUNTS + "?withBalance=true&foo=1",
              "%s/%s/balances?withBalance=true" % (ACCOUNTS, w.a_id),
              "%s/%s?x=1" % (ACCOUNTS, w.a_id),
              "%s/%s/transactions/%s?y" % (ACCOUNTS, w.a_id, w.a_tx[0][0])):
        tpp_error(get(api, p, w.tpp, w.consent), 400,
                  "PARAMETER_NOT_SUPPORTED")
    with expect_invalid_request():
        r = get(api, ACCOUNTS + "?withBalance=1", w.tpp, w.consent)
    tpp_error(r, 400, "FORMAT_ERROR", path="withBalance")
    assert access_rows(db, w.consent) == n


def test_bad_input_changes_nothing(w, api, db, today):
    before = sql(db, "SELECT last_used_at, status FROM consent WHERE id = %s",
                 w.restricted)
    n = access_rows(db, w.restricted)
    assert get(api, "%s/%s/transactions?bookingStatus=both" % (
        ACCOUNTS, w.a_id), w.tpp, w.restricted).status_code == 400
    with expect_invalid_request():
        assert get(api, ACCOUNTS + "?withBalance=maybe", w.tpp,
                   w.restricted).status_code == 400
    for p in paths(w, w.b_id)[1:]:
        assert get(api, p, w.tpp, w.restricted).status_code == 401
    assert get(api, "%s/%s" % (ACCOUNTS, w.c_id), w.tpp,
               w.restricted).status_code == 403
    assert access_rows(db, w.restricted) == n
    assert sql(db, "SELECT last_used_at, status FROM consent WHERE id = %s",
               w.restricted) == before


# ---------------------------------------------------------- access limit

def exceeded(r):
    tpp_error(r, 429, "ACCESS_EXCEEDED")


def test_limit_frequency_per_day(w, api, db, today):
    cid = bg_consent(db, w.client.client_id, w.psu_id,
                     [(w.a_pk, True, True), (w.b_pk, True, True)],
                     frequency=2)
    for p in [ACCOUNTS] + paths(w, w.a_id, w.a_tx[0][0]):
        for _ in range(2):
            assert get(api, p, w.tpp, cid).status_code == 200, p
        exceeded(get(api, p, w.tpp, cid))
        # The PSU present: not counted, not limited.
        assert get(api, p, w.tpp, cid, headers={
            "PSU-IP-Address": "192.0.2.7"}).status_code == 200
    # Per account: B has its own two.
    for p in paths(w, w.b_id, w.b_tx[0]):
        assert get(api, p, w.tpp, cid).status_code == 200


def test_limit_not_within_an_hour_of_sca(w, api, db):
    cid = bg_consent(db, w.client.client_id, w.psu_id,
                     [(w.a_pk, True, True)], frequency=1, sca_ago="5 minutes")
    for _ in range(3):
        assert get(api, ACCOUNTS, w.tpp, cid).status_code == 200
    sql(db, "UPDATE consent SET sca_at = now() - interval '61 minutes' "
        "WHERE id = %s", cid)
    assert get(api, ACCOUNTS, w.tpp, cid).status_code == 200
    exceeded(get(api, ACCOUNTS, w.tpp, cid))


def test_limit_shared_with_the_contract(w, api, db, today):
    """One consent, read on both surfaces: one count per endpoint."""
    psu = psd2lib.make_psu(n_accounts=1)
    iban = psu.accounts[0][0]
    _, rid = account_row(db, iban)
    add_balance(db, iban, 500)
    tok = get_tokens(w.client, psu, "ACCOUNT_INFORMATION")["access_token"]
    cid = consent_of(db, tok)
    sql(db, "UPDATE consent SET sca_at = now() - interval '2 hours' "
        "WHERE id = %s", cid)
    pairs = [
        (lambda: api.get(ACCOUNT_LIST, tok),
         lambda: get(api, ACCOUNTS, w.tpp, cid)),
        (lambda: api.get(BALANCE, tok, body={"referenceId": rid}),
         lambda: get(api, "%s/%s/balances" % (ACCOUNTS, rid), w.tpp, cid)),
        (lambda: api.get(tx_path(rid), tok),
         lambda: get(api, tx_url(w, rid, day(today, 5)), tok, cid)),
    ]
    for contract, standard in pairs:
        for _ in range(2):
            assert contract().status_code == 200
            assert standard().status_code == 200
        exceeded(standard())
        exceeded(contract())


def test_further_page_same_read(w, api, db, today):
    cid = bg_consent(db, w.client.client_id, w.psu_id,
                     [(w.a_pk, True, True)], frequency=1)
    first = tx_url(w, w.a_id, day(today, 30))
    r = get(api, first, w.tpp, cid)
    assert r.status_code == 200, r.text
    nxt = r.json()["transactions"]["_links"]["next"]["href"]
    assert get(api, nxt, w.tpp, cid).status_code == 200
    exceeded(get(api, first, w.tpp, cid))
