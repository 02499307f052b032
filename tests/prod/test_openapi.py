"""The OpenAPI document (assets/openapi.json): served by the service as
compiled in, well formed (OpenAPI 3.1 structure, every schema a valid
JSON Schema 2020-12, every $ref resolves), describing exactly the routes
of conf/routes.conf, and the response checker of tests/lib/openapi_check.py
(which checks every response of the api, ais, tpp and prod suites)
refuses what the document does not describe."""

import json
import os
import re

import jsonschema
import requests

import openapi_check
import psd2lib

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


# The names of the [^/]+ segments of the regex routes, in order.
SEGMENTS = {
    "/auth/v1/psd2/account/": ["{account-id}"],
    "/auth/v1/psd2/payments/": ["{payment-product}", "{paymentId}",
                                "{authorisationId}"],
    "/auth/payments/": ["{paymentId}"],
    "/auth/consents/": ["{consentId}", "{authorisationId}"],
}


def routes():
    """{path template: {methods}} of conf/routes.conf."""
    out = {}
    text = open(os.path.join(psd2lib.TOP, "conf", "routes.conf")).read()
    for m in re.finditer(r"(?m)^restrict\s+(\S+)\s+(.+)$", text):
        path = m.group(1)
        if path.startswith("^"):
            path = path.strip("^$")
            names = iter(SEGMENTS[path.split("[^/]+")[0]])
            path = re.sub(r"\[\^/\]\+", lambda _: next(names), path)
        out[path] = set(m.group(2).split())
    return out


def test_document_describes_exactly_the_routes():
    doc = {p: set(i) for p, i in DOC["paths"].items()}
    assert doc == routes()


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
