"""The validator of the standard interface (tests/lib/bg_openapi.py) on
crafted requests and responses: what it must refuse and what it must
pass, so that a green bg suite means the traffic matched the Berlin
Group's official file. No service is needed."""

import json
import uuid

import pytest
import requests
from requests.structures import CaseInsensitiveDict

import bg_openapi
import openapi_check

BASE = "http://127.0.0.1:18080"
CONSENT_ID = "0b6d3a3e-8f59-4c0e-9a43-2f1b0c9e7d11"
IBAN = "DE89370400440532013000"


@pytest.fixture(autouse=True)
def _running_service():
    """These tests need no service (overrides the suite's fixture)."""
    return None


def prepared(method, path, headers=None, body=None, rid=None):
    h = {"X-Request-ID": rid or str(uuid.uuid4())}
    if body is not None:
        h["Content-Type"] = "application/json"
        body = json.dumps(body)
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    return requests.Request(method, BASE + path, headers=h,
                            data=body).prepare()


def response(req, status, body=None, headers=None, ctype=None):
    r = requests.Response()
    r.status_code = status
    h = {"X-Request-ID": req.headers.get("X-Request-ID")}
    if body is not None:
        h["Content-Type"] = ctype or "application/json"
    h.update(headers or {})
    r.headers = CaseInsensitiveDict({k: v for k, v in h.items()
                                     if v is not None})
    r._content = b"" if body is None else (
        body if isinstance(body, bytes) else json.dumps(body).encode())
    r.request = req
    r.url = req.url
    return r


def problems_of(req, resp):
    try:
        bg_openapi.check(req, resp)
    except AssertionError as e:
        return str(e)
    return None


def consent_request(**headers):
    body = {"access": {"accounts": [{"iban": IBAN}], "balances": [],
                       "transactions": []},
            "recurringIndicator": True, "validUntil": "2030-01-01",
            "frequencyPerDay": 4, "combinedServiceIndicator": False}
    h = {"PSU-IP-Address": "192.0.2.10",
         "TPP-Redirect-URI": "https://tpp.example/cb"}
    h.update(headers)
    return prepared("POST", "/xs2a/v1/consents", h, body)


def consent_201(req, approach="REDIRECT", **over):
    body = {"consentStatus": "received", "consentId": CONSENT_ID,
            "_links": {"scaRedirect": {
                "href": "https://psd2.bank.example/auth/consents/%s/"
                        "authorisations/a1" % CONSENT_ID},
                "self": {"href": "/xs2a/v1/consents/" + CONSENT_ID},
                "status": {"href": "/xs2a/v1/consents/%s/status" %
                                   CONSENT_ID}}}
    body.update(over)
    return response(req, 201, body, {
        "Location": "/xs2a/v1/consents/" + CONSENT_ID,
        "ASPSP-SCA-Approach": approach})


def account_list(amount):
    return {"accounts": [{
        "resourceId": "acc-1", "iban": IBAN, "currency": "EUR",
        "name": "Main", "cashAccountType": "CACC", "status": "enabled",
        "ownerName": "Alex Doe",
        "balances": [{"balanceType": "interimAvailable",
                      "balanceAmount": {"currency": "EUR",
                                        "amount": amount},
                      "lastChangeDateTime": "2026-11-26T10:00:00Z"}],
        "_links": {"balances": {"href": "/xs2a/v1/accounts/acc-1/balances"}},
    }]}


def accounts_request(**headers):
    h = {"Consent-ID": CONSENT_ID}
    h.update(headers)
    return prepared("GET", "/xs2a/v1/accounts?withBalance=true", h)


def tpp_messages(code, text="No."):
    return {"tppMessages": [{"category": "ERROR", "code": code,
                             "text": text}]}


def test_valid_consent_201_passes_and_is_counted():
    before = bg_openapi.checked()
    req = consent_request()
    assert problems_of(req, consent_201(req)) is None
    after = bg_openapi.checked()
    assert after["requests"] == before["requests"] + 1
    assert after["responses"] == before["responses"] + 1
    assert bg_openapi.checked_operations()[
        ("POST", "/v1/consents", 201)] >= 1


def test_account_list_amount_as_number_fails():
    req = accounts_request()
    assert problems_of(req, response(req, 200, account_list("12.50"))) \
        is None
    found = problems_of(req, response(req, 200, account_list(12.5)))
    assert found and "12.5 is not of type 'string'" in found, found
    assert "['balanceAmount']['amount']" in found, found


def test_missing_x_request_id_response_header_fails():
    req = accounts_request()
    resp = response(req, 200, account_list("1.00"))
    del resp.headers["X-Request-ID"]
    found = problems_of(req, resp)
    assert found and "header X-Request-ID missing" in found, found


def test_x_request_id_must_echo_the_request():
    req = accounts_request()
    resp = response(req, 200, account_list("1.00"),
                    {"X-Request-ID": str(uuid.uuid4())})
    found = problems_of(req, resp)
    assert found and "does not echo" in found, found


@pytest.mark.parametrize("status", [200, 302, 418])
def test_undocumented_status_fails(status):
    req = prepared("DELETE", "/xs2a/v1/consents/" + CONSENT_ID)
    found = problems_of(req, response(req, status))
    assert found and "status not documented" in found, found


def test_delete_204_without_body_passes_with_body_fails():
    req = prepared("DELETE", "/xs2a/v1/consents/" + CONSENT_ID)
    assert problems_of(req, response(req, 204)) is None
    found = problems_of(req, response(req, 204, {"consentStatus": "x"}))
    assert found and "a body where the file has none" in found, found


def test_undocumented_content_type_fails():
    req = accounts_request()
    found = problems_of(req, response(req, 200, b"<html></html>",
                                      ctype="text/html"))
    assert found and "content type 'text/html' not documented" in found


def test_request_without_required_header_fails():
    req = accounts_request(**{"Consent-ID": None})
    resp = response(req, 400, tpp_messages("FORMAT_ERROR"))
    found = problems_of(req, resp)
    assert found and "header parameter Consent-ID missing" in found, found
    assert "response does not match" not in found, found
    # Header names are case-insensitive.
    req = prepared("GET", "/xs2a/v1/accounts",
                   {"consent-id": CONSENT_ID, "x-request-id": None,
                    "X-REQUEST-ID": str(uuid.uuid4())})
    assert problems_of(req, response(req, 200, account_list("1"))) is None


def test_parameter_values_are_checked():
    req = prepared("GET", "/xs2a/v1/accounts?withBalance=yes",
                   {"Consent-ID": CONSENT_ID}, rid="not-a-uuid")
    found = problems_of(req, response(req, 400, tpp_messages("FORMAT_ERROR")))
    assert "withBalance='yes'" in found, found
    assert "X-Request-ID='not-a-uuid'" in found, found
    req = consent_request(**{"PSU-IP-Address": "somewhere"})
    found = problems_of(req, consent_201(req))
    assert "PSU-IP-Address='somewhere'" in found, found


def test_request_body_is_checked():
    body = {"access": {"accounts": [{"iban": IBAN}]},
            "recurringIndicator": "yes", "validUntil": "2030-01-01",
            "frequencyPerDay": 4}
    req = prepared("POST", "/xs2a/v1/consents",
                   {"PSU-IP-Address": "192.0.2.10"}, body)
    found = problems_of(req, response(req, 400, tpp_messages("FORMAT_ERROR")))
    assert "'combinedServiceIndicator' is a required property" in found
    assert "['recurringIndicator']: 'yes' is not of type 'boolean'" in found


def test_expected_invalid_request_is_reported_response_still_checked():
    req = accounts_request(**{"Consent-ID": None})
    with bg_openapi.expect_invalid_request() as inv:
        bg_openapi.check(req, response(req, 400,
                                       tpp_messages("FORMAT_ERROR")))
    assert len(inv.problems) == 1
    assert "Consent-ID missing" in inv.problems[0][0]
    # The response is still checked in full.
    with pytest.raises(AssertionError) as e:
        with bg_openapi.expect_invalid_request():
            bg_openapi.check(req, response(req, 400, {"error": 1}))
    assert "response does not match" in str(e.value)
    assert "'tppMessages' is a required property" in str(e.value)
    assert "request does not match" not in str(e.value)


def test_expected_invalid_request_that_is_valid_fails():
    req = accounts_request()
    with pytest.raises(AssertionError) as e:
        with bg_openapi.expect_invalid_request():
            bg_openapi.check(req, response(req, 200, account_list("1")))
    assert "all valid" in str(e.value)


@pytest.mark.parametrize("path,template", [
    ("/xs2a/v1/consents/" + CONSENT_ID, "/v1/consents/{consentId}"),
    ("/xs2a/v1/consents/%s/status" % CONSENT_ID,
     "/v1/consents/{consentId}/status"),
    ("/xs2a/v1/consents/%s/authorisations" % CONSENT_ID,
     "/v1/consents/{consentId}/authorisations"),
    ("/xs2a/v1/accounts/acc-1", "/v1/accounts/{account-id}"),
    ("/xs2a/v1/card-accounts", "/v1/card-accounts"),
    ("/xs2a/v1/funds-confirmations", "/v1/funds-confirmations"),
    ("/xs2a/v1/payments/sepa-credit-transfers",
     "/v1/{payment-service}/{payment-product}"),
    ("/xs2a/v1/payments/sepa-credit-transfers/p1",
     "/v1/{payment-service}/{payment-product}/{paymentId}"),
    ("/xs2a/v1/foo/bar", None),
    ("/xs2a/v1/accounts/", None),
    ("/v1/consents", None),
])
def test_literal_segments_win_over_templates(path, template):
    assert bg_openapi.match_path(path)[0] == template


def test_unknown_path_and_method_need_the_tpp_messages_shape():
    req = prepared("GET", "/xs2a/v1/nothing-here")
    with bg_openapi.expect_invalid_request():
        assert problems_of(req, response(
            req, 404, tpp_messages("RESOURCE_UNKNOWN"))) is None
    with bg_openapi.expect_invalid_request():
        found = problems_of(req, response(req, 404, {"error": "not found"}))
    assert "'tppMessages' is a required property" in found, found
    with bg_openapi.expect_invalid_request():
        found = problems_of(req, response(req, 404, {"tppMessages": [
            {"category": "ERROR", "code": "RESOURCE_UNKNOWN"}]}))
    assert "'text' is a required property" in found, found
    req = prepared("PUT", "/xs2a/v1/consents/" + CONSENT_ID, body={})
    with bg_openapi.expect_invalid_request() as inv:
        assert problems_of(req, response(
            req, 405, tpp_messages("SERVICE_INVALID"))) is None
        found = problems_of(req, response(
            req, 404, tpp_messages("SERVICE_INVALID")))
    assert "has no PUT" in inv.problems[0][0]
    assert "must be answered 405" in found, found


def test_sca_approach_header_takes_the_files_values():
    # The file's ASPSP-SCA-Approach is EMBEDDED, DECOUPLED or REDIRECT
    # ("The OAuth SCA approach will be subsumed by REDIRECT").
    req = consent_request(**{"TPP-Redirect-URI": None})
    assert problems_of(req, consent_201(req, "REDIRECT")) is None
    found = problems_of(req, consent_201(req, "OAUTH"))
    assert "header ASPSP-SCA-Approach='OAUTH'" in found, found


def test_wired_into_the_openapi_check_of_every_response():
    req = accounts_request()
    resp = response(req, 200, account_list(3))
    before = openapi_check.checked_count()
    with pytest.raises(AssertionError) as e:
        openapi_check.check_response(resp)
    assert "Berlin Group file" in str(e.value)
    resp = response(req, 200, account_list("3"))
    openapi_check.check_response(resp)
    assert openapi_check.checked_count() == before + 1


def test_installed_for_this_suite():
    # psd2_fixtures installs the check for the bg suite's label: every
    # request of the suite goes through it.
    assert getattr(requests.Session.send, "_psd2_openapi", False)
