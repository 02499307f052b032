"""RTS Art. 36(5)(b): at most the consent's frequencyPerDay (4; see also
test_ais_psu_ip.py) accesses without the PSU per consent, account and endpoint in 24 hours;
PSU present with a PSU-IP-Address header or within 60 minutes of the SCA;
further pages of the same query within 10 minutes are the same access."""

import pytest

import psd2lib
from conftest import (ACCOUNT_LIST, BALANCE, add_transactions, account_row,
                      consent_of, day, get_tokens, sql, tpp_error, tx_path)


@pytest.fixture
def unattended(service_setup, server, db, today):
    """A fresh consent whose SCA was two hours ago."""
    psu = psd2lib.make_psu(n_accounts=2)
    tok = get_tokens(psd2lib.sandbox_client(), psu)["access_token"]
    consent = consent_of(db, tok)
    sql(db, "UPDATE consent SET sca_at = now() - interval '2 hours' "
        "WHERE id = %s", consent)
    ids = [account_row(db, iban)[1] for iban, _ in psu.accounts]
    add_transactions(db, psu.accounts[0][0],
                     [(day(today, i % 20), day(today, i % 20), -i, "t%d" % i)
                      for i in range(120)])
    return tok, consent, ids


def exceeded(r):
    tpp_error(r, 429, "ACCESS_EXCEEDED")


def test_four_a_day_account_list(api, unattended):
    tok, _, _ = unattended
    for _ in range(4):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    exceeded(api.get(ACCOUNT_LIST, tok))
    exceeded(api.get(ACCOUNT_LIST, tok))


def test_psu_present_header_not_counted(api, unattended):
    tok, _, _ = unattended
    for _ in range(6):
        r = api.get(ACCOUNT_LIST, tok,
                    headers={"PSU-IP-Address": "192.0.2.10"})
        assert r.status_code == 200
    for _ in range(4):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    exceeded(api.get(ACCOUNT_LIST, tok))
    # The PSU present again: allowed.
    assert api.get(ACCOUNT_LIST, tok, headers={
        "PSU-IP-Address": "192.0.2.10"}).status_code == 200


def test_within_an_hour_of_sca_not_counted(api, db, unattended):
    tok, consent, _ = unattended
    sql(db, "UPDATE consent SET sca_at = now() - interval '59 minutes' "
        "WHERE id = %s", consent)
    for _ in range(6):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    sql(db, "UPDATE consent SET sca_at = now() - interval '61 minutes' "
        "WHERE id = %s", consent)
    for _ in range(4):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    exceeded(api.get(ACCOUNT_LIST, tok))


def test_per_account_and_endpoint(api, unattended):
    tok, _, (a, b) = unattended
    for _ in range(4):
        assert api.get(BALANCE, tok, body={"referenceId": a}).status_code \
            == 200
    exceeded(api.get(BALANCE, tok, body={"referenceId": a}))
    # Another account, another endpoint: their own four.
    assert api.get(BALANCE, tok, body={"referenceId": b}).status_code == 200
    assert api.get(tx_path(a), tok).status_code == 200
    assert api.get(ACCOUNT_LIST, tok).status_code == 200


def test_further_pages_are_the_same_access(api, unattended):
    tok, _, (a, _) = unattended
    for _ in range(3):
        assert api.get(tx_path(a), tok).status_code == 200
    # The fourth access and its further pages.
    r = api.get(tx_path(a), tok)
    assert r.status_code == 200
    nxt = r.json()["_links"]["next"]["href"]
    r2 = api.get(nxt, tok)
    assert r2.status_code == 200, r2.text
    assert api.get(r2.json()["_links"]["next"]["href"], tok).status_code \
        == 200
    # A first page again is a new access: the fifth.
    exceeded(api.get(tx_path(a), tok))
    # Pages of another query are not continuations.
    exceeded(api.get(tx_path(a) + "?dateFrom=2020-01-01&pageIndex=1", tok))


def test_continuation_expires_after_ten_minutes(api, db, unattended):
    tok, consent, (a, _) = unattended
    for _ in range(4):
        assert api.get(tx_path(a), tok).status_code == 200
    assert api.get(tx_path(a) + "?pageIndex=1", tok).status_code == 200
    sql(db, "UPDATE access_log SET at = at - interval '11 minutes' "
        "WHERE consent_id = %s", consent)
    exceeded(api.get(tx_path(a) + "?pageIndex=1", tok))


def test_window_is_24_hours(api, db, unattended):
    tok, consent, _ = unattended
    for _ in range(4):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    exceeded(api.get(ACCOUNT_LIST, tok))
    sql(db, "UPDATE access_log SET at = at - interval '24 hours 1 minute' "
        "WHERE consent_id = %s", consent)
    assert api.get(ACCOUNT_LIST, tok).status_code == 200


def test_exceeded_is_not_recorded(api, db, unattended):
    tok, consent, _ = unattended
    for _ in range(6):
        api.get(ACCOUNT_LIST, tok)
    rows = sql(db, "SELECT count(*), count(*) FILTER (WHERE counted) "
               "FROM access_log WHERE consent_id = %s", consent)[0]
    assert rows == (4, 4)


def test_partitions_and_purge(db):
    parts = [r[0] for r in sql(db, """SELECT c.relname FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'access_log'::regclass""")]
    assert "access_log_default" in parts
    assert len([p for p in parts if p != "access_log_default"]) >= 3
    sql(db, "CREATE TABLE IF NOT EXISTS access_log_200001 PARTITION OF "
        "access_log FOR VALUES FROM ('2000-01-01 00:00+00') TO "
        "('2000-02-01 00:00+00')")
    out = psd2lib.psd2ctl("purge").stdout
    assert "access log partitions dropped" in out, out
    assert not sql(db, "SELECT to_regclass('access_log_200001')")[0][0]
    assert sql(db, "SELECT to_regclass('access_log_' || "
               "to_char(now() AT TIME ZONE 'UTC', 'YYYYMM'))")[0][0]
