"""Decoupled SCA on the PSU's authenticator, end to end: the TPP
initiates, psd2-deviced shows the payment on the emulated device, the PSU
enters the PIN and confirms (psd2-emu), the service verifies the signed
outcome itself and books; every other ending is one final state."""

import time

from conftest import (CREDITOR, INST, SCT, balance, payment_row, sql, sql1,
                      wait_shown, wait_status)


def start(api, payer, **kw):
    r = api.initiate(payer, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def test_confirm_books_and_ais_shows_it(api, db, emulator, payer):
    before = balance(db, payer.iban)
    body = start(api, payer)
    pid = body["paymentId"]
    assert body["transactionStatus"] == "RCVD"
    assert body["scaStatus"] == "started"
    assert "scaRedirect" not in body["_links"]
    assert body["_links"]["self"]["href"] == "%s/%s" % (SCT, pid)
    assert body["_links"]["status"]["href"] == "%s/%s/status" % (SCT, pid)
    assert body["_links"]["scaStatus"]["href"] == \
        "%s/%s/authorisations/%s" % (SCT, pid, body["authorisationId"])
    shown = wait_shown(emulator, payer.serial)
    assert "12.34 EUR" in shown and "Max Mustermann" in shown, shown
    # Possession alone is not enough: confirm does nothing before the PIN.
    emulator.cmd("press", payer.serial, check=False)
    time.sleep(0.5)
    assert payment_row(db, pid)[0] == "RCVD"
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    st = wait_status(db, pid, "ACSC", timeout=10)
    assert st == ("ACSC", None, "finalised")
    assert api.status(payer, pid) == "ACSC"
    assert balance(db, payer.iban) == before - 1234
    tx = sql1(db, """SELECT t.amount_minor, t.explanation FROM
        account_transaction t JOIN payment p ON p.booking_ref =
        t.transaction_id WHERE p.id = %s""", pid)
    assert tx == (-1234, "Max Mustermann %s: Invoice 42" % CREDITOR)
    counter = sql1(db, """SELECT c.counter FROM device_challenge c
        JOIN payment_authorisation a ON a.challenge_id = c.id
        WHERE a.payment_id = %s""", pid)
    assert sql1(db, "SELECT last_counter FROM device WHERE serial = %s",
                payer.serial) == counter


def test_decline(api, db, emulator, payer):
    pid = start(api, payer)["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("decline", payer.serial)
    assert wait_status(db, pid, "RJCT") == ("RJCT", "declined", "failed")
    r = api.get("%s/%s/status" % (SCT, pid), payer.token)
    # The TPP learns that it failed, never which element.
    assert r.json() == {"transactionStatus": "RJCT",
                        "psuMessage": "The payment was not authorised."}


def test_instant_product(api, db, emulator, payer):
    before = balance(db, payer.iban)
    body = start(api, payer, product="instant-sepa-credit-transfers")
    pid = body["paymentId"]
    assert body["_links"]["self"]["href"] == "%s/%s" % (INST, pid)
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    wait_status(db, pid, "ACSC", timeout=10)
    assert balance(db, payer.iban) == before - 1234
    # Not under the other product's path.
    r = api.get("%s/%s" % (SCT, pid), payer.token)
    assert r.status_code == 404


def test_insufficient_funds(api, db, emulator, payer_factory):
    payer = payer_factory(balance=1000)
    pid = start(api, payer)["paymentId"]
    wait_shown(emulator, payer.serial)
    emulator.cmd("pin", payer.serial, "1234")
    emulator.cmd("press", payer.serial)
    assert wait_status(db, pid, "RJCT", timeout=10) == \
        ("RJCT", "insufficient funds", "finalised")
    assert balance(db, payer.iban) == 1000
    assert sql(db, "SELECT 1 FROM account_transaction t JOIN account a ON "
               "a.id = t.account_id WHERE a.iban = %s", payer.iban) == []
