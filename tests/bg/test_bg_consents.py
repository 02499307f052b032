"""The consent resource of the standard interface (src/bg/README.md
"Consents", the API half of "SCA of a consent"): POST /xs2a/v1/consents
with the TPP's own token, every rule of the request, the answer and its
links, GET / status / DELETE, the authorisation sub-resources, and the
contract's consents read through the same paths."""

import datetime
import uuid

import pytest

import bg_openapi
import psd2lib
from psd2lib import db_rows, make_client, make_psu, rows_written, \
    token_request

from conftest import BG, Api, get_tokens, consent_of, settle, sql, \
    tpp_error

CONSENTS = BG + "/consents"
WELL_KNOWN = "/.well-known/oauth-authorization-server"
OK_URI = "https://tpp.example/callback"
NOK_URI = "https://tpp.example/nok"
IP = {"PSU-IP-Address": "192.0.2.10"}

# Tables that a refused request may still touch: the replay marks of
# signed requests (a refused request keeps its X-Request-ID spent), and
# the audit chain, which the sealer extends over earlier rows at any time.
NOT_DATA = ("request_replay", "audit_chain")


class Tpp:
    """A TPP with its client, its own token and its signer."""

    def __init__(self, signer, redirect_uris=(OK_URI, NOK_URI)):
        self.client = make_client(redirect_uris=redirect_uris)
        self.signer = signer.for_org(self.client.org_id)
        self.api = Api(self.signer)
        self.token = self.new_token()

    def new_token(self):
        r = token_request({"grant_type": "client_credentials",
                           "scope": "xs2a"}, self.client)
        assert r.status_code == 200, r.text
        return r.json()["access_token"]

    def call(self, method, path, body=None, headers=None, token=None,
             **kw):
        return self.api.call(method, path, token or self.token, body=body,
                             headers=headers, **kw)

    def create(self, body=None, headers=None, **kw):
        h = dict(IP)
        h.update(headers or {})
        return self.call("POST", CONSENTS, body or consent_body(), h, **kw)

    def created(self, body=None, headers=None):
        r = self.create(body, headers)
        assert r.status_code == 201, r.text
        return r.json()["consentId"]


@pytest.fixture(scope="module")
def tpp(signer):
    return Tpp(signer)


@pytest.fixture(scope="module")
def other_tpp(signer):
    return Tpp(signer)


@pytest.fixture(scope="module")
def max_days(db):
    return 180


def iban():
    return psd2lib.random_iban()


def consent_body(access=None, **kw):
    b = {"access": access if access is not None else
         {"accounts": [{"iban": iban()}]},
         "recurringIndicator": True,
         "validUntil": (datetime.date.today() +
                        datetime.timedelta(days=30)).isoformat(),
         "frequencyPerDay": 4,
         "combinedServiceIndicator": False}
    b.update(kw)
    return b


def consent_row(db, cid):
    rows = sql(db, """SELECT status, psu_id, client_id, scopes, valid_until,
                      frequency_per_day, sca_at, surface, access_kind,
                      access_request, recurring, tpp_redirect_uri,
                      tpp_nok_redirect_uri, host(psu_ip_address), request_id
                      FROM consent WHERE id = %s""", cid)
    assert len(rows) == 1
    keys = ("status", "psu_id", "client_id", "scopes", "valid_until",
            "frequency", "sca_at", "surface", "kind", "access", "recurring",
            "ok", "nok", "psu_ip", "request_id")
    return dict(zip(keys, rows[0]))


def authorisations(db, cid):
    return sql(db, """SELECT id::text, approach, sca_status,
                      tpp_redirect_uri, tpp_nok_redirect_uri
                      FROM consent_authorisation WHERE consent_id = %s
                      ORDER BY created_at, id""", cid)


# -- POST /xs2a/v1/consents: the answer --------------------------------------

def test_create_oauth_approach(db, tpp, today):
    rid = str(uuid.uuid4())
    r = tpp.create(headers={"X-Request-ID": rid})
    assert r.status_code == 201, r.text
    assert r.headers["X-Request-ID"] == rid
    assert r.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    b = r.json()
    cid = b["consentId"]
    assert psd2lib.UUID_RE.match(cid)
    assert r.headers["Location"] == "%s/%s" % (CONSENTS, cid)
    assert b["consentStatus"] == "received"
    [(aid, approach, sca, ok, nok)] = authorisations(db, cid)
    assert (approach, sca, ok, nok) == ("OAUTH", "received", None, None)
    assert b["_links"] == {
        "scaOAuth": {"href": psd2lib.MAIN_URL + WELL_KNOWN},
        "self": {"href": "%s/%s" % (CONSENTS, cid)},
        "status": {"href": "%s/%s/status" % (CONSENTS, cid)},
        "scaStatus": {"href": "%s/%s/authorisations/%s" % (CONSENTS, cid,
                                                            aid)}}
    row = consent_row(db, cid)
    assert row["status"] == "received"
    assert row["psu_id"] is None and row["sca_at"] is None
    assert row["client_id"] == tpp.client.client_id
    assert row["scopes"] == ["ACCOUNT_INFORMATION"]
    assert row["surface"] == "bg" and row["kind"] == "dedicated"
    assert row["psu_ip"] == "192.0.2.10"
    assert str(row["request_id"]) == rid
    assert row["valid_until"] == today + datetime.timedelta(days=30)
    audit = sql(db, """SELECT actor, detail->>'consent' FROM audit_log
                       WHERE action = 'consent.created'
                       AND detail->>'consent' = %s""", cid)
    assert audit == [("tpp:" + tpp.client.org_id, cid)]


def test_create_redirect_approach(db, tpp):
    r = tpp.create(headers={"TPP-Redirect-URI": OK_URI,
                            "TPP-Nok-Redirect-URI": NOK_URI})
    assert r.status_code == 201, r.text
    assert r.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    cid = r.json()["consentId"]
    [(aid, approach, sca, ok, nok)] = authorisations(db, cid)
    assert (approach, sca, ok, nok) == ("REDIRECT", "received", OK_URI,
                                        NOK_URI)
    links = r.json()["_links"]
    assert links["scaRedirect"] == {
        "href": "%s/auth/consents/%s/authorisations/%s" % (
            psd2lib.MAIN_URL, cid, aid)}
    assert "scaOAuth" not in links
    assert links["scaStatus"] == {
        "href": "%s/%s/authorisations/%s" % (CONSENTS, cid, aid)}
    row = consent_row(db, cid)
    assert (row["ok"], row["nok"]) == (OK_URI, NOK_URI)


def test_create_explicit_start(db, tpp):
    r = tpp.create(headers={"TPP-Explicit-Authorisation-Preferred": "true",
                            "TPP-Redirect-URI": OK_URI})
    assert r.status_code == 201, r.text
    assert r.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    cid = r.json()["consentId"]
    assert authorisations(db, cid) == []
    assert r.json()["_links"] == {
        "self": {"href": "%s/%s" % (CONSENTS, cid)},
        "status": {"href": "%s/%s/status" % (CONSENTS, cid)},
        "startAuthorisation": {"href": "%s/%s/authorisations" % (
            CONSENTS, cid)}}


def test_explicit_false_is_implicit(db, tpp):
    r = tpp.create(headers={"TPP-Explicit-Authorisation-Preferred":
                            "false"})
    assert r.status_code == 201, r.text
    assert len(authorisations(db, r.json()["consentId"])) == 1


# -- POST /xs2a/v1/consents: what is stored -----------------------------------

def stored(db, tpp, body, headers=None):
    return consent_row(db, tpp.created(body, headers))


def test_valid_until_above_the_maximum_is_lowered(db, tpp, today):
    far = today + datetime.timedelta(days=181)
    assert stored(db, tpp, consent_body(validUntil=far.isoformat()))[
        "valid_until"] == today + datetime.timedelta(days=180)
    assert stored(db, tpp, consent_body(validUntil="9999-12-31"))[
        "valid_until"] == today + datetime.timedelta(days=180)
    at = today + datetime.timedelta(days=180)
    assert stored(db, tpp, consent_body(validUntil=at.isoformat()))[
        "valid_until"] == at
    assert stored(db, tpp, consent_body(validUntil=today.isoformat()))[
        "valid_until"] == today


def test_frequency_above_the_limit_is_lowered(db, tpp):
    assert stored(db, tpp, consent_body(frequencyPerDay=10))[
        "frequency"] == 4
    assert stored(db, tpp, consent_body(frequencyPerDay=2))[
        "frequency"] == 2
    assert stored(db, tpp, consent_body(frequencyPerDay=2 ** 40))[
        "frequency"] == 4


def test_one_off_consent(db, tpp):
    row = stored(db, tpp, consent_body(recurringIndicator=False,
                                       frequencyPerDay=1))
    assert row["recurring"] is False and row["frequency"] == 1


def test_dedicated_access_is_normalised(db, tpp):
    a, b, c = iban(), iban(), iban()
    row = stored(db, tpp, consent_body({
        "accounts": [{"iban": a}],
        "balances": [{"iban": b, "currency": "EUR"}],
        "transactions": [{"iban": a}, {"iban": c}]}))
    assert row["kind"] == "dedicated"
    assert row["access"] == {
        "accounts": [{"iban": a}, {"iban": b, "currency": "EUR"},
                     {"iban": c}],
        "balances": [{"iban": b, "currency": "EUR"}],
        "transactions": [{"iban": a}, {"iban": c}]}


def test_twenty_ibans_in_each_list(db, tpp):
    ibans = [iban() for _ in range(20)]
    refs = [{"iban": i} for i in ibans]
    row = stored(db, tpp, consent_body({"accounts": refs,
                                        "transactions": refs}))
    assert len(row["access"]["accounts"]) == 20


@pytest.mark.parametrize("access,kind,normal", [
    ({"accounts": []}, "bankOffered", {"accounts": []}),
    ({"accounts": [], "balances": [], "transactions": []}, "bankOffered",
     {"accounts": [], "balances": [], "transactions": []}),
    ({"balances": []}, "bankOffered", {"accounts": [], "balances": []}),
    ({"availableAccounts": "allAccounts"}, "availableAccounts",
     {"availableAccounts": "allAccounts"}),
    ({"availableAccountsWithBalance": "allAccounts"},
     "availableAccountsWithBalance",
     {"availableAccountsWithBalance": "allAccounts"}),
    ({"allPsd2": "allAccounts"}, "allPsd2", {"allPsd2": "allAccounts"}),
])
def test_the_other_kinds_of_access(db, tpp, access, kind, normal):
    row = stored(db, tpp, consent_body(access))
    assert (row["kind"], row["access"]) == (kind, normal)


# -- POST /xs2a/v1/consents: refusals (each changes nothing) ------------------

def past():
    return (datetime.date.today() - datetime.timedelta(days=1)).isoformat()


def without(key):
    b = consent_body()
    del b[key]
    return b


# Whether the Berlin Group file's schema refuses the request too (the
# validator then only reports it: bg_openapi.expect_invalid_request), or
# it is well-formed and only this bank refuses it.
INVALID, VALID = True, False

BAD_BODIES = [
    (without("access"), "FORMAT_ERROR", "access", INVALID),
    (consent_body({}), "FORMAT_ERROR", "access", VALID),
    (consent_body([]), "FORMAT_ERROR", "access", INVALID),
    (consent_body({"accounts": [{"bban": "370400440532013000"}]}),
     "PARAMETER_NOT_SUPPORTED", "access.accounts[0]", VALID),
    (consent_body({"accounts": [{"pan": "5409050000000000"}]}),
     "PARAMETER_NOT_SUPPORTED", "access.accounts[0]", VALID),
    (consent_body({"balances": [{"maskedPan": "123456xxxxxx1234"}]}),
     "PARAMETER_NOT_SUPPORTED", "access.balances[0]", VALID),
    (consent_body({"transactions": [{"msisdn": "+49 170 1234567"}]}),
     "PARAMETER_NOT_SUPPORTED", "access.transactions[0]", VALID),
    (consent_body({"accounts": [{"iban": "DE89370400440532013000",
                                 "other": {"identification": "x"}}]}),
     "PARAMETER_NOT_SUPPORTED", "access.accounts[0]", VALID),
    (consent_body({"accounts": [], "additionalInformation":
                   {"ownerName": []}}),
     "PARAMETER_NOT_SUPPORTED", "access.additionalInformation", VALID),
    (consent_body({"accounts": [], "restrictedTo": ["CACC"]}),
     "PARAMETER_NOT_SUPPORTED", "access.restrictedTo", VALID),
    (consent_body({"availableAccounts": "allAccountsWithOwnerName"}),
     "PARAMETER_NOT_SUPPORTED", "access.availableAccounts", VALID),
    (consent_body({"allPsd2": "allAccountsWithOwnerName"}),
     "PARAMETER_NOT_SUPPORTED", "access.allPsd2", VALID),
    (consent_body({"allPsd2": "all"}), "FORMAT_ERROR", "access.allPsd2", INVALID),
    (consent_body({"allPsd2": "allAccounts", "accounts": []}),
     "FORMAT_ERROR", "access", VALID),
    (consent_body({"allPsd2": "allAccounts",
                   "availableAccounts": "allAccounts"}),
     "FORMAT_ERROR", "access", VALID),
    (consent_body({"cards": []}), "FORMAT_ERROR", "access.cards", VALID),
    (consent_body({"accounts": [{"iban": "DE89370400440532013000"}] * 2}),
     "FORMAT_ERROR", "access.accounts", VALID),
    (consent_body({"accounts": [{"iban": "DE89370400440532013000"}],
                   "balances": []}), "FORMAT_ERROR", "access", VALID),
    (consent_body({"accounts": "DE89370400440532013000"}), "FORMAT_ERROR",
     "access.accounts", INVALID),
    (consent_body({"accounts": ["DE89370400440532013000"]}), "FORMAT_ERROR",
     "access.accounts[0]", INVALID),
    (consent_body({"accounts": [{"iban": "DE89370400440532013001"}]}),
     "FORMAT_ERROR", "access.accounts[0].iban", VALID),
    (consent_body({"accounts": [{"iban": "DE89 3704 0044 0532 0130 00"}]}),
     "FORMAT_ERROR", "access.accounts[0].iban", INVALID),
    (consent_body({"accounts": [{"currency": "EUR"}]}), "FORMAT_ERROR",
     "access.accounts[0].iban", VALID),
    (consent_body({"accounts": [{"iban": "DE89370400440532013000",
                                 "currency": "eur"}]}),
     "FORMAT_ERROR", "access.accounts[0].currency", INVALID),
    (consent_body({"accounts": [{"iban": "DE89370400440532013000",
                                 "name": "x"}]}),
     "FORMAT_ERROR", "access.accounts[0]", VALID),
    (without("recurringIndicator"), "FORMAT_ERROR", "recurringIndicator", INVALID),
    (consent_body(recurringIndicator="true"), "FORMAT_ERROR",
     "recurringIndicator", INVALID),
    (without("validUntil"), "FORMAT_ERROR", "validUntil", INVALID),
    (consent_body(validUntil="2030-02-30"), "FORMAT_ERROR", "validUntil", INVALID),
    (consent_body(validUntil="2030-1-1"), "FORMAT_ERROR", "validUntil", INVALID),
    (consent_body(validUntil=past()), "FORMAT_ERROR", "validUntil", VALID),
    (without("frequencyPerDay"), "FORMAT_ERROR", "frequencyPerDay", INVALID),
    (consent_body(frequencyPerDay=0), "FORMAT_ERROR", "frequencyPerDay", INVALID),
    (consent_body(frequencyPerDay="4"), "FORMAT_ERROR", "frequencyPerDay", INVALID),
    (consent_body(frequencyPerDay=1.5), "FORMAT_ERROR", "frequencyPerDay", INVALID),
    (consent_body(recurringIndicator=False, frequencyPerDay=2),
     "FORMAT_ERROR", "frequencyPerDay", VALID),
    (without("combinedServiceIndicator"), "FORMAT_ERROR",
     "combinedServiceIndicator", INVALID),
    (consent_body(combinedServiceIndicator=True), "SESSIONS_NOT_SUPPORTED",
     "combinedServiceIndicator", VALID),
    (consent_body(psuName="x"), "FORMAT_ERROR", "psuName", VALID),
]


def snapshot(dbinfo):
    return db_rows(dbinfo, exclude=NOT_DATA)


def refused_unchanged(dbinfo, call, status, code, path, invalid=VALID):
    settle(dbinfo)
    before = snapshot(dbinfo)
    if invalid:
        with bg_openapi.expect_invalid_request():
            r = call()
    else:
        r = call()
    tpp_error(r, status, code, path)
    assert rows_written(before, snapshot(dbinfo)) == []
    return r


@pytest.mark.parametrize("body,code,path,invalid", BAD_BODIES)
def test_bad_body(dbinfo, tpp, body, code, path, invalid):
    refused_unchanged(dbinfo, lambda: tpp.create(body), 400, code, path,
                      invalid)


def test_more_than_twenty_ibans_in_a_list(dbinfo, tpp):
    refs = [{"iban": iban()} for _ in range(21)]
    for name in ("accounts", "balances", "transactions"):
        refused_unchanged(dbinfo, lambda: tpp.create(consent_body(
            {name: refs})), 400, "FORMAT_ERROR", "access." + name)


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b"null",
                                 b'{"access": {}, "access": {}}'])
def test_body_not_a_json_object(dbinfo, tpp, raw):
    # The file's requestBody is not required: an empty body passes it.
    refused_unchanged(dbinfo, lambda: tpp.call(
        "POST", CONSENTS, headers=dict(IP), raw=raw), 400, "FORMAT_ERROR",
        "body", INVALID if raw else VALID)


def test_the_first_error_is_reported(dbinfo, tpp):
    body = consent_body({"accounts": [{"bban": "1"}]},
                        combinedServiceIndicator=True)
    refused_unchanged(dbinfo, lambda: tpp.create(body), 400,
                      "PARAMETER_NOT_SUPPORTED", "access.accounts[0]")


@pytest.mark.parametrize("headers,path,invalid", [
    ({"PSU-IP-Address": None}, "PSU-IP-Address", INVALID),
    ({"PSU-IP-Address": "not-an-address"}, "PSU-IP-Address", INVALID),
    ({"TPP-Redirect-URI": "https://elsewhere.example/cb"},
     "TPP-Redirect-URI", VALID),
    ({"TPP-Redirect-URI": OK_URI,
      "TPP-Nok-Redirect-URI": "https://elsewhere.example/nok"},
     "TPP-Nok-Redirect-URI", VALID),
    ({"TPP-Nok-Redirect-URI": NOK_URI}, "TPP-Nok-Redirect-URI", VALID),
    ({"TPP-Explicit-Authorisation-Preferred": "yes"},
     "TPP-Explicit-Authorisation-Preferred", INVALID),
    # The signature check (as on the contract's paths) refuses it first,
    # without a path.
    ({"X-Request-ID": "not-a-uuid"}, None, INVALID),
])
def test_bad_headers(dbinfo, tpp, headers, path, invalid):
    h = dict(IP)
    h.update(headers)
    h = {k: v for k, v in h.items() if v is not None}
    refused_unchanged(dbinfo, lambda: tpp.call("POST", CONSENTS,
                                               consent_body(), h),
                      400, "FORMAT_ERROR", path, invalid)


def test_a_request_id_is_used_once(tpp):
    rid = str(uuid.uuid4())
    assert tpp.create(headers={"X-Request-ID": rid}).status_code == 201
    tpp_error(tpp.create(headers={"X-Request-ID": rid}), 400,
              "FORMAT_ERROR", "X-Request-ID")


def test_token_refusals(dbinfo, tpp):
    for tok in (str(uuid.uuid4()), "not-a-token"):
        r = refused_unchanged(dbinfo, lambda: tpp.create(token=tok), 401,
                              "TOKEN_INVALID", "Authorization")
        assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]


def test_another_tpps_token_with_this_certificate(dbinfo, tpp, other_tpp):
    refused_unchanged(dbinfo, lambda: tpp.create(token=other_tpp.token),
                      401, "CERTIFICATE_INVALID", None)


def test_a_psus_token_creates_no_consent(dbinfo, tpp):
    psu = make_psu(1)
    tok = get_tokens(tpp.client, psu)["access_token"]
    refused_unchanged(dbinfo, lambda: tpp.create(token=tok), 403,
                      "SERVICE_BLOCKED", None)


# -- GET /xs2a/v1/consents/{consentId}, .../status -----------------------------

def test_read_a_received_consent(tpp, today):
    a, b = iban(), iban()
    cid = tpp.created(consent_body({"accounts": [{"iban": a}],
                                    "balances": [{"iban": b}]},
                                   validUntil="9999-12-31",
                                   frequencyPerDay=9))
    r = tpp.call("GET", "%s/%s" % (CONSENTS, cid))
    assert r.status_code == 200, r.text
    assert r.json() == {
        "access": {"accounts": [{"iban": a}, {"iban": b}],
                   "balances": [{"iban": b}]},
        "recurringIndicator": True,
        "validUntil": (today + datetime.timedelta(days=180)).isoformat(),
        "frequencyPerDay": 4,
        "lastActionDate": today.isoformat(),
        "consentStatus": "received",
        "_links": {"account": {"href": BG + "/accounts"}}}
    r = tpp.call("GET", "%s/%s/status" % (CONSENTS, cid))
    assert r.status_code == 200, r.text
    assert r.json() == {"consentStatus": "received"}


def test_a_received_consent_is_rejected_after_an_hour(db, tpp):
    cid = tpp.created()
    sql(db, "UPDATE consent SET created_at = now() - interval '61 minutes' "
        "WHERE id = %s", cid)
    r = tpp.call("GET", "%s/%s/status" % (CONSENTS, cid))
    assert r.json() == {"consentStatus": "rejected"}


def consent_paths(cid):
    return [("GET", "%s/%s" % (CONSENTS, cid)),
            ("GET", "%s/%s/status" % (CONSENTS, cid)),
            ("DELETE", "%s/%s" % (CONSENTS, cid)),
            ("GET", "%s/%s/authorisations" % (CONSENTS, cid)),
            ("POST", "%s/%s/authorisations" % (CONSENTS, cid)),
            ("GET", "%s/%s/authorisations/%s" % (CONSENTS, cid,
                                                 uuid.uuid4()))]


@pytest.mark.parametrize("which", ["other", "unknown", "malformed"])
def test_a_consent_not_of_this_tpp_is_unknown(dbinfo, tpp, other_tpp,
                                              which):
    cid = {"other": lambda: other_tpp.created(),
           "unknown": lambda: str(uuid.uuid4()),
           "malformed": lambda: "not-a-consent"}[which]()
    for method, path in consent_paths(cid):
        refused_unchanged(dbinfo, lambda: tpp.call(method, path), 403,
                          "CONSENT_UNKNOWN", "consentId")


# -- DELETE /xs2a/v1/consents/{consentId} -------------------------------------

def test_delete_a_received_consent(db, dbinfo, tpp):
    cid = tpp.created()
    r = tpp.call("DELETE", "%s/%s" % (CONSENTS, cid))
    assert r.status_code == 204, r.text
    assert r.content == b""
    assert consent_row(db, cid)["status"] == "terminatedByTpp"
    assert [a[2] for a in authorisations(db, cid)] == ["failed"]
    assert sql(db, """SELECT actor FROM audit_log
                      WHERE action = 'consent.terminated'
                      AND detail->>'consent' = %s""", cid) == [
        ("tpp:" + tpp.client.org_id,)]
    r = tpp.call("GET", "%s/%s/status" % (CONSENTS, cid))
    assert r.json() == {"consentStatus": "terminatedByTpp"}
    # Again: 204, nothing changes.
    settle(dbinfo)
    before = snapshot(dbinfo)
    r = tpp.call("DELETE", "%s/%s" % (CONSENTS, cid))
    assert r.status_code == 204, r.text
    assert rows_written(before, snapshot(dbinfo)) == []


def contract_consent(tpp, signer, n_accounts=2):
    psu = make_psu(n_accounts)
    tok = get_tokens(tpp.client, psu)
    return psu, tok


def test_delete_a_contract_consent_revokes_its_tokens(db, tpp, signer):
    psu, tok = contract_consent(tpp, signer)
    cid = str(consent_of(db, tok["access_token"]))
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, tok["access_token"],
                        org_id=tpp.client.org_id)
    assert r.status_code == 200, r.text
    r = tpp.call("DELETE", "%s/%s" % (CONSENTS, cid))
    assert r.status_code == 204, r.text
    assert sql(db, """SELECT bool_and(revoked_at IS NOT NULL) FROM token
                      WHERE consent_id = %s""", cid) == [(True,)]
    r = psd2lib.api_get(signer, psd2lib.ACCOUNT_LIST, tok["access_token"],
                        org_id=tpp.client.org_id)
    assert r.status_code == 401
    r = token_request({"grant_type": "refresh_token",
                       "refresh_token": tok["refresh_token"]}, tpp.client)
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    r = tpp.call("GET", "%s/%s/status" % (CONSENTS, cid))
    assert r.json() == {"consentStatus": "terminatedByTpp"}


def test_a_psus_token_deletes_its_own_consent(db, tpp, signer):
    psu, tok = contract_consent(tpp, signer, 1)
    cid = str(consent_of(db, tok["access_token"]))
    r = tpp.call("DELETE", "%s/%s" % (CONSENTS, cid),
                 token=tok["access_token"])
    assert r.status_code == 204, r.text
    assert consent_row(db, cid)["status"] == "terminatedByTpp"


@pytest.mark.parametrize("end", [
    "UPDATE consent SET created_at = now() - interval '61 minutes' "
    "WHERE id = %s",
    "UPDATE consent SET status = 'rejected' WHERE id = %s",
])
def test_delete_a_rejected_consent_is_status_invalid(db, dbinfo, tpp, end):
    cid = tpp.created()
    sql(db, end, cid)
    refused_unchanged(dbinfo, lambda: tpp.call(
        "DELETE", "%s/%s" % (CONSENTS, cid)), 409, "STATUS_INVALID", None)


@pytest.mark.parametrize("end", [
    "UPDATE consent SET valid_until = current_date - 1 WHERE id = %s",
    "UPDATE consent SET status = 'expired' WHERE id = %s",
    "UPDATE consent SET status = 'revokedByPsu' WHERE id = %s",
])
def test_delete_an_ended_contract_consent_is_status_invalid(
        db, dbinfo, tpp, signer, end):
    psu, tok = contract_consent(tpp, signer, 1)
    cid = str(consent_of(db, tok["access_token"]))
    sql(db, end, cid)
    refused_unchanged(dbinfo, lambda: tpp.call(
        "DELETE", "%s/%s" % (CONSENTS, cid)), 409, "STATUS_INVALID", None)


# -- the contract's consents on the standard interface ------------------------

def test_read_a_contract_consent(db, tpp, signer, today):
    psu, tok = contract_consent(tpp, signer, 2)
    cid = str(consent_of(db, tok["access_token"]))
    valid_until = sql(db, "SELECT valid_until FROM consent WHERE id = %s",
                      cid)[0][0]
    refs = [{"iban": i, "currency": "EUR"} for i, _ in psu.accounts]
    expected = {
        "access": {"accounts": refs, "balances": refs,
                   "transactions": refs},
        "recurringIndicator": True,
        "validUntil": valid_until.isoformat(),
        "frequencyPerDay": 4,
        "lastActionDate": today.isoformat(),
        "consentStatus": "valid",
        "_links": {"account": {"href": BG + "/accounts"}}}
    for token in (tpp.token, tok["access_token"]):
        r = tpp.call("GET", "%s/%s" % (CONSENTS, cid), token=token)
        assert r.status_code == 200, r.text
        assert r.json() == expected
    r = tpp.call("GET", "%s/%s/status" % (CONSENTS, cid))
    assert r.json() == {"consentStatus": "valid"}


def test_rights_by_account_show_in_the_access(db, tpp, signer):
    psu, tok = contract_consent(tpp, signer, 2)
    cid = str(consent_of(db, tok["access_token"]))
    (a, _), (b, _) = psu.accounts
    sql(db, """UPDATE consent_account ca SET balances = false
               FROM account ac WHERE ac.id = ca.account_id
               AND ca.consent_id = %s AND ac.iban = %s""", cid, b)
    sql(db, """UPDATE consent_account SET transactions = false
               WHERE consent_id = %s""", cid)
    r = tpp.call("GET", "%s/%s" % (CONSENTS, cid))
    assert r.json()["access"] == {
        "accounts": [{"iban": a, "currency": "EUR"},
                     {"iban": b, "currency": "EUR"}],
        "balances": [{"iban": a, "currency": "EUR"}]}


def test_a_psus_token_reads_only_its_own_consent(dbinfo, db, tpp, signer):
    psu, tok = contract_consent(tpp, signer, 1)
    cid = tpp.created()
    for method, path in consent_paths(cid):
        refused_unchanged(dbinfo, lambda: tpp.call(
            method, path, token=tok["access_token"]), 403,
            "CONSENT_UNKNOWN", "consentId")


@pytest.mark.parametrize("scope", ["FUND_AVAILABILITY",
                                   "PAYMENT_INITIATION"])
def test_a_contract_consent_without_account_information_is_unknown(
        dbinfo, db, tpp, scope):
    tok = get_tokens(tpp.client, make_psu(1), scope=scope)
    cid = str(consent_of(db, tok["access_token"]))
    for method, path in consent_paths(cid):
        refused_unchanged(dbinfo, lambda: tpp.call(method, path), 403,
                          "CONSENT_UNKNOWN", "consentId")


def test_a_method_a_path_does_not_take(dbinfo, tpp):
    cid = tpp.created()
    for method, path, allow in (
            ("PUT", "%s/%s" % (CONSENTS, cid), "GET, HEAD, DELETE"),
            ("GET", CONSENTS, "POST"),
            ("DELETE", "%s/%s/status" % (CONSENTS, cid), "GET, HEAD"),
            ("DELETE", "%s/%s/authorisations" % (CONSENTS, cid),
             "GET, HEAD, POST"),
            ("POST", "%s/%s/authorisations/%s" % (CONSENTS, cid,
                                                  uuid.uuid4()),
             "GET, HEAD")):
        # None of these operations is in the file.
        r = refused_unchanged(dbinfo, lambda: tpp.call(method, path), 405,
                              "SERVICE_INVALID", None, INVALID)
        assert r.headers["Allow"] == allow


def test_an_expired_contract_consent_shows_expired(db, tpp, signer):
    psu, tok = contract_consent(tpp, signer, 1)
    cid = str(consent_of(db, tok["access_token"]))
    sql(db, "UPDATE consent SET valid_until = current_date - 1 "
        "WHERE id = %s", cid)
    r = tpp.call("GET", "%s/%s" % (CONSENTS, cid))
    assert r.status_code == 200, r.text
    assert r.json()["consentStatus"] == "expired"


# -- the authorisation sub-resources ------------------------------------------

def explicit(tpp, **headers):
    h = {"TPP-Explicit-Authorisation-Preferred": "true"}
    h.update(headers)
    return tpp.created(headers=h)


def test_explicit_start_redirect(db, tpp):
    cid = explicit(tpp)
    r = tpp.call("POST", "%s/%s/authorisations" % (CONSENTS, cid),
                 headers={"TPP-Redirect-URI": OK_URI,
                          "TPP-Nok-Redirect-URI": NOK_URI})
    assert r.status_code == 201, r.text
    assert r.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    b = r.json()
    aid = b["authorisationId"]
    assert b == {"scaStatus": "received", "authorisationId": aid,
                 "_links": {
                     "scaRedirect": {"href": "%s/auth/consents/%s/"
                                     "authorisations/%s" % (
                                         psd2lib.MAIN_URL, cid, aid)},
                     "scaStatus": {"href": "%s/%s/authorisations/%s" % (
                         CONSENTS, cid, aid)}}}
    assert authorisations(db, cid) == [(aid, "REDIRECT", "received",
                                        OK_URI, NOK_URI)]


@pytest.mark.parametrize("raw", [b"", b"{}", b" { } "])
def test_explicit_start_oauth(db, tpp, raw):
    cid = explicit(tpp)
    r = tpp.call("POST", "%s/%s/authorisations" % (CONSENTS, cid), raw=raw)
    assert r.status_code == 201, r.text
    b = r.json()
    assert b["_links"]["scaOAuth"] == {"href": psd2lib.MAIN_URL +
                                       WELL_KNOWN}
    assert "scaRedirect" not in b["_links"]
    assert authorisations(db, cid) == [(b["authorisationId"], "OAUTH",
                                        "received", None, None)]


def test_list_and_read_authorisations(db, tpp):
    cid = tpp.created()
    first = authorisations(db, cid)[0][0]
    r = tpp.call("POST", "%s/%s/authorisations" % (CONSENTS, cid))
    assert r.status_code == 201, r.text
    second = r.json()["authorisationId"]
    r = tpp.call("GET", "%s/%s/authorisations" % (CONSENTS, cid))
    assert r.status_code == 200, r.text
    assert r.json() == {"authorisationIds": [first, second]}
    path = "%s/%s/authorisations/%s" % (CONSENTS, cid, first)
    r = tpp.call("GET", path)
    assert r.status_code == 200, r.text
    assert r.json() == {"scaStatus": "received"}
    sql(db, "UPDATE consent_authorisation SET sca_status = 'started' "
        "WHERE id = %s", first)
    assert tpp.call("GET", path).json() == {"scaStatus": "started"}
    sql(db, "UPDATE consent_authorisation SET created_at = now() - "
        "interval '61 minutes' WHERE id = %s", first)
    assert tpp.call("GET", path).json() == {"scaStatus": "failed"}


def test_an_explicit_consent_has_no_authorisations_yet(tpp):
    cid = explicit(tpp)
    r = tpp.call("GET", "%s/%s/authorisations" % (CONSENTS, cid))
    assert r.json() == {"authorisationIds": []}


def test_an_unknown_authorisation(dbinfo, tpp):
    cid = tpp.created()
    other = tpp.created()
    for aid in (str(uuid.uuid4()), "nope", authorisations_of(tpp, other)):
        refused_unchanged(dbinfo, lambda: tpp.call(
            "GET", "%s/%s/authorisations/%s" % (CONSENTS, cid, aid)),
            403, "RESOURCE_UNKNOWN", "authorisationId")


def authorisations_of(tpp, cid):
    r = tpp.call("GET", "%s/%s/authorisations" % (CONSENTS, cid))
    return r.json()["authorisationIds"][0]


@pytest.mark.parametrize("raw,headers,path", [
    (b'{"psuData": {}}', {}, "body"),
    (b"[]", {}, "body"),
    (b"", {"TPP-Redirect-URI": "https://elsewhere.example/cb"},
     "TPP-Redirect-URI"),
    (b"", {"TPP-Redirect-URI": OK_URI,
           "TPP-Nok-Redirect-URI": "https://elsewhere.example/nok"},
     "TPP-Nok-Redirect-URI"),
])
def test_start_refusals(dbinfo, tpp, raw, headers, path):
    cid = explicit(tpp)
    refused_unchanged(dbinfo, lambda: tpp.call(
        "POST", "%s/%s/authorisations" % (CONSENTS, cid), raw=raw,
        headers=headers), 400, "FORMAT_ERROR", path)


def test_only_a_received_consent_takes_an_authorisation(dbinfo, db, tpp,
                                                        signer):
    psu, tok = contract_consent(tpp, signer, 1)
    valid = str(consent_of(db, tok["access_token"]))
    ended = tpp.created()
    assert tpp.call("DELETE", "%s/%s" % (CONSENTS, ended)).status_code == \
        204
    late = tpp.created()
    sql(db, "UPDATE consent SET created_at = now() - interval '61 minutes' "
        "WHERE id = %s", late)
    for cid in (valid, ended, late):
        refused_unchanged(dbinfo, lambda: tpp.call(
            "POST", "%s/%s/authorisations" % (CONSENTS, cid)), 409,
            "STATUS_INVALID", None)
