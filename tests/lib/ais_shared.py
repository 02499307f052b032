"""What the account-information suites share (tests/ais, tests/bg):
signed API calls, tokens by the real authorisation flow, test data
written straight into PostgreSQL (balances and transactions have no
operator command), and the checks of the error bodies. Each suite's
conftest imports it whole, so a test takes these names from conftest."""

import datetime
import hashlib
import json
import uuid
from decimal import Decimal

import pytest

from psd2lib import MAIN_URL, db_connect, exchange_code, run_code_flow


def sql(db, query, *args):
    cur = db.cursor()
    cur.execute(query, args)
    # Statements without a result (UPDATE ...) have nothing to fetch.
    return cur.fetchall() if cur.description is not None else None


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


# The running service (psd2_fixtures' server, conf/test.conf) for every
# test of a suite that imports these fixtures, and the owner's connection.

@pytest.fixture(autouse=True)
def _running_service(server):
    return server


@pytest.fixture(scope="session")
def db(dbinfo):
    c = db_connect(dbinfo)
    yield c
    c.close()


@pytest.fixture(scope="session")
def today(db):
    return sql(db, "SELECT current_date")[0][0]
