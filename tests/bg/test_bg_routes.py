"""The standard interface answers its own 404 and 405 (src/bg/bg_route.c):
X-Request-ID echoed as on every other answer there (Kore's own answers
cannot: they are sent before the request's headers are read), Allow
naming the path's methods, the tppMessages body."""

import uuid

import pytest

import bg_openapi
from conftest import BG, tpp_error
from test_bg_consents import tpp  # noqa: F401 (the fixture)


@pytest.mark.parametrize("method, path, allow", [
    ("POST", BG + "/accounts", "GET, HEAD"),
    ("DELETE", BG + "/accounts/x1", "GET, HEAD"),
    ("PUT", BG + "/accounts/x1/balances", "GET, HEAD"),
    ("POST", BG + "/accounts/x1/transactions", "GET, HEAD"),
    ("PATCH", BG + "/accounts/x1/transactions/t1", "GET, HEAD"),
    ("GET", BG + "/funds-confirmations", "POST"),
    ("GET", BG + "/consents", "POST"),
    ("PUT", BG + "/consents/" + str(uuid.uuid4()), "GET, HEAD, DELETE"),
])
def test_a_method_the_path_does_not_take(tpp, method, path,  # noqa: F811
                                         allow):
    rid = str(uuid.uuid4())
    with bg_openapi.expect_invalid_request():
        r = tpp.call(method, path, headers={"X-Request-ID": rid})
    tpp_error(r, 405, "SERVICE_INVALID")
    assert r.headers["X-Request-ID"] == rid
    assert r.headers["Allow"] == allow


@pytest.mark.parametrize("path", ["", "/", "/v1", "/v1/nothing",
                                  "/v2/accounts", "/v1/accounts/x/y/z/w"])
def test_any_other_path_is_unknown(tpp, path):  # noqa: F811
    rid = str(uuid.uuid4())
    with bg_openapi.expect_invalid_request():
        r = tpp.call("GET", "/xs2a" + path, headers={"X-Request-ID": rid})
    tpp_error(r, 404, "RESOURCE_UNKNOWN")
    assert r.headers["X-Request-ID"] == rid


# The design's methods of each path (src/bg/README.md; the same table as
# tests/prod/test_openapi.py's XS2A): a method outside them is a 405
# whose Allow names exactly them.
DESIGN = {
    "/consents": "POST",
    "/consents/%s" % uuid.uuid4(): "GET, HEAD, DELETE",
    "/consents/%s/status" % uuid.uuid4(): "GET, HEAD",
    "/consents/%s/authorisations" % uuid.uuid4(): "GET, HEAD, POST",
    "/consents/%s/authorisations/%s" % (uuid.uuid4(), uuid.uuid4()):
        "GET, HEAD",
    "/accounts": "GET, HEAD",
    "/accounts/a": "GET, HEAD",
    "/accounts/a/balances": "GET, HEAD",
    "/accounts/a/transactions": "GET, HEAD",
    "/accounts/a/transactions/t": "GET, HEAD",
    "/funds-confirmations": "POST",
}


@pytest.mark.parametrize("path, allow", sorted(DESIGN.items()))
def test_every_path_allows_exactly_the_design_methods(tpp, path,  # noqa: F811
                                                      allow):
    with bg_openapi.expect_invalid_request():
        r = tpp.call("PATCH", BG + path)
    tpp_error(r, 405, "SERVICE_INVALID")
    assert r.headers["Allow"] == allow
