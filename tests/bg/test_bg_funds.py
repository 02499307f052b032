"""Funds confirmation of the standard interface (src/bg/README.md "Funds
confirmation"): POST /xs2a/v1/funds-confirmations with a PSU's token
carrying FUND_AVAILABILITY (the contract's flow), Consent-ID optional and
then the token's own, the contract's check of the available balance."""

import uuid

import pytest

import psd2lib
from conftest import (BG, add_balance, consent_of, get_tokens, sql,
                      tpp_error)
from test_bg_accounts import access_rows, bg_consent, invalid_if, xs2a_token

FUNDS = BG + "/funds-confirmations"


class World:
    pass


@pytest.fixture(scope="module")
def w(service_setup, server, db):
    w = World()
    w.client = psd2lib.sandbox_client()
    w.psu = psd2lib.make_psu(n_accounts=2)
    (w.iban, _), (w.other_iban, _) = w.psu.accounts
    add_balance(db, w.iban, 10000)
    add_balance(db, w.other_iban, 10000)
    w.token = get_tokens(w.client, w.psu, "FUND_AVAILABILITY",
                         accounts=[w.iban])["access_token"]
    w.consent = consent_of(db, w.token)
    w.ais_token = get_tokens(w.client, psd2lib.make_psu(n_accounts=1),
                             "ACCOUNT_INFORMATION")["access_token"]
    w.tpp = xs2a_token(w.client)
    return w


def body(iban, amount, currency="EUR", **extra):
    b = {"account": {"iban": iban},
         "instructedAmount": {"currency": currency, "amount": amount}}
    b.update(extra)
    return b


def post(api, tok, b, consent=None, raw=None):
    h = {"Consent-ID": consent} if consent else {}
    return api.call("POST", FUNDS, tok, body=b, headers=h, raw=raw)


@pytest.mark.parametrize("amount,currency,available", [
    ("100.00", "EUR", True),
    ("100", "EUR", True),
    ("0.01", "EUR", True),
    ("100.01", "EUR", False),
    ("99999999999999", "EUR", False),
    ("1.00", "USD", False),
])
def test_funds_available(w, api, amount, currency, available):
    r = post(api, w.token, body(w.iban, amount, currency))
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.json() == {"fundsAvailable": available}


def test_card_number_and_payee_accepted(w, api):
    r = post(api, w.token, body(w.iban, "5.00", cardNumber="12345678",
                                payee="Shop GmbH"))
    assert r.status_code == 200, r.text
    assert r.json() == {"fundsAvailable": True}


def test_consent_id_of_the_token(w, api):
    r = post(api, w.token, body(w.iban, "5.00"), consent=w.consent)
    assert r.status_code == 200, r.text
    assert r.json() == {"fundsAvailable": True}


def test_consent_id_of_another_consent(w, api, db):
    psu_id = sql(db, "SELECT psu_id FROM consent WHERE id = %s",
                 w.consent)[0][0]
    acc = sql(db, "SELECT id FROM account WHERE iban = %s", w.iban)[0][0]
    other = bg_consent(db, w.client.client_id, psu_id, [(acc, True, True)])
    for cid in (other, str(uuid.uuid4())):
        tpp_error(post(api, w.token, body(w.iban, "5.00"), consent=cid),
                  403, "CONSENT_UNKNOWN", path="Consent-ID")
    tpp_error(post(api, w.token, body(w.iban, "5.00"), consent="nope"),
              400, "FORMAT_ERROR", path="Consent-ID")


def test_token_without_fund_availability(w, api):
    # A PSU's token of account information; the TPP's own token.
    for tok in (w.ais_token, w.tpp):
        tpp_error(post(api, tok, body(w.iban, "5.00")), 401,
                  "CONSENT_INVALID")


def test_account_not_in_the_consent(w, api):
    for iban in (w.other_iban, "DE02120300000000202051"):
        tpp_error(post(api, w.token, body(iban, "5.00")), 404,
                  "RESOURCE_UNKNOWN", path="account.iban")


def test_expired_consent(w, api, db):
    sql(db, "UPDATE consent SET valid_until = current_date - 1 "
        "WHERE id = %s", w.consent)
    try:
        tpp_error(post(api, w.token, body(w.iban, "5.00")), 401,
                  "CONSENT_EXPIRED")
    finally:
        sql(db, "UPDATE consent SET valid_until = current_date + 30 "
            "WHERE id = %s", w.consent)


@pytest.mark.parametrize("raw,path,invalid", [
    (b"not json", "body", True),
    (b'{"instructedAmount": {"currency": "EUR", "amount": "1"}}',
     "account", True),
    (b'{"account": {"bban": "370400440532013000"}, "instructedAmount": '
     b'{"currency": "EUR", "amount": "1"}}', "account.iban", None),
    (b'{"account": {"iban": "DE89"}, "instructedAmount": '
     b'{"currency": "EUR", "amount": "1"}}', "account.iban", None),
    (b'{"account": {"iban": "DE89370400440532013000"}}',
     "instructedAmount", True),
    (b'{"account": {"iban": "DE89370400440532013000"}, "instructedAmount":'
     b' {"currency": "EURO", "amount": "1"}}', "instructedAmount.currency",
     False),
    (b'{"account": {"iban": "DE89370400440532013000"}, "instructedAmount":'
     b' {"currency": "EUR", "amount": "1.001"}}', "instructedAmount.amount",
     False),
    (b'{"account": {"iban": "DE89370400440532013000"}, "instructedAmount":'
     b' {"currency": "EUR", "amount": "-1"}}', "instructedAmount.amount",
     False),
    (b'{"account": {"iban": "DE89370400440532013000"}, "instructedAmount":'
     b' {"currency": "EUR", "amount": "0"}}', "instructedAmount.amount",
     False),
])
def test_bad_body_changes_nothing(w, api, db, raw, path, invalid):
    if invalid is None:
        # An IBAN of the wrong form is invalid, a bban is not.
        invalid = b"DE89" in raw
    n = access_rows(db, w.consent)
    with invalid_if(invalid):
        r = post(api, w.token, None, raw=raw)
    tpp_error(r, 400, "FORMAT_ERROR", path=path)
    assert access_rows(db, w.consent) == n


def test_recorded_not_limited(w, api, db):
    """Confirmation of funds is recorded but not under the unattended
    limit of account information."""
    sql(db, "UPDATE consent SET sca_at = now() - interval '2 hours' "
        "WHERE id = %s", w.consent)
    n = access_rows(db, w.consent)
    for _ in range(6):
        assert post(api, w.token, body(w.iban, "1.00")).status_code == 200
    assert access_rows(db, w.consent) == n + 6
    assert sql(db, "SELECT DISTINCT endpoint FROM access_log WHERE "
               "consent_id = %s", w.consent) == [("funds-confirmations",)]


def test_query_parameters_refused(w, api):
    r = api.call("POST", FUNDS + "?x=1", w.token, body=body(w.iban, "1.00"))
    tpp_error(r, 400, "PARAMETER_NOT_SUPPORTED")


def test_token_without_account_information(w, api):
    """This PSU's token carries FUND_AVAILABILITY alone: no accounts."""
    tpp_error(api.get(BG + "/accounts", w.token,
                      headers={"Consent-ID": w.consent}),
              401, "CONSENT_INVALID")
