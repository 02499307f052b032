"""Every request a test sends to the standard interface (/xs2a/...) and
every response it receives, checked against the Berlin Group's official
OpenAPI file (tests/lib/berlin-group/psd2-api-1.3.11.yaml, unchanged).

psd2gate's path is the file's path with ROOT ("/xs2a") in front.
openapi_check.check_response calls check(request, response) for every
response of a test instance on a path under /xs2a/; check raises
AssertionError naming every problem it found:

- the request: the operation exists (a literal segment beats a template:
  of the templates that match, the one with the most literal segments
  wins, and a path parameter outside its schema's enum does not match,
  so /v1/foo/bar is not a payment product); its required path, query and
  header parameters are present (header names case-insensitive) and
  every value given is valid against its schema; a JSON body is valid
  against the operation's requestBody schema.
- the response: its status is documented for the operation; the headers
  the file requires are present and every documented header given is
  valid; the content type is documented; a JSON body is valid against
  the schema; a response documented without content (204) has no body.
  X-Request-ID echoes the request's when that was a UUID
  (src/bg/README.md). Every error answer (4xx, 5xx) has the tppMessages
  shape of src/bg/README.md "Errors" (category, code, text; the file's
  error schemas require none of them). A path or method the file does
  not have must be answered 404 (path) or 405 (method) in that shape.

Schemas are OpenAPI 3.0 (JSON Schema draft 4 with `nullable`): they are
checked with jsonschema's Draft4Validator, `$ref` resolved in the file,
`nullable: true` read as "or null", and the formats jsonschema offers
(date, uuid, ipv4, ...) plus date-time, uri and byte checked here.

A test that sends a deliberately invalid request wraps it in
`with expect_invalid_request() as inv:`: the request's problems are then
only reported (inv.problems, stderr) and the response is still checked
in full. The block fails if no request in it was invalid, so the marker
cannot hide a check.

checked() counts what was checked, for tests that assert validation ran.
"""

import base64
import binascii
import contextlib
import json
import os
import re
import sys
import urllib.parse

import jsonschema
import yaml

import openapi_check

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC_PATH = os.path.join(TOP, "tests", "lib", "berlin-group",
                        "psd2-api-1.3.11.yaml")
ROOT = "/xs2a"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch",
           "trace")
# OpenAPI 3.0: header parameters of these names are ignored.
IGNORED_HEADERS = {"accept", "content-type", "authorization"}

_doc = None
_routes = None
_checked = {"requests": 0, "responses": 0, "invalid_requests": 0}
_operations = {}
_expecting = []

# The answer to a path or method the file does not have.
TPP_MESSAGES = {
    "type": "object",
    "required": ["tppMessages"],
    "properties": {
        "tppMessages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["category", "code", "text"],
                "properties": {
                    "category": {"enum": ["ERROR", "WARNING"]},
                    "code": {"type": "string", "minLength": 1},
                    "path": {"type": "string"},
                    "text": {"type": "string", "maxLength": 500},
                },
            },
        },
    },
}


# --------------------------------------------------------------------------
# The file

def _nullable(node):
    """OpenAPI 3.0's nullable as JSON Schema (in place)."""
    if isinstance(node, dict):
        if node.get("nullable") is True:
            t = node.get("type")
            if isinstance(t, str):
                node["type"] = [t, "null"]
            if isinstance(node.get("enum"), list) and None not in node["enum"]:
                node["enum"] = node["enum"] + [None]
        for v in node.values():
            _nullable(v)
    elif isinstance(node, list):
        for v in node:
            _nullable(v)


def document():
    global _doc
    if _doc is None:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        with open(DOC_PATH, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=loader)
        _nullable(doc)
        _doc = doc
    return _doc


def deref(obj, doc=None):
    """obj with its $ref (into the file) followed."""
    return openapi_check._deref(obj, doc or document())


_RFC3339 = re.compile(
    r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")

_formats = jsonschema.FormatChecker()


@_formats.checks("date-time", raises=ValueError)
def _date_time(value):
    import datetime
    if not isinstance(value, str):
        return True
    if not _RFC3339.match(value):
        return False
    datetime.datetime.fromisoformat(value.replace("z", "Z")
                                    .replace("Z", "+00:00"))
    return True


@_formats.checks("uri")
def _uri(value):
    if not isinstance(value, str):
        return True
    parts = urllib.parse.urlsplit(value)
    return bool(parts.scheme) and not re.search(r"\s", value)


@_formats.checks("byte", raises=(binascii.Error, ValueError))
def _byte(value):
    if not isinstance(value, str):
        return True
    base64.b64decode(value, validate=True)
    return True


def validator(schema, doc=None):
    doc = doc or document()
    resolver = jsonschema.RefResolver("", doc)
    return jsonschema.Draft4Validator(schema, resolver=resolver,
                                      format_checker=_formats)


def schema_errors(schema, value, doc=None, limit=5):
    errs = sorted(validator(schema, doc).iter_errors(value),
                  key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return ["%s: %s" % ("".join("[%r]" % p for p in e.absolute_path) or
                        "(top)", e.message) for e in errs[:limit]]


# --------------------------------------------------------------------------
# Paths

def _route_table(doc):
    global _routes
    if _routes is None:
        out = []
        for template, item in doc["paths"].items():
            segs = []
            for s in (ROOT + template).split("/")[1:]:
                m = re.fullmatch(r"\{([^}]+)\}", s)
                segs.append((None, m.group(1)) if m else (s, None))
            literals = sum(1 for lit, _ in segs if lit is not None)
            out.append((template, item, segs, literals))
        _routes = out
    return _routes


def _parameters(item, op, doc):
    """The operation's parameters by (in, key), the path item's first and
    the operation's overriding them; header keys are lower case."""
    out = {}
    for p in list(item.get("parameters") or []) + list(
            (op or {}).get("parameters") or []):
        p = deref(p, doc)
        key = p["name"].lower() if p["in"] == "header" else p["name"]
        out[(p["in"], key)] = p
    return out


def _enum_ok(item, name, value, doc):
    for op in [item] + [item[m] for m in METHODS if m in item]:
        for p in op.get("parameters") or []:
            p = deref(p, doc)
            if p["in"] == "path" and p["name"] == name:
                enum = deref(p.get("schema") or {}, doc).get("enum")
                return enum is None or value in enum
    return True


def match_path(path, doc=None):
    """(template, path item, {path parameter: value}) of the file's path
    that psd2gate's path stands for, or (None, None, {})."""
    doc = doc or document()
    segs = path.split("/")[1:]
    best = None
    for template, item, tsegs, literals in _route_table(doc):
        if len(tsegs) != len(segs):
            continue
        params = {}
        for (lit, name), s in zip(tsegs, segs):
            if lit is not None:
                if s != lit:
                    break
            elif s == "":
                break
            else:
                params[name] = urllib.parse.unquote(s)
        else:
            if not all(_enum_ok(item, n, v, doc) for n, v in params.items()):
                continue
            if best is None or literals > best[3]:
                best = (template, item, params, literals)
    if best is None:
        return None, None, {}
    return best[0], best[1], best[2]


def find_operation(method, path, doc=None):
    """(template, path item, operation or None, path parameters)."""
    doc = doc or document()
    template, item, params = match_path(path, doc)
    if template is None:
        return None, None, None, {}
    return template, item, item.get(method.lower()), params


# --------------------------------------------------------------------------
# Values as text (headers, query, path) read as their schema's type

def _typed(text, schema, doc):
    schema = deref(schema, doc)
    t = schema.get("type")
    if t == "boolean" and text in ("true", "false"):
        return text == "true"
    if t == "integer" and re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if t == "number" and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text):
        return float(text)
    if t == "array":
        items = schema.get("items") or {}
        return [_typed(v, items, doc) for v in text.split(",")]
    return text


def _value_errors(what, text, p, doc):
    schema = p.get("schema")
    if schema is None:
        return []
    return ["%s %s=%r: %s" % (what, p["name"], text, e.split(": ", 1)[1])
            for e in schema_errors(schema, _typed(text, schema, doc), doc,
                                   limit=3)]


def _text(body):
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    # A generator or file: not something the tests send to /xs2a/.
    raise AssertionError("request body of type %s cannot be checked" %
                         type(body).__name__)


def _media_type(headers):
    return (headers.get("content-type") or "").split(";")[0].strip().lower()


# --------------------------------------------------------------------------
# The checks

def request_problems(method, url, headers, body, doc=None):
    """What is wrong with this request according to the file (texts)."""
    doc = doc or document()
    parts = urllib.parse.urlsplit(url)
    where = "%s %s" % (method.upper(), parts.path)
    template, item, op, params = find_operation(method, parts.path, doc)
    if template is None:
        return ["%s: no path of the file matches" % where]
    if op is None:
        return ["%s: the file's %s has no %s" % (where, template,
                                                   method.upper())]
    where = "%s %s (%s)" % (method.upper(), parts.path, template)
    lower = {k.lower(): v for k, v in headers.items()}
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    out = []
    for (loc, key), p in _parameters(item, op, doc).items():
        if loc == "path":
            values = [params[key]] if key in params else []
        elif loc == "query":
            values = query.get(key, [])
        elif loc == "header":
            if key in IGNORED_HEADERS:
                continue
            values = [lower[key]] if key in lower else []
        else:
            continue
        if not values:
            if p.get("required"):
                out.append("%s: %s parameter %s missing" % (where, loc,
                                                            p["name"]))
            continue
        if len(values) > 1:
            out.append("%s: %s parameter %s given %d times" % (
                where, loc, p["name"], len(values)))
        for v in values:
            out += ["%s: %s" % (where, e)
                    for e in _value_errors(loc, v, p, doc)]
    raw = _text(body)
    rb = deref(op.get("requestBody"), doc) if op.get("requestBody") else None
    if not raw:
        if rb is not None and rb.get("required"):
            out.append("%s: request body missing" % where)
        return out
    if rb is None:
        return out + ["%s: the operation takes no body (%d bytes sent)" % (
            where, len(raw))]
    return out + _content_problems(where + ": request", rb.get("content"),
                                   _media_type(lower), raw, doc)


def _is_uuid(text):
    return bool(text) and re.fullmatch(
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
        r"[0-9a-fA-F]{12}", text) is not None


def _body_problems(where, schema, body, doc):
    try:
        value = json.loads(body.decode("utf-8"))
    except ValueError as e:
        return ["%s body is not JSON: %s" % (where, e)]
    return ["%s body%s" % (where, e) for e in schema_errors(schema, value,
                                                             doc)]


def _content_problems(where, content, ctype, body, doc):
    """A body of media type ctype against the file's content map."""
    content = content or {}
    if ctype not in content:
        return ["%s content type %r not documented (%s)" % (
            where, ctype, ", ".join(content))]
    schema = content[ctype].get("schema")
    if schema is None or not ctype.endswith("json"):
        return []
    return _body_problems(where, schema, body, doc)


def response_problems(method, url, request_headers, status, headers, body,
                      doc=None):
    """What is wrong with this response according to the file (texts)."""
    doc = doc or document()
    body = body or b""
    path = urllib.parse.urlsplit(url).path
    where = "%s %s -> %d" % (method.upper(), path, status)
    template, item, op, _ = find_operation(method, path, doc)
    lower = {k.lower(): v for k, v in headers.items()}
    ctype = _media_type(lower)
    out = []
    rid = {k.lower(): v for k, v in request_headers.items()}.get(
        "x-request-id")
    if _is_uuid(rid) and lower.get("x-request-id") != rid:
        out.append("%s: X-Request-ID %r does not echo the request's %r" % (
            where, lower.get("x-request-id"), rid))
    if template is None or op is None:
        want = 404 if template is None else 405
        what = "a path the file does not have" if template is None else \
            "a method the file's %s does not have" % template
        if status != want:
            out.append("%s: %s must be answered %d" % (where, what, want))
        if not _is_uuid(lower.get("x-request-id")):
            out.append("%s: header X-Request-ID missing or not a UUID" %
                       where)
        return out + _content_problems(
            where + ":", {"application/json": {"schema": TPP_MESSAGES}},
            ctype, body, doc)
    where = "%s %s (%s) -> %d" % (method.upper(), path, template, status)
    responses = op["responses"]
    spec = responses.get(str(status)) or responses.get(
        "%dXX" % (status // 100)) or responses.get("default")
    if spec is None:
        return out + ["%s: status not documented (documented: %s)" % (
            where, ", ".join(sorted(responses)))]
    spec = deref(spec, doc)
    for name, h in (spec.get("headers") or {}).items():
        h = deref(h, doc)
        if name.lower() not in lower:
            if h.get("required"):
                out.append("%s: header %s missing" % (where, name))
            continue
        schema = h.get("schema")
        if schema is not None:
            text = lower[name.lower()]
            out += ["%s: header %s=%r: %s" % (where, name, text,
                                              e.split(": ", 1)[1])
                    for e in schema_errors(schema, _typed(text, schema, doc),
                                           doc, limit=3)]
    content = spec.get("content")
    if not content:
        if body:
            out.append("%s: a body where the file has none (%s, %d bytes)"
                       % (where, ctype or "no type", len(body)))
        return out
    out += _content_problems(where + ":", content, ctype, body, doc)
    if status >= 400 and ctype == "application/json":
        out += _body_problems(where + ": (tppMessages)", TPP_MESSAGES, body,
                              doc)
    return out


class Expectation:
    """What expect_invalid_request saw: the problems of the requests
    sent inside it (one list per invalid request)."""

    def __init__(self):
        self.problems = []
        self.requests = 0


@contextlib.contextmanager
def expect_invalid_request():
    """Requests sent inside are meant to be invalid: their problems are
    reported, not raised; responses are still checked in full. Fails at
    the end if none of them was invalid."""
    exp = Expectation()
    _expecting.append(exp)
    try:
        yield exp
    finally:
        _expecting.remove(exp)
    if exp.requests and not exp.problems:
        raise AssertionError(
            "expect_invalid_request: %d request(s) sent, all valid "
            "according to %s" % (exp.requests, os.path.basename(DOC_PATH)))


def check(request, response):
    """Raises AssertionError naming every problem of this request to
    /xs2a/ and its response (requests' PreparedRequest and Response)."""
    doc = document()
    url = request.url
    req_found = request_problems(request.method, url, request.headers,
                                 request.body, doc)
    resp_found = response_problems(request.method, url, request.headers,
                                   response.status_code, response.headers,
                                   response.content, doc)
    _checked["requests"] += 1
    _checked["responses"] += 1
    template, _, op, _ = find_operation(request.method,
                                        urllib.parse.urlsplit(url).path, doc)
    key = (request.method.upper(), template if op is not None else None,
           response.status_code)
    _operations[key] = _operations.get(key, 0) + 1
    msgs = []
    exp = _expecting[-1] if _expecting else None
    if exp is not None:
        exp.requests += 1
    if req_found and exp is not None:
        exp.problems.append(req_found)
        _checked["invalid_requests"] += 1
        sys.stderr.write("bg_openapi: request invalid as expected:\n  " +
                         "\n  ".join(req_found) + "\n")
    elif req_found:
        msgs.append("request does not match the Berlin Group file:\n  " +
                    "\n  ".join(req_found))
    if resp_found:
        msgs.append("response does not match the Berlin Group file:\n  " +
                    "\n  ".join(resp_found))
    if msgs:
        raise AssertionError("%s\nbody: %r" % ("\n".join(msgs),
                                               response.content[:500]))


def checked():
    """Counts so far: requests, responses, invalid_requests (marked)."""
    return dict(_checked)


def checked_operations():
    """{(METHOD, file's path template or None, status): count}."""
    return dict(_operations)
