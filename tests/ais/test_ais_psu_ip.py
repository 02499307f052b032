"""PSU-IP-Address: the header says the PSU is present, which
lifts the unattended-access limit, so only a syntactically valid IPv4 or
IPv6 address counts (inet_pton); anything else is 400 FORMAT_ERROR with
the Berlin Group tppMessages body and changes nothing. The address is
kept in the access record.

And the unattended limit is the consent's frequencyPerDay (1..4, default
4), which psd2_unattended_limit may only lower."""

import psycopg2
import pytest

import psd2lib
from conftest import (ACCOUNT_LIST, BALANCE, CONSENT, account_row,
                      consent_of, get_tokens, sql, tpp_error)

IP_TEXT = "PSU-IP-Address must be an IPv4 or IPv6 address."


@pytest.fixture
def unattended(service_setup, server, db):
    """A fresh consent whose SCA was two hours ago (the PSU is absent)."""
    psu = psd2lib.make_psu(n_accounts=1)
    tok = get_tokens(psd2lib.sandbox_client(), psu)["access_token"]
    consent = consent_of(db, tok)
    sql(db, "UPDATE consent SET sca_at = now() - interval '2 hours' "
        "WHERE id = %s", consent)
    return tok, consent, account_row(db, psu.accounts[0][0])[1]


def records(db, consent):
    return sql(db, "SELECT endpoint, psu_present, counted, "
               "host(psu_ip_address) FROM access_log WHERE consent_id = %s "
               "ORDER BY at", consent)


@pytest.mark.parametrize("value", [
    "x", "unknown", "1.2.3", "256.1.1.1", "192.0.2.1/24", "192.0.2.1:443",
    "01.2.3.4", "fe80::1%eth0", "[2001:db8::1]", "2001:db8::g",
    "192.0.2.1, 198.51.100.2", "localhost",
])
def test_invalid_address_is_a_format_error(api, db, unattended, value):
    tok, consent, _ = unattended
    r = api.get(ACCOUNT_LIST, tok, headers={"PSU-IP-Address": value})
    tpp_error(r, 400, "FORMAT_ERROR", path="PSU-IP-Address", text=IP_TEXT)
    assert records(db, consent) == []


def test_invalid_address_does_not_lift_the_limit(api, db, unattended):
    tok, consent, _ = unattended
    for _ in range(4):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    tpp_error(api.get(ACCOUNT_LIST, tok), 429, "ACCESS_EXCEEDED")
    tpp_error(api.get(ACCOUNT_LIST, tok, headers={"PSU-IP-Address": "x"}),
              400, "FORMAT_ERROR", path="PSU-IP-Address")
    tpp_error(api.get(ACCOUNT_LIST, tok), 429, "ACCESS_EXCEEDED")
    # A real address: the PSU is present.
    r = api.get(ACCOUNT_LIST, tok, headers={"PSU-IP-Address": "192.0.2.10"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("value,stored", [
    ("192.0.2.7", "192.0.2.7"),
    ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
    ("::ffff:192.0.2.9", "::ffff:192.0.2.9"),
    ("::1", "::1"),
])
def test_valid_address_is_recorded(api, db, unattended, value, stored):
    tok, consent, acc = unattended
    r = api.get(ACCOUNT_LIST, tok, headers={"PSU-IP-Address": value})
    assert r.status_code == 200, r.text
    r = api.get(BALANCE, tok, body={"referenceId": acc},
                headers={"PSU-IP-Address": value})
    assert r.status_code == 200, r.text
    assert records(db, consent) == [
        ("account-list", True, False, stored),
        ("account-balance", True, False, stored)]


def test_absent_address_is_recorded_as_null(api, db, unattended):
    tok, consent, _ = unattended
    assert api.get(ACCOUNT_LIST, tok).status_code == 200
    assert records(db, consent) == [("account-list", False, True, None)]


def test_format_error_comes_after_the_bearer_token(api, unattended):
    r = api.get(ACCOUNT_LIST, "abc", headers={"PSU-IP-Address": "x"})
    assert r.status_code == 401
    assert r.json()["error"] == "invalid_token"


# ------------------------------------------------------- frequencyPerDay

def test_limit_is_the_consents_frequency_per_day(api, db, unattended):
    tok, consent, acc = unattended
    sql(db, "UPDATE consent SET frequency_per_day = 2 WHERE id = %s",
        consent)
    assert api.get(CONSENT, tok).json()["frequencyPerDay"] == 2
    for _ in range(2):
        assert api.get(ACCOUNT_LIST, tok).status_code == 200
    tpp_error(api.get(ACCOUNT_LIST, tok), 429, "ACCESS_EXCEEDED")
    # Per endpoint and account, as before.
    for _ in range(2):
        r = api.get(BALANCE, tok, body={"referenceId": acc})
        assert r.status_code == 200, r.text
    tpp_error(api.get(BALANCE, tok, body={"referenceId": acc}), 429,
              "ACCESS_EXCEEDED")


def test_new_consents_allow_four(db, unattended):
    _, consent, _ = unattended
    assert sql(db, "SELECT frequency_per_day FROM consent WHERE id = %s",
               consent) == [(4,)]


@pytest.mark.parametrize("bad", [0, 5, -1])
def test_frequency_per_day_is_one_to_four(db, unattended, bad):
    _, consent, _ = unattended
    with pytest.raises(psycopg2.errors.CheckViolation):
        sql(db, "UPDATE consent SET frequency_per_day = %s WHERE id = %s",
            bad, consent)
