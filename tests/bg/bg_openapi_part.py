#!/usr/bin/python3
"""The /xs2a part of psd2gate's OpenAPI document (assets/openapi.json),
made from the Berlin Group's official file
(tests/lib/berlin-group/psd2-api-1.3.11.yaml) and restricted to what
psd2gate serves (src/bg/README.md).

    /usr/bin/python3 tests/bg/bg_openapi_part.py          # check
    /usr/bin/python3 tests/bg/bg_openapi_part.py --write  # rewrite

What is taken, and how:
- the operations of OPERATIONS, each at "/xs2a" + the file's path, with
  the file's summary, operationId, parameters, request body and responses;
- every component those reach (schemas, parameters, request bodies,
  responses, headers), under its official name with the prefix "BG_"
  (psd2gate's own components never start with it), $refs renamed to match;
- left out: the parameters psd2gate does not offer (NOT_OFFERED: sent,
  they are refused with 400 PARAMETER_NOT_SUPPORTED) or does not read
  (NOT_READ: sent, they are ignored), the examples (they show options
  psd2gate does not take, e.g. the embedded approach);
- the payment operations at /xs2a/v1/payments/... ({payment-service}
  fixed, {payment-product} restricted to the products offered), their
  operationIds prefixed "bg" (the contract's payment paths have the
  official ones);
- the security of the operations is psd2gate's own (a bearer token of
  /auth/oauth/token, bound to the TPP's QWAC on the API host, or a
  DPoP-bound one with its proof), and the
  card-accounts paths, which psd2gate does not offer, carry only their
  405 answer;
- JSON Schema of OpenAPI 3.0 made that of 3.1 (exclusiveMinimum: false
  dropped, exclusiveMinimum: true folded into the number).

The rest of the document is psd2gate's own and stays as it is: merge()
takes out the previous part (paths under /xs2a/, components named BG_*,
the official tags) and puts in the new one. tests/prod/test_openapi.py
checks that the committed document equals merge() of itself.
"""

import copy
import json
import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OFFICIAL = os.path.join(TOP, "tests", "lib", "berlin-group",
                        "psd2-api-1.3.11.yaml")
DOCUMENT = os.path.join(TOP, "assets", "openapi.json")
ROOT = "/xs2a"
PREFIX = "BG_"

# (the file's path, method), in the order of src/bg/README.md.
OPERATIONS = [
    ("/v1/consents", "post"),
    ("/v1/consents/{consentId}", "get"),
    ("/v1/consents/{consentId}", "delete"),
    ("/v1/consents/{consentId}/status", "get"),
    ("/v1/consents/{consentId}/authorisations", "post"),
    ("/v1/consents/{consentId}/authorisations", "get"),
    ("/v1/consents/{consentId}/authorisations/{authorisationId}", "get"),
    ("/v1/accounts", "get"),
    ("/v1/accounts/{account-id}", "get"),
    ("/v1/accounts/{account-id}/balances", "get"),
    ("/v1/accounts/{account-id}/transactions", "get"),
    ("/v1/accounts/{account-id}/transactions/{transactionId}", "get"),
    ("/v1/funds-confirmations", "post"),
    ("/v1/{payment-service}/{payment-product}", "post"),
    ("/v1/{payment-service}/{payment-product}/{paymentId}", "get"),
    ("/v1/{payment-service}/{payment-product}/{paymentId}", "delete"),
    ("/v1/{payment-service}/{payment-product}/{paymentId}/status", "get"),
    ("/v1/{payment-service}/{payment-product}/{paymentId}/authorisations",
     "post"),
    ("/v1/{payment-service}/{payment-product}/{paymentId}/authorisations",
     "get"),
    ("/v1/{payment-service}/{payment-product}/{paymentId}/authorisations/"
     "{authorisationId}", "get"),
]

# The payment services and products psd2gate serves: single payments of
# the two SEPA products ({payment-service} is fixed to "payments").
PAYMENT_SERVICE = "payments"
PAYMENT_PRODUCTS = ["sepa-credit-transfers", "instant-sepa-credit-transfers"]

# Paths psd2gate answers with 405 SERVICE_INVALID whatever the method.
NOT_OFFERED_PATHS = [
    "/v1/card-accounts",
    "/v1/card-accounts/{account-id}",
    "/v1/card-accounts/{account-id}/balances",
    "/v1/card-accounts/{account-id}/transactions",
]

# Parameters psd2gate refuses (400 PARAMETER_NOT_SUPPORTED).
NOT_OFFERED = {"entryReferenceFrom", "deltaList", "itemsPerPage"}

# Parameters psd2gate does not read (the PSU is identified by the bank's
# login page; no notifications; no device or context data).
NOT_READ = {
    "PSU-ID", "PSU-ID-Type", "PSU-Corporate-ID", "PSU-Corporate-ID-Type",
    "TPP-Redirect-Preferred", "TPP-Decoupled-Preferred",
    "TPP-Brand-Logging-Information", "TPP-Notification-URI",
    "TPP-Notification-Content-Preferred", "PSU-IP-Port", "PSU-Accept",
    "PSU-Accept-Charset", "PSU-Accept-Encoding", "PSU-Accept-Language",
    "PSU-User-Agent", "PSU-Http-Method", "PSU-Device-ID",
    "PSU-Geo-Location",
}

# Read by the payment operations (and not by the others).
READ_BY_PAYMENTS = {"TPP-Redirect-Preferred", "TPP-Decoupled-Preferred"}
# Not read by the payment operations: the PSU's token names the
# consent, and the one authorisation is always started at initiation.
NOT_READ_BY_PAYMENTS = {"Consent-ID", "TPP-Explicit-Authorisation-Preferred",
                        "TPP-Rejection-NoFunds-Preferred"}

SECURITY = [{"bearerAuth": []}, {"bearerAuth": [], "mutualTLS": []},
            {"dpopAuth": []}]

NOTE = ("psd2gate: the Berlin Group operation at %s (src/bg/README.md; the "
        "bank's options: assets/bg-profile.json). Headers of the guidelines "
        "not listed here are not read.")

NOT_OFFERED_NOTE = ("psd2gate does not offer card accounts: every method "
                    "on this path answers 405 SERVICE_INVALID.")


def official():
    import yaml
    with open(OFFICIAL) as f:
        return yaml.safe_load(f)


def _rename(node):
    """A copy with every local $ref to a component renamed with PREFIX,
    examples left out and JSON Schema 3.0 made 3.1."""
    if isinstance(node, list):
        return [_rename(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "$ref":
            kind, name = _ref(v)
            out[k] = "#/components/%s/%s%s" % (kind, PREFIX, name)
        elif k == "examples" and isinstance(v, dict):
            continue
        elif k == "exclusiveMinimum" and isinstance(v, bool):
            if v:
                out[k] = node["minimum"]
        elif k == "exclusiveMaximum" and isinstance(v, bool):
            if v:
                out[k] = node["maximum"]
        else:
            out[k] = _rename(v)
    if out.get("exclusiveMinimum") is not None and \
            node.get("exclusiveMinimum") is True:
        out.pop("minimum", None)
    if out.get("exclusiveMaximum") is not None and \
            node.get("exclusiveMaximum") is True:
        out.pop("maximum", None)
    return out


def _ref(ref):
    parts = ref.split("/")
    assert ref.startswith("#/components/") and len(parts) == 4, ref
    return parts[2], parts[3]


def _refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield _ref(v)
            elif not (k == "examples" and isinstance(v, dict)):
                yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def _parameter_name(param, src):
    if "$ref" in param:
        kind, name = _ref(param["$ref"])
        param = src["components"][kind][name]
    return param["name"]


def _served_path(path):
    """The file's path as psd2gate serves it (under ROOT)."""
    return ROOT + path.replace("{payment-service}", PAYMENT_SERVICE)


def _product_parameter(param, src):
    """{payment-product} restricted to the products psd2gate offers."""
    kind, name = _ref(param["$ref"])
    out = copy.deepcopy(src["components"][kind][name])
    out.pop("examples", None)
    out["schema"] = {"type": "string", "enum": PAYMENT_PRODUCTS}
    return out


def _operation(src, path, method):
    op = copy.deepcopy(src["paths"][path][method])
    payment = "{payment-service}" in path
    skip = NOT_OFFERED | NOT_READ
    if payment:
        skip = (skip - READ_BY_PAYMENTS) | NOT_READ_BY_PAYMENTS
    params = []
    for p in op.get("parameters", []):
        name = _parameter_name(p, src)
        if name in skip or name == "payment-service":
            continue
        params.append(_product_parameter(p, src)
                      if name == "payment-product" else p)
    op["parameters"] = params
    if payment:
        # The contract's payment paths use the official ids already.
        op["operationId"] = "bg" + op["operationId"][0].upper() + \
            op["operationId"][1:]
    op["security"] = SECURITY
    op["description"] = NOTE % _served_path(path)
    return op


def _not_offered(src, path):
    op = src["paths"][path]["get"]
    return {
        "operationId": op["operationId"],
        "summary": op["summary"] + " (not offered)",
        "description": NOT_OFFERED_NOTE,
        "tags": op["tags"],
        "responses": {"405": op["responses"]["405"]},
    }


def part(src=None):
    """{"tags", "paths", "components"} of the /xs2a part."""
    src = src or official()
    paths = {}
    for path, method in OPERATIONS:
        paths.setdefault(_served_path(path), {})[method] = _operation(
            src, path, method)
    for path in NOT_OFFERED_PATHS:
        paths[ROOT + path] = {"get": _not_offered(src, path)}

    # The components the operations reach, in the official file's order.
    wanted = set()
    todo = list(_refs(paths))
    while todo:
        ref = todo.pop()
        if ref in wanted:
            continue
        wanted.add(ref)
        kind, name = ref
        todo.extend(_refs(src["components"][kind][name]))
    components = {}
    for kind, items in src["components"].items():
        for name, value in items.items():
            if (kind, name) in wanted:
                components.setdefault(kind, {})[PREFIX + name] = \
                    _rename(value)

    used = []
    for item in paths.values():
        for op in item.values():
            used += [t for t in op.get("tags", []) if t not in used]
    tags = [{"name": t["name"], "description": "Berlin Group "
             "NextGenPSD2 1.3.11 under %s (src/bg/README.md): %s" % (
                 ROOT, t["description"].strip())}
            for t in src["tags"] if t["name"] in used]
    return {"tags": tags, "paths": _rename(paths), "components": components}


def _is_ours(path):
    return path == ROOT or path.startswith(ROOT + "/")


def merge(doc, src=None):
    """The document with its /xs2a part made anew."""
    new = part(src)
    out = copy.deepcopy(doc)
    names = {t["name"] for t in new["tags"]}
    out["tags"] = [t for t in out.get("tags", []) if t["name"] not in names]
    out["tags"] += new["tags"]
    out["paths"] = {p: i for p, i in out["paths"].items()
                    if not _is_ours(p)}
    out["paths"].update(new["paths"])
    comps = out["components"]
    for kind in list(comps):
        comps[kind] = {n: v for n, v in comps[kind].items()
                       if not n.startswith(PREFIX)}
    for kind, items in new["components"].items():
        clash = set(comps.get(kind, {})) & set(items)
        assert not clash, clash
        comps.setdefault(kind, {}).update(items)
    return out


def text(doc):
    """The document's bytes as committed."""
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv):
    with open(DOCUMENT, encoding="utf-8") as f:
        current = f.read()
    merged = text(merge(json.loads(current)))
    if argv[1:] == ["--write"]:
        if merged != current:
            with open(DOCUMENT, "w", encoding="utf-8") as f:
                f.write(merged)
        return 0
    if argv[1:]:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if merged != current:
        print("assets/openapi.json differs from its /xs2a part: run "
              "/usr/bin/python3 tests/bg/bg_openapi_part.py --write",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
