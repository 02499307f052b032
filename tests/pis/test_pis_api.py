"""The TPP's side of payment initiation: the endpoints and their bodies,
redirect and decoupled choice, cancellation, every validation error
(400 FORMAT_ERROR naming the field, nothing stored), another TPP's or
PSU's payment, the token's scope and the certificate's role."""

import json
import os
import uuid

import pytest

from conftest import (NOK_REDIRECT, PAY, PKI_DIR, REDIRECT, SCT, get_token,
                      payment_as_read, payment_body, payment_row, sql, sql1,
                      tpp_error, wait_shown, wait_status)
import psd2lib
from psd2lib import CtlError, make_client, make_psu, sandbox_client


def stored(db, payer):
    """What this PSU has stored: payments, authorisations, challenges."""
    return sql1(db, """SELECT (SELECT count(*) FROM payment p JOIN psu u
        ON u.id = p.psu_id WHERE u.username = %s),
        (SELECT count(*) FROM payment_authorisation a JOIN payment p
        ON p.id = a.payment_id JOIN psu u ON u.id = p.psu_id
        WHERE u.username = %s),
        (SELECT count(*) FROM device_challenge c JOIN psu u
        ON u.id = c.psu_id WHERE u.username = %s)""",
                payer.psu.username, payer.psu.username, payer.psu.username)


def redirect_headers():
    return {"TPP-Redirect-URI": REDIRECT}


# --------------------------------------------------------------------------
# Shapes

def test_redirect_initiation_and_reads(api, db, payer_factory):
    payer = payer_factory(device=False)
    r = api.initiate(payer, decoupled=False, headers={
        "TPP-Redirect-URI": REDIRECT, "TPP-Nok-Redirect-URI": NOK_REDIRECT,
        "TPP-Redirect-Preferred": "true"})
    assert r.status_code == 201, r.text
    b = r.json()
    pid, aid = b["paymentId"], b["authorisationId"]
    assert uuid.UUID(pid) and uuid.UUID(aid)
    assert r.headers["Location"] == "%s/%s" % (SCT, pid)
    assert b == {
        "transactionStatus": "RCVD", "paymentId": pid,
        "authorisationId": aid, "scaStatus": "received",
        "psuMessage": "Please authorise the payment at your bank.",
        "_links": {
            "self": {"href": "%s/%s" % (SCT, pid)},
            "status": {"href": "%s/%s/status" % (SCT, pid)},
            "scaStatus": {"href": "%s/%s/authorisations/%s" % (SCT, pid,
                                                                aid)},
            "scaRedirect": {"href": "/auth/payments/%s/authorise" % pid}}}
    row = sql1(db, """SELECT tpp_redirect_uri, tpp_nok_redirect_uri,
        host(psu_ip_address), amount_minor, currency FROM payment
        WHERE id = %s""", pid)
    assert row == (REDIRECT, NOK_REDIRECT, "192.0.2.10", 1234, "EUR")
    assert sql(db, "SELECT 1 FROM payment_authorisation WHERE payment_id = "
               "%s AND challenge_id IS NULL AND approach = 'redirect'",
               pid) == [(1,)]

    r = api.get("%s/%s" % (SCT, pid), payer.token)
    assert r.status_code == 200, r.text
    assert r.json() == payment_as_read(payer, "RCVD")
    assert api.status(payer, pid) == "RCVD"
    r = api.get("%s/%s/authorisations" % (SCT, pid), payer.token)
    assert r.json() == {"authorisationIds": [aid]}
    r = api.get("%s/%s/authorisations/%s" % (SCT, pid, aid), payer.token)
    assert r.json() == {"scaStatus": "received"}
    # Starting an authorisation again answers the one there is.
    r = api.call("POST", "%s/%s/authorisations" % (SCT, pid), payer.token)
    assert r.status_code == 200, r.text
    assert r.json()["authorisationId"] == aid
    assert r.json()["_links"]["scaRedirect"]["href"] == \
        "/auth/payments/%s/authorise" % pid
    assert sql1(db, "SELECT count(*) FROM payment_authorisation WHERE "
                "payment_id = %s", pid) == 1
    tpp_error(api.get("%s/%s/authorisations/%s" % (SCT, pid, uuid.uuid4()),
                      payer.token), 404, "RESOURCE_UNKNOWN",
              "authorisationId")
    tpp_error(api.get("%s/%s/authorisations/nope" % (SCT, pid),
                      payer.token), 404, "RESOURCE_UNKNOWN",
              "authorisationId")
    tpp_error(api.get("%s/not-a-uuid" % SCT, payer.token), 404,
              "RESOURCE_UNKNOWN", "paymentId")
    tpp_error(api.get("%s/%s" % (SCT, uuid.uuid4()), payer.token), 404,
              "RESOURCE_UNKNOWN", "paymentId")


def test_amount_limits_and_name_nfc(api, db, payer_factory):
    payer = payer_factory(device=False)
    for amount, minor in (("999999999.99", 99999999999), ("0.01", 1),
                          ("10", 1000), ("7.5", 750)):
        r = api.initiate(payer, payment_body(payer, amount=amount,
                                             name="Rene\u0301 D\u00fcrr"),
                         decoupled=False, headers=redirect_headers())
        assert r.status_code == 201, (amount, r.text)
        pid = r.json()["paymentId"]
        row = sql1(db, "SELECT amount_minor, creditor_name FROM payment "
                   "WHERE id = %s", pid)
        # Stored (and later shown and signed) in NFC.
        assert row == (minor, "Ren\u00e9 D\u00fcrr")


def test_decoupled_preferred_without_an_authenticator(api, db,
                                                       payer_factory):
    payer = payer_factory(device=False)
    tpp_error(api.initiate(payer), 400, "FORMAT_ERROR", "TPP-Redirect-URI")
    assert stored(db, payer) == (0, 0, 0)
    r = api.initiate(payer, headers=redirect_headers())
    assert r.status_code == 201
    assert r.json()["scaStatus"] == "received"


def test_decoupled_not_preferred_with_an_authenticator(api, db, payer):
    r = api.initiate(payer, decoupled=False, headers=redirect_headers())
    assert r.status_code == 201
    assert r.json()["scaStatus"] == "received"
    assert stored(db, payer) == (1, 1, 0)


# --------------------------------------------------------------------------
# Cancellation

def test_cancel_before_sca_clears_the_device(api, db, emulator, payer):
    r = api.initiate(payer)
    pid = r.json()["paymentId"]
    wait_shown(emulator, payer.serial)
    r = api.call("DELETE", "%s/%s" % (SCT, pid), payer.token)
    assert r.status_code == 204, r.text
    assert r.content == b""
    assert payment_row(db, pid) == ("CANC", None, "failed")
    assert sql1(db, """SELECT c.status FROM device_challenge c JOIN
        payment_authorisation a ON a.challenge_id = c.id
        WHERE a.payment_id = %s""", pid) == "cancelled"
    from conftest import wait_for
    wait_for(lambda: "PAY" not in emulator.show(payer.serial), timeout=10,
             what="display cleared")
    tpp_error(api.call("DELETE", "%s/%s" % (SCT, pid), payer.token), 405,
              "CANCELLATION_INVALID")
    assert api.status(payer, pid) == "CANC"


def test_cancel_after_sca(api, db, emulator, payer):
    pid = api.initiate(payer).json()["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    wait_status(db, pid, "ACSC", timeout=10)
    tpp_error(api.call("DELETE", "%s/%s" % (SCT, pid), payer.token), 405,
              "CANCELLATION_INVALID")
    assert payment_row(db, pid)[0] == "ACSC"


def test_cancel_redirect_payment(api, db, payer_factory):
    payer = payer_factory(device=False)
    pid = api.initiate(payer, decoupled=False,
                       headers=redirect_headers()).json()["paymentId"]
    assert api.call("DELETE", "%s/%s" % (SCT, pid),
                    payer.token).status_code == 204
    assert payment_row(db, pid) == ("CANC", None, "failed")


# --------------------------------------------------------------------------
# Validation: 400 FORMAT_ERROR naming the field, nothing stored

def mutate(body, path, value):
    d = body
    keys = path.split(".")
    for k in keys[:-1]:
        d = d[k]
    if value is KeyError:
        del d[keys[-1]]
    else:
        d[keys[-1]] = value


BAD_IBAN = "DE89370400440532013001"     # check digits do not match

INVALID = [
    ("instructedAmount.amount", "0"),
    ("instructedAmount.amount", "0.00"),
    ("instructedAmount.amount", "-1.00"),
    ("instructedAmount.amount", "1.234"),
    ("instructedAmount.amount", "1e3"),
    ("instructedAmount.amount", "01.00"),
    ("instructedAmount.amount", ".5"),
    ("instructedAmount.amount", "5."),
    ("instructedAmount.amount", " 5"),
    ("instructedAmount.amount", "1,00"),
    ("instructedAmount.amount", "1000000000.00"),
    ("instructedAmount.amount", "9999999999"),
    ("instructedAmount.amount", 12.34),
    ("instructedAmount.amount", KeyError),
    ("instructedAmount.currency", "EURO"),
    ("instructedAmount.currency", "XYZ"),
    ("instructedAmount.currency", "eur"),
    ("instructedAmount.currency", "USD"),
    ("instructedAmount.currency", "JPY"),
    ("debtorAccount.iban", "DE00370400440532013000"),
    ("debtorAccount.iban", KeyError),
    ("creditorAccount.iban", BAD_IBAN),
    ("creditorAccount.iban", "de89370400440532013000"),
    ("creditorAccount.iban", "DE89 3704 0044 0532 0130 00"),
    ("creditorAccount.iban", 42),
    ("creditorName", ""),
    ("creditorName", "x" * 71),
    ("creditorName", "\u00e9" * 35 + "x"),
    ("creditorName", "Evil\u202eCorp"),
    ("creditorName", "Zero\u200bWidth"),
    ("creditorName", "\ufeffBOM"),
    ("creditorName", "Line\nBreak"),
    ("creditorName", "Two  Spaces"),
    ("creditorName", " Leading"),
    ("creditorName", "\u041c\u0430\u043a\u0441"),
    ("creditorName", "x\u0308\u0308"),
    ("creditorName", KeyError),
    # The authenticator's labels and IBAN- or amount-like runs (PROTOCOL.md
    # 5.3.2): a name that would show a second IBAN or amount.
    ("creditorName", "Muster GmbH IBAN GB82 WEST 1234 5698 7654 32"),
    ("creditorName", "Muster GmbH DE89 3704"),
    ("creditorName", "Muster 20 000.00 EUR"),
    ("creditorName", "Pay Muster"),
    ("creditorName", "\u0131BAN Muster"),
    ("remittanceInformationUnstructured", "r" * 141),
    ("remittanceInformationUnstructured", "tab\there"),
    ("remittanceInformationUnstructured", ""),
    ("remittanceInformationUnstructured", 5),
    # The rule for every text people read, as for the creditor's name.
    ("remittanceInformationUnstructured", "Invoice \u202e24"),
    ("remittanceInformationUnstructured", "Invoice\u200b24"),
    ("remittanceInformationUnstructured", "Invoice \u206624"),
    ("remittanceInformationUnstructured", "\ufeffInvoice 24"),
    ("remittanceInformationUnstructured", "Invoice\u00a024"),
    ("remittanceInformationUnstructured", "\u0421\u0447\u0435\u0442 24"),
    ("remittanceInformationUnstructured", "Invoice  24"),
    ("remittanceInformationUnstructured", "x\u0308\u0308"),
]


@pytest.fixture(scope="module")
def plain_payer(payer_factory_module):
    return payer_factory_module


@pytest.fixture(scope="module")
def payer_factory_module(service_setup, emulator, dbinfo):
    from conftest import Payer, set_balance
    from psd2lib import db_connect
    db = db_connect(dbinfo)
    psu = make_psu(n_accounts=2)
    iban = psu.accounts[0][0]
    set_balance(db, iban, 100000)
    client = make_client(redirect_uris=(REDIRECT, NOK_REDIRECT))
    token = get_token(client, psu, "PAYMENT_INITIATION", [iban])
    db.close()
    return Payer(psu, client, token, iban, None)


@pytest.mark.parametrize("path,value", INVALID,
                         ids=["%s=%r" % (p, v) for p, v in INVALID])
def test_invalid_field(api, db, plain_payer, path, value):
    body = payment_body(plain_payer)
    mutate(body, path, value)
    before = stored(db, plain_payer)
    r = api.initiate(plain_payer, body, decoupled=False,
                     headers=redirect_headers())
    m = tpp_error(r, 400, "FORMAT_ERROR", path)
    assert path.split(".")[0] in m["text"]
    assert stored(db, plain_payer) == before


def test_label_injection_refused_with_its_reason(api, db, plain_payer):
    """The name that showed a second IBAN on version 2's display line is
    refused at initiation, saying why; nothing is stored."""
    before = stored(db, plain_payer)
    body = payment_body(plain_payer, name="Muster GmbH IBAN GB82 WEST 1234 "
                        "5698 7654 32")
    m = tpp_error(api.initiate(plain_payer, body, decoupled=False,
                               headers=redirect_headers()),
                  400, "FORMAT_ERROR", "creditorName")
    assert m["text"].startswith("creditorName: contains a word the "
                                "authenticator shows as a label"), m
    body = payment_body(plain_payer, name="Muster 9,99")
    m = tpp_error(api.initiate(plain_payer, body, decoupled=False,
                               headers=redirect_headers()),
                  400, "FORMAT_ERROR", "creditorName")
    assert "reads as an IBAN or an amount" in m["text"], m
    body = payment_body(plain_payer, remittance="Invoice \u202e24")
    m = tpp_error(api.initiate(plain_payer, body, decoupled=False,
                               headers=redirect_headers()),
                  400, "FORMAT_ERROR", "remittanceInformationUnstructured")
    assert m["text"] == ("remittanceInformationUnstructured: contains a "
                         "character that is not allowed."), m
    assert stored(db, plain_payer) == before


def test_remittance_stored_nfc(api, db, plain_payer):
    body = payment_body(plain_payer, remittance="Rene\u0301 12345, 9.99")
    r = api.initiate(plain_payer, body, decoupled=False,
                     headers=redirect_headers())
    assert r.status_code == 201, r.text
    row = sql1(db, "SELECT remittance FROM payment WHERE id = %s",
               r.json()["paymentId"])
    # The display rules are the payee name's only: digits stay allowed.
    assert row == "Ren\u00e9 12345, 9.99"


def test_names_keep_the_text_rule(db):
    """psd2ctl refuses a TPP, person or account name people could misread
    (the consent page, the staff pages, AIS); nothing is stored."""
    with pytest.raises(CtlError) as e:
        make_client(name="Good Bank \u202eKNAB LIVE")
    assert "the TPP name contains a character that is not allowed" in str(
        e.value)
    assert make_client(name="Zo\u00eb's TPP 2024")
    user = psd2lib.unique("psu")
    p = psd2lib.psd2ctl("psu", "add", user, "--password", "pw-12345678",
                        "--name", "Anna\u200bSchmidt", check=False)
    assert p.returncode != 0 and "the name contains a character" in p.stderr
    assert sql1(db, "SELECT count(*) FROM psu WHERE username = %s",
                user) == 0
    psd2lib.psd2ctl("psu", "add", user, "--password", "pw-12345678",
                    "--name", "Anna Schmidt")
    p = psd2lib.psd2ctl("account", "add", user, psd2lib.random_iban("DE"),
                        "EUR", "Giro\u2066konto", check=False)
    assert p.returncode != 0 and "the account name" in p.stderr
    assert sql1(db, "SELECT count(*) FROM account a JOIN psu p ON "
                "p.id = a.psu_id WHERE p.username = %s", user) == 0


def test_longest_name_and_remittance(api, db, plain_payer):
    body = payment_body(plain_payer, name="\u00e9" * 35,
                        remittance="\u00fc" * 140)
    r = api.initiate(plain_payer, body, decoupled=False,
                     headers=redirect_headers())
    assert r.status_code == 201, r.text


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]",
                                 b'{"creditorName": "a", "creditorName": "b"}'])
def test_invalid_body(api, db, plain_payer, raw):
    before = stored(db, plain_payer)
    r = api.initiate(plain_payer, raw=raw, decoupled=False,
                     headers=redirect_headers())
    tpp_error(r, 400, "FORMAT_ERROR", "body")
    assert stored(db, plain_payer) == before


PAYMENT_BODY_MAX = 16384


def padded(payer, size):
    """A valid payment body, padded with trailing blanks to size bytes."""
    raw = json.dumps(payment_body(payer)).encode()
    return raw + b" " * (size - len(raw))


def test_body_over_the_payment_limit(api, db, plain_payer):
    """Over the payment's own 16 KB though under Kore's 64 KB: 413 in the
    body of Kore's own 413 (not 400 "must be a JSON object"), nothing
    stored; a body of exactly the limit is read."""
    before = stored(db, plain_payer)
    r = api.initiate(plain_payer, raw=padded(plain_payer,
                                             PAYMENT_BODY_MAX + 1),
                     decoupled=False, headers=redirect_headers())
    m = tpp_error(r, 413, "FORMAT_ERROR")
    assert "path" not in m and "too large" in m["text"], m
    assert stored(db, plain_payer) == before
    kore = api.initiate(plain_payer, raw=padded(plain_payer, 70000),
                        decoupled=False, headers=redirect_headers())
    assert kore.status_code == 413
    assert list(kore.json()["tppMessages"][0]) == list(m)
    r = api.initiate(plain_payer, raw=padded(plain_payer, PAYMENT_BODY_MAX),
                     decoupled=False, headers=redirect_headers())
    assert r.status_code == 201, r.text


@pytest.mark.parametrize("header,value", [
    ("TPP-Decoupled-Preferred", "yes"),
    ("TPP-Redirect-Preferred", "1"),
    ("TPP-Redirect-URI", "https://evil.example/callback"),
    ("TPP-Nok-Redirect-URI", "https://evil.example/nok"),
    ("PSU-IP-Address", "not-an-address"),
])
def test_invalid_header(api, db, plain_payer, header, value):
    before = stored(db, plain_payer)
    h = redirect_headers()
    h[header] = value
    r = api.initiate(plain_payer, decoupled=False, headers=h)
    tpp_error(r, 400, "FORMAT_ERROR", header)
    assert stored(db, plain_payer) == before


def test_debtor_not_in_the_consent(api, db, plain_payer):
    before = stored(db, plain_payer)
    # The PSU's own second account, not picked for this TPP.
    other = plain_payer.psu.accounts[1][0]
    r = api.initiate(plain_payer, payment_body(plain_payer) | {
        "debtorAccount": {"iban": other}}, decoupled=False,
        headers=redirect_headers())
    tpp_error(r, 403, "RESOURCE_UNKNOWN", "debtorAccount.iban")
    # Someone else's account.
    r = api.initiate(plain_payer, payment_body(plain_payer) | {
        "debtorAccount": {"iban": "DE89370400440532013000"}},
        decoupled=False, headers=redirect_headers())
    tpp_error(r, 403, "RESOURCE_UNKNOWN", "debtorAccount.iban")
    assert stored(db, plain_payer) == before


def test_product_unknown(api, db, plain_payer):
    before = stored(db, plain_payer)
    r = api.initiate(plain_payer, product="cross-border-credit-transfers",
                     decoupled=False, headers=redirect_headers())
    tpp_error(r, 404, "PRODUCT_UNKNOWN")
    r = api.get(PAY + "/target-2-payments/%s" % uuid.uuid4(),
                plain_payer.token)
    tpp_error(r, 404, "PRODUCT_UNKNOWN")
    assert stored(db, plain_payer) == before


# --------------------------------------------------------------------------
# Whose payment; scope; certificate

def test_another_tpps_and_another_psus_payment(api, db, payer_factory):
    owner = payer_factory(device=False)
    pid = api.initiate(owner, decoupled=False,
                       headers=redirect_headers()).json()["paymentId"]
    # The same PSU through another TPP.
    other_tpp = make_client(redirect_uris=(REDIRECT,))
    tok = get_token(other_tpp, owner.psu, "PAYMENT_INITIATION",
                    [owner.iban])
    for method, suffix in (("GET", ""), ("GET", "/status"),
                           ("GET", "/authorisations"), ("DELETE", ""),
                           ("POST", "/authorisations")):
        r = api.call(method, "%s/%s%s" % (SCT, pid, suffix), tok)
        tpp_error(r, 404, "RESOURCE_UNKNOWN", "paymentId")
    # Another PSU through the same TPP.
    psu2 = make_psu(n_accounts=1)
    tok2 = get_token(owner.client, psu2, "PAYMENT_INITIATION",
                     [psu2.accounts[0][0]])
    for method, suffix in (("GET", ""), ("DELETE", "")):
        r = api.call(method, "%s/%s%s" % (SCT, pid, suffix), tok2)
        tpp_error(r, 404, "RESOURCE_UNKNOWN", "paymentId")
    assert payment_row(db, pid)[0] == "RCVD"


def test_token_without_payment_initiation(api, db, payer_factory):
    payer = payer_factory(device=False, scope="ACCOUNT_INFORMATION")
    before = stored(db, payer)
    r = api.initiate(payer, decoupled=False, headers=redirect_headers())
    m = tpp_error(r, 401, "CONSENT_INVALID")
    assert "PAYMENT_INITIATION" in m["text"]
    assert stored(db, payer) == before


def _pki_signer(name):
    with open(os.path.join(PKI_DIR, name + ".crt"), "rb") as f:
        crt = f.read()
    with open(os.path.join(PKI_DIR, name + ".key"), "rb") as f:
        key = f.read()
    return psd2lib.Signer(crt, key)


def test_certificate_without_psp_pi(api, db, payer_factory):
    payer = payer_factory(device=False, client=sandbox_client())
    before = stored(db, payer)
    r = api.initiate(payer, decoupled=False, headers=redirect_headers(),
                     signer=_pki_signer("aionly"))
    m = tpp_error(r, 403, "SERVICE_BLOCKED")
    assert "PSP_PI" in m["text"]
    assert stored(db, payer) == before
    # The same request with the role: accepted.
    r = api.initiate(payer, decoupled=False, headers=redirect_headers(),
                     signer=_pki_signer("pi"))
    assert r.status_code == 201, r.text


def test_certificate_of_another_tpp(api, db, payer_factory):
    payer = payer_factory(device=False)
    r = api.initiate(payer, decoupled=False, headers=redirect_headers(),
                     signer=_pki_signer("other"))
    tpp_error(r, 401, "CERTIFICATE_INVALID")
    assert stored(db, payer) == (0, 0, 0)


def test_digest_over_another_body(api, db, payer_factory):
    payer = payer_factory(device=False)
    import json
    signer = api.signer.for_token(payer.token)
    url = psd2lib.MAIN_URL + SCT
    signed = json.dumps(payment_body(payer)).encode()
    sent = json.dumps(payment_body(payer, amount="9999.00")).encode()
    h = signer.headers("POST", url, signed, {
        "Authorization": "Bearer " + payer.token,
        "Content-Type": "application/json", "TPP-Redirect-URI": REDIRECT})
    import requests
    r = requests.post(url, data=sent, headers=h, timeout=30)
    m = tpp_error(r, 401, "SIGNATURE_INVALID")
    assert "digest" in m["text"].lower()
    assert stored(db, payer) == (0, 0, 0)


def test_bearer_first(api, payer_factory):
    payer = payer_factory(device=False)
    r = api.call("POST", PAY + "/nonsense", "0" * 8 + "-0000-0000-0000-" +
                 "0" * 12, payment_body(payer))
    assert r.status_code == 401
    assert r.json()["error"] == "invalid_token"
