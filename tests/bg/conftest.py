"""Berlin Group suite: the standard interface under /xs2a/v1
(src/bg/README.md) against the real psd2gate (tests/lib/psd2_fixtures.py
starts it on 18080, or $PSD2_TEST_PORT) and PostgreSQL. Every request to
/xs2a/ and every response is validated against the Berlin Group's
official OpenAPI file (tests/lib/bg_openapi.py, installed with the
OpenAPI check of tests/lib/openapi_check.py).

Test data: each module makes its own PSUs and TPP clients with psd2ctl
(make_psu / make_client) and walks the real OAuth flow for tokens.
Balances and transactions are inserted straight into PostgreSQL (tables
of src/db/migrations/010_ais.sql): the service has no command for them.
"""

import datetime
import hashlib
import json
import os
import subprocess
import sys
import uuid
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402

import psd2lib  # noqa: E402
import psd2_fixtures  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403
from psd2lib import (MAIN_URL, db_connect, exchange_code,  # noqa: E402
                     run_code_flow)

BG = "/xs2a/v1"
API = "/auth/v1/psd2"
ACCOUNT_LIST = API + "/account/account-list"
BALANCE = API + "/account/account-balance"
FUNDS = API + "/funds-confirmations"
CONSENT = API + "/consents/current"


def tx_path(account_id):
    return "%s/account/%s/transactions" % (API, account_id)


def _conf_has(conf, name):
    with open(os.path.join(psd2lib.TOP, conf)) as f:
        return any(ln.split()[:1] == [name] for ln in f)


@pytest.fixture(scope="session")
def bg_pki():
    """The sandbox TPP certificate and the CA the service must trust.
    While conf/test.conf configures no psd2_trust_dir (TPP identity work
    in progress), a private sandbox PKI is minted with tests/pki/mint.sh
    and passed to this suite's own instance; otherwise None (the shared
    fixtures apply unchanged)."""
    if _conf_has("conf/test.conf", "psd2_trust_dir"):
        return None
    mint = os.path.join(psd2lib.TOP, "tests", "pki", "mint.sh")
    if not os.path.exists(mint):
        return None
    d = os.path.join(psd2lib.LOG_DIR, "bg-pki")
    os.makedirs(psd2lib.LOG_DIR, exist_ok=True)
    subprocess.run(["sh", mint, "sandbox", d], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return d


@pytest.fixture(scope="session")
def signer(bg_pki, service_setup):
    # After service_setup: it mints var/sandbox/tpp.crt and the CA that
    # Signer.load() reads (in a fresh checkout they are not there before).
    if bg_pki is None:
        return psd2lib.Signer.load()
    with open(os.path.join(bg_pki, "tpp.crt"), "rb") as f:
        crt = f.read()
    with open(os.path.join(bg_pki, "tpp.key"), "rb") as f:
        key = f.read()
    return psd2lib.Signer(crt, key)


@pytest.fixture(scope="session")
def server(service_setup, bg_pki):
    if bg_pki is None:
        srv = psd2_fixtures._start("conf/test.conf", psd2lib.MAIN_PORT,
                                   "psd2gate-main", psd2lib.CONF_MAIN_PORT)
    else:
        conf = psd2lib.derived_conf("conf/test.conf", psd2lib.MAIN_PORT,
                                    "psd2gate-main")
        with open(conf, "a") as f:
            f.write("psd2_trust_dir %s\n" % os.path.join(bg_pki, "trust"))
        srv = psd2_fixtures._start(conf, psd2lib.MAIN_PORT,
                                   "psd2gate-main", None)
    yield srv
    psd2_fixtures._stop(srv)


@pytest.fixture(autouse=True)
def _running_service(server):
    return server


@pytest.fixture(scope="session")
def db(dbinfo):
    c = db_connect(dbinfo)
    yield c
    c.close()


def sql(db, query, *args):
    cur = db.cursor()
    cur.execute(query, args)
    # Statements without a result (UPDATE ...) have nothing to fetch.
    return cur.fetchall() if cur.description is not None else None


@pytest.fixture(scope="session")
def today(db):
    return sql(db, "SELECT current_date")[0][0]


class Api:
    """Signed API calls (psd2lib.Signer; spec part 5.4 headers; the
    signer adds an X-Request-ID when the caller sends none)."""

    def __init__(self, signer, base=MAIN_URL):
        self.signer = signer
        self.base = base

    def call(self, method, path, token=None, body=None, headers=None,
             authorization=None, raw=None):
        h = {"Content-Type": "application/json"}
        if authorization is not None:
            h["Authorization"] = authorization
        elif token is not None:
            h["Authorization"] = "Bearer " + token
        h.update(headers or {})
        data = raw if raw is not None else (
            json.dumps(body).encode() if body is not None else b"")
        return self.signer.request(method, self.base + path, body=data,
                                   headers=h, timeout=30,
                                   allow_redirects=False)

    def get(self, path, token=None, **kw):
        return self.call("GET", path, token, **kw)


@pytest.fixture(scope="session")
def api(signer):
    return Api(signer)


def token_hash(tok):
    return hashlib.sha256(tok.encode()).digest()


def get_tokens(client, psu, scope="ACCOUNT_INFORMATION", accounts=None):
    """(token response, consent id) via the real authorisation flow."""
    code, _, _, _ = run_code_flow(client, psu, scope, accounts=accounts)
    r = exchange_code(client, code)
    assert r.status_code == 200, r.text
    return r.json()


def consent_of(db, tok):
    return sql(db, "SELECT consent_id FROM token WHERE token_hash = %s",
               token_hash(tok))[0][0]


def account_row(db, iban):
    return sql(db, "SELECT id, resource_id FROM account WHERE iban = %s",
               iban)[0]


def add_balance(db, iban, minor, ref_date=None):
    acc, _ = account_row(db, iban)
    sql(db, """INSERT INTO balance (account_id, amount_minor, last_change_at,
               reference_date) VALUES (%s, %s, now(), coalesce(%s,
               current_date)) ON CONFLICT (account_id) DO UPDATE
               SET amount_minor = EXCLUDED.amount_minor""",
        acc, minor, ref_date)


def add_transactions(db, iban, rows):
    """rows: [(booking_date, value_date, amount_minor, explanation)] in
    insertion order; returns the transactionIds in the same order."""
    acc, _ = account_row(db, iban)
    ids = []
    cur = db.cursor()
    for booking, value, minor, text in rows:
        tid = "T" + uuid.uuid4().hex[:20].upper()
        cur.execute("""INSERT INTO account_transaction (account_id,
            transaction_id, booking_date, value_date, amount_minor, currency,
            explanation) VALUES (%s, %s, %s, %s, %s, 'EUR', %s)""",
                    (acc, tid, booking, value, minor, text))
        ids.append(tid)
    return ids


def jload(r):
    """The body with numbers as Decimal (exact text)."""
    return json.loads(r.text, parse_float=Decimal)


def tpp_error(r, status, code, path=None, text=None):
    assert r.status_code == status, (r.status_code, r.text[:500])
    assert r.headers.get("Content-Type", "").startswith("application/json")
    body = r.json()
    assert list(body) == ["tppMessages"], body
    assert len(body["tppMessages"]) == 1, body
    m = body["tppMessages"][0]
    assert m["category"] == "ERROR"
    assert m["code"] == code, body
    if path is not None:
        assert m.get("path") == path, body
    if text is not None:
        assert m["text"] == text, body
    assert isinstance(m["text"], str) and 0 < len(m["text"]) <= 500
    return m


def bearer_401(r, description):
    assert r.status_code == 401, (r.status_code, r.text[:300])
    assert r.json() == {"error": "invalid_token",
                        "error_description": description}
    assert 'error="invalid_token"' in r.headers.get("WWW-Authenticate", "")


def day(d, n):
    return d - datetime.timedelta(days=n)
