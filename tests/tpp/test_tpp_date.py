"""A signature must sign its time: draft-cavage signatures must
list date among the signed headers (this bank's rule; the Berlin Group
text allows date but does not require it), a JWS signs sigT. Otherwise a
captured request stays usable for ever once the x-request-id replay
memory has forgotten it. The replay memory itself must outlast the clock
skew window (and a database crash)."""

import uuid

import pytest

import psd2lib
from psd2lib import exchange_code, make_psu, run_code_flow, sandbox_client
from tpp_signing import Identity, http_date, sign_request

from conftest import PKI_DIR, SANDBOX_DIR
from test_tpp_api import LIST, call, expect, get


@pytest.fixture(scope="module")
def ids():
    return {"all": Identity.load(PKI_DIR, "all"),
            "ec": Identity.load(PKI_DIR, "ec"),
            "sandbox": Identity.load(SANDBOX_DIR, "tpp")}


@pytest.fixture(scope="module")
def token(service_setup):
    psu = make_psu(1)
    code, _, _, _ = run_code_flow(sandbox_client(), psu,
                                  "ACCOUNT_INFORMATION")
    r = exchange_code(sandbox_client(), code)
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


@pytest.fixture(scope="module")
def db(dbinfo):
    c = psd2lib.db_connect(dbinfo)
    yield c
    c.close()


def q(db, sql, *args):
    cur = db.cursor()
    cur.execute(sql, args)
    return cur.fetchall() if cur.description else None


DATE_TEXT = ("Signature: the signed headers must include date, so that a "
             "signature cannot be replayed later.")


@pytest.mark.parametrize("names", [
    ["digest", "x-request-id"],
    ["x-request-id", "digest"],
    ["(request-target)", "digest", "x-request-id"],
])
def test_cavage_without_signed_date_is_refused(ids, token, names):
    r = call(ids["sandbox"], token, names=names)
    msg = expect(r, 401, "SIGNATURE_INVALID")
    assert msg["text"] == DATE_TEXT


def test_ecdsa_without_signed_date_is_refused(ids, token):
    r = call(ids["ec"], token, algorithm="ecdsa-sha256",
             names=["digest", "x-request-id"])
    assert expect(r, 401, "SIGNATURE_INVALID")["text"] == DATE_TEXT


def test_date_anywhere_in_the_list_is_accepted(ids, token):
    for names in (["date", "digest", "x-request-id"],
                  ["digest", "date", "x-request-id"]):
        r = call(ids["sandbox"], token, names=names)
        assert r.status_code == 200, r.text


def test_unsigned_date_cannot_refresh_a_captured_signature(ids, token, db):
    """The attack the rule closes: a request signed over digest and
    x-request-id alone, captured and replayed a day later (the replay
    mark gone) with a fresh, unsigned date header."""
    rid = str(uuid.uuid4())
    h = sign_request(ids["sandbox"], request_id=rid,
                     names=["digest", "x-request-id"])
    assert get(LIST, token, h).status_code == 401
    # Nothing was marked: the refusal happened before the database.
    assert q(db, "SELECT count(*) FROM request_replay WHERE request_id = %s",
             rid) == [(0,)]
    h["Date"] = http_date()
    assert get(LIST, token, h).status_code == 401


def test_jws_signs_its_time_as_sig_t(ids, token):
    # A JWS need not list date: sigT is in its signed protected header.
    r = call(ids["all"], token, form="RS256",
             names=["digest", "x-request-id"])
    assert r.status_code == 200, r.text


def test_jws_with_old_sig_t_is_refused_despite_fresh_date(ids, token):
    r = call(ids["all"], token, form="PS256",
             names=["digest", "x-request-id"], sig_t_offset=-3600)
    msg = expect(r, 400, "TIMESTAMP_INVALID")
    assert "sigT" in msg["text"]


def test_replay_marks_outlast_the_skew_window(ids, token, db):
    """A signed date is accepted within psd2_clock_skew (300 s here) either
    way, so a captured request is usable for at most 2 x 300 s; its mark
    must live longer than that, housekeeping included."""
    rid = str(uuid.uuid4())
    h = sign_request(ids["sandbox"], request_id=rid)
    assert get(LIST, token, h).status_code == 200
    # As if the request had been served 2 x skew + 1 minute ago.
    q(db, "UPDATE request_replay SET seen_at = now() - interval '660 s' "
       "WHERE request_id = %s", rid)
    q(db, "SELECT psd2_purge()")
    assert q(db, "SELECT count(*) FROM request_replay WHERE request_id = %s",
             rid) == [(1,)]
    r = get(LIST, token, h)
    # Refused either way: too old, or already used; never served twice.
    assert r.status_code == 400, r.text


def test_replay_marks_survive_a_database_crash(db):
    # An UNLOGGED table is emptied by crash recovery, forgetting the marks
    # of requests whose signed date is still within the skew.
    assert q(db, "SELECT relpersistence FROM pg_class "
                 "WHERE oid = 'request_replay'::regclass") == [("p",)]
