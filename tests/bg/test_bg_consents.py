"""The consent resource of the standard interface (src/bg/README.md
"Consents", the API half of "SCA of a consent"): POST /xs2a/v1/consents
with the TPP's own token, every rule of the request, the answer and its
links, GET / status / DELETE, the authorisation sub-resources, and the
contract's consents read through the same paths."""

import datetime
import uuid

import pytest

import psd2lib
from psd2lib import db_rows, make_client, make_psu, rows_written, \
    token_request

from conftest import BG, Api, get_tokens, consent_of, sql, tpp_error, \
    token_hash

CONSENTS = BG + "/consents"
WELL_KNOWN = "/.well-known/oauth-authorization-server"
OK_URI = "https://tpp.example/callback"
NOK_URI = "https://tpp.example/nok"
IP = {"PSU-IP-Address": "192.0.2.10"}

# Tables that a refused request may still touch: the replay marks of
# signed requests (a refused request keeps its X-Request-ID spent).
NOT_DATA = ("request_replay",)


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
