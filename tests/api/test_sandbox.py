"""The fixed sandbox data: the sandbox TPP, anna and bram."""

import psd2lib
from psd2lib import (MAIN_URL, SANDBOX_ORG_ID, SANDBOX_TPP_NAME, PsuBrowser,
                     authorize_url, compact, exchange_code, iban_valid,
                     location_params, sandbox_client, sandbox_psu)

SC = sandbox_client()


def consent_page(username, lang=None):
    # The sandbox users are shared with people trying the sandbox: a lock
    # left by someone's wrong passwords must not fail this test.
    psd2lib.psd2ctl("psu", "unlock", username)
    psu = sandbox_psu(username)
    b = PsuBrowser()
    b.login_to_consent(authorize_url(MAIN_URL, SC.client_id, SC.redirect_uri,
                                     "ACCOUNT_INFORMATION", "sb-" + username,
                                     lang=lang), psu)
    return b


def test_anna_german_accounts_and_sandbox_tpp(signer):
    b = consent_page("anna")
    assert SANDBOX_TPP_NAME in b.page.text
    assert SANDBOX_ORG_ID in b.page.text
    boxes = b.consent_accounts()
    assert boxes
    for rid, label in boxes:
        assert "DE" in compact(label), label
    r = b.submit_consent("approve")
    assert r.status_code == 303
    code = location_params(r)[1]["code"][0]
    tok = exchange_code(SC, code)
    assert tok.status_code == 200, tok.text
    assert tok.json()["expires_in"] == 900


def test_bram_dutch_accounts():
    b = consent_page("bram", lang="nl")
    boxes = b.consent_accounts()
    assert boxes
    for rid, label in boxes:
        assert "NL" in compact(label), label
    f = b.page.form("consent-form")
    assert psd2lib.norm_text(f.button(ident="approve").text) == "Toestaan"


def test_iban_helper():
    assert iban_valid("DE89370400440532013000")
    assert iban_valid(psd2lib.random_iban("DE"))
    assert iban_valid(psd2lib.random_iban("NL"))
    assert not iban_valid("DE89370400440532013001")
