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

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import psd2lib  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403
from ais_shared import *  # noqa: E402,F401,F403
# Named: a star import leaves out names that begin with "_".
from ais_shared import _running_service  # noqa: E402,F401

BG = "/xs2a/v1"
API = "/auth/v1/psd2"
ACCOUNT_LIST = API + "/account/account-list"
BALANCE = API + "/account/account-balance"
FUNDS = API + "/funds-confirmations"
CONSENT = API + "/consents/current"


def tx_path(account_id):
    return "%s/account/%s/transactions" % (API, account_id)


def settle(dbinfo):
    """Writes now the statuses that time has changed (what the
    housekeeping's bg_consent_sweep writes every psd2_purge_interval), so
    that its next round does not write during a snapshot's window."""
    c = psd2lib.db_connect(dbinfo)
    try:
        c.cursor().execute("SELECT bg_consent_sweep()")
    finally:
        c.close()
