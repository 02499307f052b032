"""Every response a test receives from psd2gate, checked against the
OpenAPI document the service serves (assets/openapi.json, embedded in the
binary and served at /auth/v1/psd2/openapi.json).

install() wraps requests' Session.send, which every requests call and
Authlib's OAuth2Session go through. A response from one of the test
instances (127.0.0.1 or the production test's host names) must match the
document: a documented path and method (or the 404/405 answer the
document describes for anything else), a documented status, its media
type, its required headers, and a JSON body valid against its schema.
A mismatch raises AssertionError in the test that received it, naming
the request, so the document cannot drift from the code.
"""

import json
import os
import re
import urllib.parse

import requests

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC_PATH = os.path.join(TOP, "assets", "openapi.json")
HOSTS = {"127.0.0.1", "psd2.bank.example", "api.psd2.bank.example"}
METHODS = ("get", "put", "post", "delete", "options", "head", "patch",
           "trace")

_doc = None
_routes = None
_checked = {"responses": 0}


def document():
    global _doc
    if _doc is None:
        with open(DOC_PATH) as f:
            _doc = json.load(f)
    return _doc


def _routes_of(doc):
    global _routes
    if _routes is None:
        out = []
        for template, item in doc["paths"].items():
            rx = re.escape(template)
            rx = re.sub(r"\\\{[^}]+\\\}", "[^/]+", rx)
            out.append((re.compile("^" + rx + "$"), template, item))
        _routes = out
    return _routes


def find_operation(path, method, doc=None):
    """(template, path item, operation or None); template None if no path
    of the document matches."""
    doc = doc or document()
    for rx, template, item in _routes_of(doc):
        if rx.match(path):
            return template, item, item.get(method.lower())
    return None, None, None


def _validator(schema, doc):
    import jsonschema
    resolver = jsonschema.RefResolver("", doc)
    return jsonschema.Draft202012Validator(
        schema, resolver=resolver,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _deref(obj, doc):
    while isinstance(obj, dict) and "$ref" in obj:
        ref = obj["$ref"]
        assert ref.startswith("#/"), ref
        node = doc
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        obj = node
    return obj


def problems(method, url, status, headers, body, doc=None):
    """What is wrong with this response according to the document (a
    list of texts; empty when it matches)."""
    doc = doc or document()
    path = urllib.parse.urlsplit(url).path
    head = method.upper() == "HEAD"
    # HEAD is answered as GET without the body (Kore patch 0015).
    template, item, op = find_operation(path, "get" if head else method,
                                        doc)
    if template is None or op is None:
        # Anything the document does not describe: the documented
        # answer for an unknown path or a method a path does not have.
        key = "x-unknown-path" if template is None else "x-other-method"
        responses = doc[key]["responses"]
    else:
        responses = op["responses"]
    spec = responses.get(str(status)) or responses.get(
        "%dXX" % (status // 100)) or responses.get("default")
    where = "%s %s -> %d" % (method.upper(), path, status)
    if spec is None:
        return ["%s: status not documented (documented: %s)" % (
            where, ", ".join(sorted(responses)))]
    spec = _deref(spec, doc)
    out = []
    lower = {k.lower(): v for k, v in headers.items()}
    for name, h in (spec.get("headers") or {}).items():
        h = _deref(h, doc)
        if h.get("required") and name.lower() not in lower:
            out.append("%s: header %s missing" % (where, name))
        elif name.lower() in lower and "schema" in h:
            errs = sorted(_validator(h["schema"], doc).iter_errors(
                lower[name.lower()]), key=str)
            out += ["%s: header %s: %s" % (where, name, e.message)
                    for e in errs[:3]]
    content = spec.get("content")
    ctype = lower.get("content-type", "").split(";")[0].strip().lower()
    if head:
        return out + (["%s: HEAD answered with a body" % where]
                      if body else [])
    if not content:
        if body:
            out.append("%s: body not documented (%s, %d bytes)" % (
                where, ctype, len(body)))
        return out
    if ctype not in content:
        out.append("%s: content type %r not documented (%s)" % (
            where, ctype, ", ".join(content)))
        return out
    schema = content[ctype].get("schema")
    if schema is not None and ctype.endswith("json"):
        try:
            value = json.loads(body.decode("utf-8"))
        except ValueError as e:
            return out + ["%s: body is not JSON: %s" % (where, e)]
        errs = sorted(_validator(schema, doc).iter_errors(value),
                      key=lambda e: list(e.absolute_path))
        out += ["%s: body%s: %s" % (where, "".join(
            "[%r]" % p for p in e.absolute_path), e.message)
            for e in errs[:5]]
    return out


def _ours(url):
    parts = urllib.parse.urlsplit(url)
    return parts.hostname in HOSTS


def check_response(resp):
    req = resp.request
    if not _ours(req.url):
        return
    body = resp.content
    if urllib.parse.urlsplit(req.url).path.startswith("/xs2a/"):
        # The standard interface: the request and the response against
        # the Berlin Group's official file (tests/lib/bg_openapi.py).
        import bg_openapi
        bg_openapi.check(req, resp)
        _checked["responses"] += 1
        return
    found = problems(req.method, req.url, resp.status_code, resp.headers,
                     body)
    _checked["responses"] += 1
    report = os.environ.get("PSD2_OPENAPI_REPORT")
    if found and report:
        # Survey mode (writing the document): note, do not fail.
        with open(report, "a") as f:
            f.write(json.dumps({"problems": found,
                                "body": body[:300].decode("utf-8",
                                                          "replace")}) + "\n")
        return
    if found:
        raise AssertionError("response does not match the OpenAPI "
                             "document (assets/openapi.json):\n  " +
                             "\n  ".join(found) + "\nbody: %r" % body[:500])


def checked_count():
    return _checked["responses"]


def install():
    if getattr(requests.Session.send, "_psd2_openapi", False):
        return
    original = requests.Session.send

    def send(self, request, **kw):
        resp = original(self, request, **kw)
        if not kw.get("stream"):
            check_response(resp)
        return resp
    send._psd2_openapi = True
    requests.Session.send = send
