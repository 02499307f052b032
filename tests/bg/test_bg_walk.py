"""The standard interface end to end, as a TPP's client built from the
guidelines and src/bg/README.md uses it (tests/bg/bgclient.py): each kind
of consent (dedicated, bank-offered, availableAccounts,
availableAccountsWithBalance, allPsd2) created, authorised by the PSU
through the redirect approach in Chromium (JavaScript off for some) and
through the integrated OAuth approach, then the accounts, balances and
transactions it gives read by following the bank's links (paging
included); explicit authorisation, denial, deletion, funds confirmation;
and each refusal of README "Errors" with its exact status and code,
changing nothing in the database. Every request and response is also
checked against the Berlin Group's file (tests/lib/bg_openapi.py)."""

import contextlib
import datetime
import os
import re
import secrets
import shutil
import subprocess
import uuid

import pytest

import bg_openapi
import psd2lib
from bgclient import (ROOT, BgClient, TppCallback, expect, psu_in_chromium,
                      psu_in_plain_browser)
from conftest import (ACCOUNT_LIST, account_row, add_balance,
                      add_transactions, day, settle, sql, token_hash,
                      tpp_error)

KINDS = ("dedicated", "bankOffered", "availableAccounts",
         "availableAccountsWithBalance", "allPsd2")
# Tables a refused request may see written: the replay mark of a signed
# request (taken before the consent is looked at, README "Errors"), the
# rate limiter's counters, and the audit chain, which the sealer extends
# in the background over earlier audit rows (an audit_log row of the
# refusal itself would still count).
MAY_WRITE = ("request_replay", "rate_counter", "audit_chain")
BALANCE_MINOR = (100000, 250075, 999)
TODAY_MINOR = -1234
BOOKED_PAST = 60        # more than psd2_page_size (50): two pages


def euros(minor):
    sign = "-" if minor < 0 else ""
    return "%s%d.%02d" % (sign, abs(minor) // 100, abs(minor) % 100)


# --------------------------------------------------------------------------
# The bank's data and the TPP

@pytest.fixture(scope="module")
def callback():
    cb = TppCallback()
    yield cb
    cb.close()


def new_tpp(callback, signer, pkce=True):
    client = psd2lib.make_client(redirect_uris=[
        callback.at("/ok"), callback.at("/nok"), callback.at("/oauth")],
        pkce_required=pkce)
    tpp = BgClient(client, signer, callback)
    # The TPP's own token first: fetching it writes a row.
    tpp.tpp_token()
    return tpp


@pytest.fixture
def tpp(callback, signer, service_setup):
    return new_tpp(callback, signer)


class Holder:
    """A PSU with three accounts, their balances and transactions."""

    def __init__(self, db, today):
        self.psu = psd2lib.make_psu(n_accounts=3)
        self.ibans = [iban for iban, _ in self.psu.accounts]
        self.names = dict(self.psu.accounts)
        self.booked = {}
        for i, iban in enumerate(self.ibans):
            add_balance(db, iban, BALANCE_MINOR[i])
            rows = [(today, today, TODAY_MINOR, "today")]
            n = BOOKED_PAST if i == 0 else 3
            rows += [(day(today, 1 + k % 20), day(today, 1 + k % 20),
                      -(k + 1) * 10, "past %d" % k) for k in range(n)]
            self.booked[iban] = dict(zip(add_transactions(db, iban, rows),
                                         rows))

    def resource_id(self, db, iban):
        return account_row(db, iban)[1]


@pytest.fixture
def holder(db, today, service_setup):
    return Holder(db, today)


def access_for(kind, h):
    """The access object of each kind (bank-offered: the PSU ticks the
    second account)."""
    if kind == "dedicated":
        return {"accounts": [{"iban": h.ibans[0]}, {"iban": h.ibans[1]}],
                "balances": [{"iban": h.ibans[0]}],
                "transactions": [{"iban": h.ibans[0], "currency": "EUR"}]}
    if kind == "bankOffered":
        return {"accounts": [], "balances": [], "transactions": []}
    return {kind: "allAccounts"}


def rights_for(kind, h):
    """{iban: (balances, transactions)} of the consent once given."""
    if kind == "dedicated":
        return {h.ibans[0]: (True, True), h.ibans[1]: (False, False)}
    if kind == "bankOffered":
        return {h.ibans[1]: (True, True)}
    return {i: {"availableAccounts": (False, False),
                "availableAccountsWithBalance": (True, False),
                "allPsd2": (True, True)}[kind] for i in h.ibans}


def ticks_for(kind, h):
    return [h.ibans[1]] if kind == "bankOffered" else None


@contextlib.contextmanager
def unchanged(dbinfo):
    """The block writes no row (but MAY_WRITE)."""
    settle(dbinfo)
    before = psd2lib.db_rows(dbinfo, exclude=MAY_WRITE)
    yield
    after = psd2lib.db_rows(dbinfo, exclude=MAY_WRITE)
    assert psd2lib.rows_written(before, after) == []


@pytest.fixture
def browsers():
    """Chromium on demand: browsers(javascript=...)."""
    started = []

    def start(javascript=True):
        d = psd2lib.chromium(javascript=javascript)
        started.append(d)
        if not javascript:
            d.get("data:text/html,<p id=x>a</p><script>document."
                  "getElementById('x').textContent='b'</script>")
            assert d.find_element("id", "x").text == "a", "JavaScript is on"
        return d
    yield start
    for d in started:
        psd2lib.quit_chromium(d)


def give(tpp, h, kind="dedicated", decision="approve", **kw):
    """A consent of kind authorised (or denied) by the PSU through the
    redirect approach, with plain HTTP (not the subject of the test)."""
    consent = tpp.create_consent(access_for(kind, h), **kw)
    since = tpp.callback.mark()
    psu_in_plain_browser(consent.href("scaRedirect"), h.psu,
                         ticks_for(kind, h), decision)
    tpp.callback.wait_path("/ok" if decision == "approve" else "/nok", since)
    want = "valid" if decision == "approve" else "rejected"
    assert tpp.wait_consent_status(consent, want) == want
    return consent


# --------------------------------------------------------------------------
# What a given consent reads

def check_account(a, h, db, rights, with_balance):
    iban = a["iban"]
    bal, tx = rights[iban]
    assert a["resourceId"] == h.resource_id(db, iban)
    assert (a["currency"], a["name"], a["cashAccountType"], a["status"],
            a["ownerName"]) == ("EUR", h.names[iban], "CACC", "enabled",
                                h.psu.name)
    links = a.get("_links") or {}
    assert ("balances" in links, "transactions" in links) == (bal, tx), a
    assert ("balances" in a) == (bal and with_balance), a


def check_balances(body, h, iban):
    i = h.ibans.index(iban)
    assert body["account"]["iban"] == iban
    assert body["account"]["currency"] == "EUR"
    got = {b["balanceType"]: b for b in body["balances"]}
    assert set(got) == {"closingBooked", "interimAvailable", "expected"}
    for b in got.values():
        assert b["balanceAmount"]["currency"] == "EUR"
    now = BALANCE_MINOR[i]
    assert got["interimAvailable"]["balanceAmount"]["amount"] == euros(now)
    assert got["expected"]["balanceAmount"]["amount"] == euros(now)
    # End of yesterday: today's booking taken off.
    assert got["closingBooked"]["balanceAmount"]["amount"] == \
        euros(now - TODAY_MINOR)
    yesterday = (datetime.date.today() -
                 datetime.timedelta(days=1)).isoformat()
    assert got["closingBooked"]["referenceDate"] == yesterday
    assert "lastChangeDateTime" in got["interimAvailable"]


def check_transactions(pages, h, iban):
    booked = [t for p in pages for t in p["transactions"]["booked"]]
    ids = [t["transactionId"] for t in booked]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(h.booked[iban])
    dates = [t["bookingDate"] for t in booked]
    assert dates == sorted(dates, reverse=True), "newest first"
    for t in booked:
        _, _, minor, _ = h.booked[iban][t["transactionId"]]
        assert t["transactionAmount"] == {"currency": "EUR",
                                          "amount": euros(minor)}
    if len(h.booked[iban]) > 50:
        assert len(pages) >= 2
    for p in pages:
        assert p.get("account", {"iban": iban})["iban"] == iban


def read_everything(tpp, consent, h, db, kind, token=None):
    """The account list, each account, its balances and transactions as
    the consent gives them; what it does not give is refused."""
    rights = rights_for(kind, h)
    date_from = day(datetime.date.today(), 30).isoformat()
    href = tpp.accounts_href(consent)
    for with_balance in (False, True):
        r = expect(tpp.account_list(consent.id, token, with_balance,
                                    href=href), 200)
        accounts = r.json()["accounts"]
        assert sorted(a["iban"] for a in accounts) == sorted(rights)
        for a in accounts:
            check_account(a, h, db, rights, with_balance)
    for a in accounts:
        iban = a["iban"]
        bal, tx = rights[iban]
        r = expect(tpp.account_details(consent.id, a["resourceId"], token),
                   200)
        check_account(r.json()["account"], h, db, rights, False)
        base = "%s/accounts/%s" % (ROOT, a["resourceId"])
        if bal:
            r = expect(tpp.follow(a["_links"], "balances", consent.id,
                                  token), 200)
            check_balances(r.json(), h, iban)
        else:
            tpp_error(tpp.call("GET", base + "/balances", token=token,
                               consent_id=consent.id), 401,
                      "CONSENT_INVALID")
        if tx:
            pages = tpp.transactions(a, consent.id, date_from, token)
            check_transactions(pages, h, iban)
            tid = pages[0]["transactions"]["booked"][0]["transactionId"]
            r = expect(tpp.call("GET", "%s/transactions/%s" % (base, tid),
                                token=token, consent_id=consent.id), 200)
            # The entry's fields right under transactionsDetails.
            d = r.json()["transactionsDetails"]
            assert d["transactionId"] == tid
        else:
            tpp_error(tpp.call("GET", base + "/transactions", token=token,
                               consent_id=consent.id,
                               params={"bookingStatus": "booked",
                                       "dateFrom": date_from}),
                      401, "CONSENT_INVALID")
    # The PSU's other accounts are not the TPP's to see.
    for iban in set(h.ibans) - set(rights):
        tpp_error(tpp.account_details(consent.id, h.resource_id(db, iban),
                                      token), 403, "RESOURCE_UNKNOWN")


def check_given_access(tpp, consent, h, kind, today):
    body = expect(tpp.get_consent(consent), 200).json()
    assert body["consentStatus"] == "valid"
    assert body["recurringIndicator"] is True
    assert body["frequencyPerDay"] == 4
    # 9999-12-31 asks for the maximum: 180 days (conf/test.conf).
    assert body["validUntil"] == (today + datetime.timedelta(
        days=180)).isoformat()
    assert "account" in body["_links"]
    if kind in ("dedicated", "bankOffered"):
        rights = rights_for(kind, h)
        got = {k: sorted(x["iban"] for x in body["access"].get(k, []))
               for k in ("accounts", "balances", "transactions")}
        assert got == {
            "accounts": sorted(rights),
            "balances": sorted(i for i, r in rights.items() if r[0]),
            "transactions": sorted(i for i, r in rights.items() if r[1])}


# --------------------------------------------------------------------------
# The walks

@pytest.mark.parametrize("kind,javascript", [
    ("dedicated", True), ("bankOffered", False), ("availableAccounts", True),
    ("availableAccountsWithBalance", False), ("allPsd2", True)])
def test_redirect_approach(kind, javascript, tpp, holder, db, today,
                           browsers):
    h = holder
    before = bg_openapi.checked()["responses"]
    consent = tpp.create_consent(access_for(kind, h))
    r = consent.response
    assert consent.status == "received"
    assert consent.approach == "REDIRECT"
    rel = "%s/consents/%s" % (ROOT, consent.id)
    assert consent.location in (rel, psd2lib.MAIN_URL + rel)
    m = re.fullmatch(re.escape(psd2lib.MAIN_URL) +
                     r"/auth/consents/([^/]+)/authorisations/([^/?]+)",
                     consent.href("scaRedirect"))
    assert m and m.group(1) == consent.id, consent.links
    assert r.headers["X-Request-ID"] == r.request.headers["X-Request-ID"]
    assert tpp.consent_status(consent) == "received"
    since = tpp.callback.mark()
    page = psu_in_chromium(browsers(javascript), consent.href("scaRedirect"),
                           h.psu, ticks_for(kind, h))
    assert tpp.client.name in page
    if kind == "dedicated":
        # The page shows the accounts named, and only those.
        shown = psd2lib.compact(page)
        assert [psd2lib.compact(i) in shown for i in h.ibans] == \
            [True, True, False]
    tpp.callback.wait_path("/ok", since)
    assert tpp.wait_consent_status(consent, "valid") == "valid"
    if "scaStatus" in consent.links:
        assert tpp.sca_status(consent.href("scaStatus")) == "finalised"
    check_given_access(tpp, consent, h, kind, today)
    read_everything(tpp, consent, h, db, kind)
    assert bg_openapi.checked()["responses"] > before + 10


@pytest.mark.parametrize("kind", KINDS)
def test_integrated_oauth_approach(kind, tpp, holder, db, today, signer,
                                   browsers):
    h = holder
    consent = tpp.create_consent(access_for(kind, h), redirect=False)
    assert consent.status == "received"
    # The file's ASPSP-SCA-Approach has no OAUTH: "The OAuth SCA approach
    # will be subsumed by REDIRECT".
    assert consent.approach == "REDIRECT"
    assert "scaRedirect" not in consent.links
    assert consent.href("scaOAuth") == psd2lib.MAIN_URL + \
        "/.well-known/oauth-authorization-server"
    attempt = tpp.oauth_start(consent)
    since = tpp.callback.mark()
    if kind == "dedicated":
        psu_in_chromium(browsers(), attempt.url, h.psu, ticks_for(kind, h))
    else:
        psu_in_plain_browser(attempt.url, h.psu, ticks_for(kind, h))
    tok = tpp.oauth_finish(attempt, since)
    assert tok["scope"] == "AIS:" + consent.id
    assert tpp.wait_consent_status(consent, "valid") == "valid"
    check_given_access(tpp, consent, h, kind, today)
    read_everything(tpp, consent, h, db, kind, token=tok["access_token"])
    # One consent underneath: the contract's paths read it with the same
    # token.
    r = psd2lib.api_get(signer, ACCOUNT_LIST, token=tok["access_token"])
    assert r.status_code == 200, r.text
    # A PSU's token names its own consent only.
    other = tpp.create_consent(access_for("allPsd2", h))
    tpp_error(tpp.account_list(other.id, tok["access_token"]), 403,
              "CONSENT_UNKNOWN")


def test_tpp_token_client_credentials(tpp):
    tok = tpp.fetch_tpp_token()
    assert tok["scope"] == "xs2a"
    assert tok["token_type"].lower() == "bearer"
    assert "refresh_token" not in tok
    tok = tpp.fetch_tpp_token(scope=None)
    assert tok["scope"] == "xs2a"


def test_explicit_authorisation(tpp, holder, db, browsers):
    h = holder
    consent = tpp.create_consent(access_for("allPsd2", h), redirect=False,
                                 explicit=True)
    assert "startAuthorisation" in consent.links, consent.links
    assert not {"scaRedirect", "scaOAuth"} & set(consent.links)
    r = expect(tpp.start_authorisation(consent), 201)
    body = r.json()
    assert body["scaStatus"] == "received"
    assert r.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    auth_id = body["authorisationId"]
    href = body["_links"]["scaRedirect"]["href"]
    assert href.endswith("/auth/consents/%s/authorisations/%s" % (
        consent.id, auth_id))
    r = expect(tpp.call("GET", consent.href("startAuthorisation")), 200)
    assert r.json() == {"authorisationIds": [auth_id]}
    status_href = "%s/consents/%s/authorisations/%s" % (ROOT, consent.id,
                                                       auth_id)
    assert tpp.sca_status(status_href) == "received"
    since = tpp.callback.mark()
    psu_in_chromium(browsers(), href, h.psu)
    tpp.callback.wait_path("/ok", since)
    assert tpp.sca_status(status_href) == "finalised"
    assert tpp.wait_consent_status(consent, "valid") == "valid"
    read_everything(tpp, consent, h, db, "allPsd2")


def test_denied_goes_to_nok_and_rejects(tpp, holder, db):
    consent = give(tpp, holder, "allPsd2", decision="deny")
    r = expect(tpp.call("GET", "%s/consents/%s/authorisations" % (
        ROOT, consent.id)), 200)
    (auth_id,) = r.json()["authorisationIds"]
    assert tpp.sca_status("%s/consents/%s/authorisations/%s" % (
        ROOT, consent.id, auth_id)) == "failed"
    tpp_error(tpp.account_list(consent.id), 401, "CONSENT_INVALID")


def test_delete_ends_consent_and_its_tokens(tpp, holder):
    h = holder
    consent = tpp.create_consent(access_for("allPsd2", h), redirect=False)
    attempt = tpp.oauth_start(consent)
    since = tpp.callback.mark()
    psu_in_plain_browser(attempt.url, h.psu)
    tok = tpp.oauth_finish(attempt, since)["access_token"]
    expect(tpp.account_list(consent.id, tok), 200)
    r = expect(tpp.delete_consent(consent), 204)
    assert r.content == b""
    assert tpp.consent_status(consent) == "terminatedByTpp"
    tpp_error(tpp.account_list(consent.id, tok), 401, "TOKEN_INVALID")
    tpp_error(tpp.account_list(consent.id), 401, "CONSENT_INVALID")


def funds_token(tpp, psu):
    """A PSU's token of the contract's flow with FUND_AVAILABILITY."""
    verifier = secrets.token_urlsafe(48)
    redirect = tpp.callback.at("/ok")
    code, _, _, _ = psd2lib.run_code_flow(
        tpp.client, psu, "FUND_AVAILABILITY", redirect_uri=redirect,
        code_challenge=psd2lib.s256(verifier))
    r = psd2lib.exchange_code(tpp.client, code, redirect_uri=redirect,
                              verifier=verifier)
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def test_funds_confirmation(tpp, holder):
    h = holder
    tok = funds_token(tpp, h.psu)
    iban = h.ibans[0]
    for amount, available in (("1000.00", True), ("1000.01", False)):
        r = expect(tpp.funds_confirmation(tok, iban, amount), 200)
        assert r.json() == {"fundsAvailable": available}


# --------------------------------------------------------------------------
# The refusals of README "Errors", in its order; each changes nothing

@pytest.fixture
def given(tpp, holder):
    """A valid dedicated consent of tpp."""
    return give(tpp, holder)


def test_token_invalid(tpp, given, dbinfo):
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(given.id, token="not-a-token"), 401,
                  "TOKEN_INVALID")


def test_token_expired(tpp, given, db, dbinfo):
    tok = tpp.tpp_token()
    sql(db, "UPDATE token SET expires_at = now() - interval '1 second' "
        "WHERE token_hash = %s", token_hash(tok))
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(given.id, token=tok), 401,
                  "TOKEN_EXPIRED")


def test_signature_missing(tpp, given, dbinfo):
    with unchanged(dbinfo):
        tpp_error(tpp.call("GET", ROOT + "/accounts", consent_id=given.id,
                           drop=("Signature",)), 401, "SIGNATURE_MISSING")


@pytest.fixture(scope="module")
def test_pki(service_setup):
    """tests/pki/mint.sh's test certificates, from the sandbox CA the
    service trusts."""
    d = os.path.join(psd2lib.LOG_DIR, "bg-test-pki")
    # mint.sh keeps what exists: a folder of an earlier run may hold
    # certificates of an earlier sandbox CA.
    shutil.rmtree(d, ignore_errors=True)
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pki",
                                       "mint.sh"), "test", d,
                    os.path.join(psd2lib.TOP, "var", "sandbox", "ca")],
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
    return d


def pki_signer(d, name):
    with open(os.path.join(d, name + ".crt"), "rb") as f:
        crt = f.read()
    with open(os.path.join(d, name + ".key"), "rb") as f:
        key = f.read()
    return psd2lib.Signer(crt, key)


def test_service_blocked_without_role(test_pki, callback, signer, holder,
                                      dbinfo):
    # The sandbox TPP's own token, signed with its certificate that has
    # the role PSP_PI only.
    tpp = BgClient(psd2lib.sandbox_client(), signer, callback)
    tpp.tpp_token()
    tpp.signer = pki_signer(test_pki, "pi")
    with unchanged(dbinfo):
        m = tpp_error(tpp.create_consent_raw(access_for("allPsd2", holder),
                                             redirect=False), 403,
                      "SERVICE_BLOCKED")
    assert "PSP_AI" in m["text"]


def test_format_error_x_request_id_not_a_uuid(tpp, dbinfo, holder):
    # Signed as it is (the signature covers X-Request-ID): the input
    # check refuses it.
    with unchanged(dbinfo), bg_openapi.expect_invalid_request():
        r = tpp.create_consent_raw(access_for("allPsd2", holder),
                                   headers={"X-Request-ID": "request-1"})
    tpp_error(r, 400, "FORMAT_ERROR")
    # The answer's X-Request-ID is a fresh UUID, not the value sent.
    assert r.headers["X-Request-ID"] != "request-1"


def test_format_error_body(tpp, dbinfo, holder):
    with unchanged(dbinfo), bg_openapi.expect_invalid_request():
        tpp_error(tpp.create_consent_raw(access_for("allPsd2", holder),
                                         frequency="4"), 400,
                  "FORMAT_ERROR")


def test_format_error_redirect_uri_not_registered(tpp, dbinfo, holder):
    with unchanged(dbinfo):
        tpp_error(tpp.create_consent_raw(
            access_for("allPsd2", holder),
            headers={"TPP-Redirect-URI": "https://elsewhere.example/cb"}),
            400, "FORMAT_ERROR", path="TPP-Redirect-URI")


@pytest.mark.parametrize("case", [
    "bban", "maskedPan", "additionalInformation", "allAccountsWithOwnerName",
    "restrictedTo"])
def test_parameter_not_supported_in_consent(case, tpp, dbinfo, holder):
    iban = holder.ibans[0]
    access = {
        "bban": {"accounts": [{"bban": "370400440532013000"}]},
        "maskedPan": {"accounts": [{"maskedPan": "123456xxxxxx1234"}]},
        "additionalInformation": {
            "accounts": [{"iban": iban}],
            "additionalInformation": {"ownerName": [{"iban": iban}]}},
        "allAccountsWithOwnerName": {
            "availableAccounts": "allAccountsWithOwnerName"},
        "restrictedTo": {"accounts": [{"iban": iban}],
                         "restrictedTo": ["CACC"]},
    }[case]
    with unchanged(dbinfo):
        tpp_error(tpp.create_consent_raw(access), 400,
                  "PARAMETER_NOT_SUPPORTED")


@pytest.mark.parametrize("params", [
    {"bookingStatus": "information"}, {"bookingStatus": "all"},
    {"deltaList": "true"},
    {"entryReferenceFrom": "abc"}])
def test_parameter_not_supported_in_transactions(params, tpp, given, holder,
                                                 db, dbinfo):
    q = {"bookingStatus": "booked",
         "dateFrom": day(datetime.date.today(), 30).isoformat()}
    q.update(params)
    rid = holder.resource_id(db, holder.ibans[0])
    with unchanged(dbinfo):
        tpp_error(tpp.call("GET", "%s/accounts/%s/transactions" % (ROOT, rid),
                           consent_id=given.id, params=q), 400,
                  "PARAMETER_NOT_SUPPORTED")


def test_sessions_not_supported(tpp, dbinfo, holder):
    with unchanged(dbinfo):
        tpp_error(tpp.create_consent_raw(access_for("allPsd2", holder),
                                         combined=True), 400,
                  "SESSIONS_NOT_SUPPORTED")


def test_period_invalid(tpp, given, holder, db, dbinfo):
    today = datetime.date.today()
    rid = holder.resource_id(db, holder.ibans[0])
    with unchanged(dbinfo):
        tpp_error(tpp.call("GET", "%s/accounts/%s/transactions" % (ROOT, rid),
                           consent_id=given.id, params={
                               "bookingStatus": "booked",
                               "dateFrom": today.isoformat(),
                               "dateTo": day(today, 5).isoformat()}),
                  400, "PERIOD_INVALID")


def test_certificate_of_another_tpp(tpp, given, callback, signer, dbinfo):
    other = new_tpp(callback, signer)
    tpp.signer = other.signer
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(given.id), 401, "CERTIFICATE_INVALID")


def test_replayed_request_id(tpp, given, dbinfo):
    rid = str(uuid.uuid4())
    expect(tpp.account_list(given.id, headers={"X-Request-ID": rid}), 200)
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(given.id, headers={"X-Request-ID": rid}),
                  400, "FORMAT_ERROR", path="X-Request-ID")


def test_consent_unknown(tpp, given, callback, signer, holder, dbinfo):
    other = new_tpp(callback, signer)
    theirs = give(other, holder, "allPsd2")
    with unchanged(dbinfo):
        for cid in (str(uuid.uuid4()), theirs.id):
            tpp_error(tpp.account_list(cid), 403, "CONSENT_UNKNOWN")


def test_consent_invalid_before_authorisation(tpp, holder, dbinfo):
    consent = tpp.create_consent(access_for("allPsd2", holder))
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(consent.id), 401, "CONSENT_INVALID")


def test_consent_expired_by_a_newer_recurring_one(tpp, holder, dbinfo):
    first = give(tpp, holder, "allPsd2")
    second = give(tpp, holder, "dedicated")
    assert tpp.consent_status(first) == "expired"
    expect(tpp.account_list(second.id), 200)
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(first.id), 401, "CONSENT_EXPIRED")


def test_consent_expired_after_valid_until(tpp, given, db, dbinfo):
    # The day after validUntil: shown expired at once, before the
    # housekeeping writes it.
    sql(db, "UPDATE consent SET valid_until = current_date - 1 "
        "WHERE id = %s", given.id)
    assert tpp.consent_status(given) == "expired"
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(given.id), 401, "CONSENT_EXPIRED")


def test_resource_unknown(tpp, given, holder, db, dbinfo):
    other_psu = psd2lib.make_psu(n_accounts=1)
    not_covered = holder.resource_id(db, holder.ibans[2])
    not_hers = account_row(db, other_psu.accounts[0][0])[1]
    with unchanged(dbinfo):
        tpp_error(tpp.account_details(given.id, not_covered), 403,
                  "RESOURCE_UNKNOWN")
        for rid in (not_hers, "no-such-account"):
            tpp_error(tpp.account_details(given.id, rid), 404,
                      "RESOURCE_UNKNOWN")


def test_status_invalid(tpp, holder, dbinfo):
    consent = tpp.create_consent(access_for("allPsd2", holder),
                                 explicit=True)
    r = expect(tpp.start_authorisation(consent), 201)
    since = tpp.callback.mark()
    psu_in_plain_browser(r.json()["_links"]["scaRedirect"]["href"],
                         holder.psu)
    tpp.callback.wait_path("/ok", since)
    assert tpp.wait_consent_status(consent, "valid") == "valid"
    with unchanged(dbinfo):
        tpp_error(tpp.start_authorisation(consent), 409, "STATUS_INVALID")


def test_access_exceeded(tpp, holder, db, dbinfo):
    consent = give(tpp, holder, "allPsd2", frequency=2)
    sql(db, "UPDATE consent SET sca_at = now() - interval '61 minutes' "
        "WHERE id = %s", consent.id)
    for _ in range(2):
        expect(tpp.account_list(consent.id, psu_ip=None), 200)
    with unchanged(dbinfo):
        tpp_error(tpp.account_list(consent.id, psu_ip=None), 429,
                  "ACCESS_EXCEEDED")
    # The PSU present: not counted.
    expect(tpp.account_list(consent.id), 200)


def test_unknown_path(tpp, given, dbinfo):
    with unchanged(dbinfo), bg_openapi.expect_invalid_request():
        r = tpp.call("GET", ROOT + "/no-such-resource", consent_id=given.id)
    assert r.status_code == 404, r.text


@pytest.mark.parametrize("method,path", [
    ("PUT", "/consents"), ("GET", "/card-accounts"),
    ("GET", "/card-accounts/x/balances")])
def test_service_invalid(method, path, tpp, given, dbinfo):
    inside = path.startswith("/card-accounts")
    with unchanged(dbinfo), (contextlib.nullcontext() if inside else
                             bg_openapi.expect_invalid_request()):
        tpp_error(tpp.call(method, ROOT + path, consent_id=given.id,
                           body=None if method == "GET" else {}),
                  405, "SERVICE_INVALID")


def test_funds_confirmation_consent_not_the_tokens(tpp, holder, given,
                                                    dbinfo):
    tok = funds_token(tpp, holder.psu)
    with unchanged(dbinfo):
        tpp_error(tpp.funds_confirmation(tok, holder.ibans[0], "1.00",
                                         consent_id=given.id), 403,
                  "CONSENT_UNKNOWN")

