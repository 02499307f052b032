"""The OpenAPI document (assets/openapi.json): served by the service as
compiled in, well formed (OpenAPI 3.1 structure, every schema a valid
JSON Schema 2020-12, every $ref resolves), describing exactly the routes
of conf/routes.conf, its /xs2a part exactly what tests/bg/bg_openapi_part.py
makes of the Berlin Group's official file (the operations of
src/bg/README.md), and the response checker of tests/lib/openapi_check.py
(which checks every response of the api, ais, tpp and prod suites)
refuses what the document does not describe."""

import json
import os
import re
import sys

import jsonschema
import pytest
import requests

import openapi_check
import psd2lib

sys.path.insert(0, os.path.join(psd2lib.TOP, "tests", "bg"))
import bg_openapi_part  # noqa: E402

DOC = openapi_check.document()
METHODS = openapi_check.METHODS


def test_the_service_serves_the_document(server):
    r = requests.get(server.url + "/auth/v1/psd2/openapi.json", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/json"
    assert r.json() == DOC
    meta = requests.get(server.url + "/.well-known/oauth-authorization-"
                        "server", timeout=10).json()
    assert meta["service_documentation"] == \
        server.url + "/auth/v1/psd2/openapi.json"


def refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def schemas(node):
    """Every Schema Object of the document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "schema" and isinstance(v, dict):
                yield v
            else:
                yield from schemas(v)
    elif isinstance(node, list):
        for v in node:
            yield from schemas(v)


def test_document_structure():
    assert DOC["openapi"] == "3.1.0"
    assert DOC["info"]["title"] and DOC["info"]["version"]
    assert set(DOC) <= {"openapi", "info", "servers", "tags", "paths",
                        "components", "x-unknown-path", "x-other-method"}
    ids = []
    for path, item in DOC["paths"].items():
        assert path.startswith("/")
        for method, op in item.items():
            assert method in METHODS, (path, method)
            ids.append(op["operationId"])
            assert op["responses"], (path, method)
            for status, resp in op["responses"].items():
                assert re.match(r"^([1-5][0-9]{2}|[1-5]XX|default)$",
                                status), (path, status)
                resp = openapi_check._deref(resp, DOC)
                assert resp["description"], (path, status)
            for p in op.get("parameters", []):
                p = openapi_check._deref(p, DOC)
                assert p["in"] in ("query", "header", "path", "cookie")
                if p["in"] == "path":
                    assert p["required"] is True
                    assert "{%s}" % p["name"] in path
    assert len(ids) == len(set(ids)), "operationId used twice"
    for r in set(refs(DOC)):
        openapi_check._deref({"$ref": r}, DOC)      # raises if dangling
    for name, schema in DOC["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema)
    for schema in schemas(DOC):
        jsonschema.Draft202012Validator.check_schema(schema)
    for name, scheme in DOC["components"]["securitySchemes"].items():
        assert scheme["type"] in ("http", "mutualTLS", "oauth2",
                                  "apiKey", "openIdConnect")
    used = {k for op in (o for i in DOC["paths"].values()
                         for o in i.values())
            for req in op.get("security", []) for k in req}
    assert used <= set(DOC["components"]["securitySchemes"])


# The names of the variable segments of the regex routes, in order.
SEGMENTS = {
    "/auth/v1/psd2/account/": ["{account-id}"],
    "/auth/v1/psd2/payments/": ["{payment-product}", "{paymentId}",
                                "{authorisationId}"],
    "/auth/payments/": ["{paymentId}"],
    "/auth/consents/": ["{consentId}", "{authorisationId}"],
    "/xs2a/v1/consents/": ["{consentId}", "{authorisationId}"],
    "/xs2a/v1/accounts/": ["{account-id}", "{transactionId}"],
    "/xs2a/v1/payments/": ["{payment-product}", "{paymentId}",
                           "{authorisationId}"],
    "/xs2a/v1/card-accounts/": ["{account-id}"],
}
REGEX = re.compile(r"[][()+*?{}|\\]")

# The standard interface as src/bg/README.md lists it: {path: (methods,
# the file of src/bg/ that serves it)}.
XS2A = {
    "/xs2a/v1/consents": ({"post"}, "consents.c"),
    "/xs2a/v1/consents/{consentId}": ({"get", "delete"}, "consents.c"),
    "/xs2a/v1/consents/{consentId}/status": ({"get"}, "consents.c"),
    "/xs2a/v1/consents/{consentId}/authorisations":
        ({"post", "get"}, "consent_authorisations.c"),
    "/xs2a/v1/consents/{consentId}/authorisations/{authorisationId}":
        ({"get"}, "consent_authorisations.c"),
    "/xs2a/v1/accounts": ({"get"}, "accounts.c"),
    "/xs2a/v1/accounts/{account-id}": ({"get"}, "accounts.c"),
    "/xs2a/v1/accounts/{account-id}/balances": ({"get"}, "accounts.c"),
    "/xs2a/v1/accounts/{account-id}/transactions":
        ({"get"}, "transactions.c"),
    "/xs2a/v1/accounts/{account-id}/transactions/{transactionId}":
        ({"get"}, "transactions.c"),
    "/xs2a/v1/funds-confirmations": ({"post"}, "funds.c"),
    "/xs2a/v1/payments/{payment-product}": ({"post"}, "payments.c"),
    "/xs2a/v1/payments/{payment-product}/{paymentId}":
        ({"get", "delete"}, "payments.c"),
    "/xs2a/v1/payments/{payment-product}/{paymentId}/status":
        ({"get"}, "payments.c"),
    "/xs2a/v1/payments/{payment-product}/{paymentId}/authorisations":
        ({"post", "get"}, "payments.c"),
    "/xs2a/v1/payments/{payment-product}/{paymentId}/authorisations/"
    "{authorisationId}": ({"get"}, "payments.c"),
}
# Not offered: every method answers 405 SERVICE_INVALID (tests/bg
# test_bg_profile.py asks the service); the document lists GET, the
# operation the guidelines define, with that one answer.
CARD_ACCOUNTS = {
    "/xs2a/v1/card-accounts",
    "/xs2a/v1/card-accounts/{account-id}",
    "/xs2a/v1/card-accounts/{account-id}/balances",
    "/xs2a/v1/card-accounts/{account-id}/transactions",
}


def template(path):
    """The path template of a route (a regex route's variable segments
    named by SEGMENTS)."""
    if not path.startswith("^"):
        return path
    path = path.strip("^$")
    segments = re.split(r"/(?![^[]*\])", path)   # not the / of [^/]
    first = next(i for i, s in enumerate(segments) if REGEX.search(s))
    names = SEGMENTS.get("/".join(segments[:first]) + "/")
    if names is None or len(names) < sum(
            1 for s in segments if REGEX.search(s)):
        return "^" + path + "$"     # not a template: shown as it is
    names = iter(names)
    return "/".join(next(names) if REGEX.search(s) else s
                    for s in segments)


def routes():
    """{path template: {methods}} of conf/routes.conf (a route without a
    restrict line: None, any method reaches its handler)."""
    out = {}
    text = open(os.path.join(psd2lib.TOP, "conf", "routes.conf")).read()
    for m in re.finditer(r"(?m)^route\s+(\S+)\s", text):
        if m.group(1) != XS2A_UNKNOWN:
            out.setdefault(template(m.group(1)), None)
    for m in re.finditer(r"(?m)^restrict\s+(\S+)\s+(.+)$", text):
        out[template(m.group(1))] = set(m.group(2).split())
    return out


def xs2a(path):
    path = path.lstrip("^")
    return path == "/xs2a" or path.startswith("/xs2a")


# The last route of conf/routes.conf: any other path under /xs2a gets the
# standard interface's 404 (the document's x-unknown-path answer).
XS2A_UNKNOWN = "^/xs2a(/.*)?$"


def test_unknown_xs2a_paths_route_last():
    text = open(os.path.join(psd2lib.TOP, "conf", "routes.conf")).read()
    paths = re.findall(r"(?m)^route\s+(\S+)\s", text)
    assert paths[-1] == XS2A_UNKNOWN


def test_document_describes_exactly_the_routes():
    """Outside /xs2a: the document and conf/routes.conf, path for path
    and method for method."""
    doc = {p: set(i) for p, i in DOC["paths"].items() if not xs2a(p)}
    have = {p: m for p, m in routes().items() if not xs2a(p)}
    assert doc == have


def test_document_describes_the_xs2a_operations_of_the_design():
    doc = {p: set(i) for p, i in DOC["paths"].items() if xs2a(p)}
    want = {p: m for p, (m, _) in XS2A.items()}
    want.update((p, {"get"}) for p in CARD_ACCOUNTS)
    assert doc == want


def test_xs2a_part_is_what_the_script_makes_of_the_official_file():
    """assets/openapi.json equals tests/bg/bg_openapi_part.py's merge of
    itself: the /xs2a part cannot drift from the official file (after a
    change of the script: /usr/bin/python3 tests/bg/bg_openapi_part.py
    --write)."""
    with open(openapi_check.DOC_PATH, encoding="utf-8") as f:
        committed = f.read()
    assert bg_openapi_part.text(bg_openapi_part.merge(DOC)) == committed


def test_routes_serve_the_xs2a_operations_of_the_design():
    """conf/routes.conf has each /xs2a route of the design, without a
    restrict line (the handler names its methods with bg_method, so that
    a 405 echoes X-Request-ID; tests/bg/test_bg_routes.py asks the
    service for each path's Allow), and no other /xs2a route than those,
    the card accounts' (405 whatever the method) and the last one, for
    any other path (404)."""
    have = {p: m for p, m in routes().items() if xs2a(p)}
    extra = {p for p in set(have) - set(XS2A)
             if not p.lstrip("^").startswith("/xs2a/v1/card-accounts")}
    assert not extra, "routes.conf: /xs2a routes not in the design: %s" % (
        sorted(extra))
    for path, (methods, source) in XS2A.items():
        assert path in have, "routes.conf: no route for %s" % path
        assert have[path] is None, (path, have[path])
        assert os.path.exists(os.path.join(psd2lib.TOP, "src", "bg",
                                           source)), source


def test_checker_refuses_what_the_document_does_not_say():
    ok = json.dumps({"status": "ok"}).encode()
    h = {"Content-Type": "application/json"}
    assert openapi_check.problems("GET", "http://x/health", 200, h, ok) \
        == []
    assert openapi_check.problems("GET", "http://x/health", 201, h, ok)
    assert openapi_check.problems("GET", "http://x/health", 200, h,
                                  b'{"status":"ok","x":1}')
    assert openapi_check.problems("GET", "http://x/health", 200,
                                  {"Content-Type": "text/html"}, ok)
    body = json.dumps({"error": "invalid_client",
                       "error_description": "x"}).encode()
    # 401 of the token endpoint: WWW-Authenticate is required.
    assert openapi_check.problems("POST", "http://x/auth/oauth/token", 401,
                                  h, body)
    h2 = dict(h, **{"WWW-Authenticate": 'Basic realm="psd2gate"'})
    assert openapi_check.problems("POST", "http://x/auth/oauth/token", 401,
                                  h2, body) == []
    tpp = json.dumps({"tppMessages": [{"category": "ERROR", "code":
                                       "FORMAT_ERROR", "text": "t"}]})
    assert openapi_check.problems("GET", "http://x/nowhere", 404, h,
                                  tpp.encode()) == []
    assert openapi_check.problems("GET", "http://x/nowhere", 200, h,
                                  tpp.encode())
    assert openapi_check.problems(
        "GET", "http://x/auth/v1/psd2/account/abc/transactions", 200, h,
        json.dumps({"account": {"iban": "DE89370400440532013000",
                                "currency": "EUR"},
                    "transactions": [{"transactionId": "1"}]}).encode())


def test_head_is_checked_as_get_without_body(server):
    r = requests.head(server.url + "/health", timeout=10)
    assert r.status_code == 200 and r.content == b""
    h = {"Content-Type": "application/json"}
    assert openapi_check.problems("HEAD", "http://x/health", 200, h,
                                  b"") == []
    assert openapi_check.problems("HEAD", "http://x/health", 200, h,
                                  b'{"status":"ok"}')


def test_responses_of_this_suite_were_checked(server):
    before = openapi_check.checked_count()
    requests.get(server.url + "/health", timeout=10)
    assert openapi_check.checked_count() == before + 1
