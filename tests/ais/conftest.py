"""AIS suite: the account information endpoints, the consent
endpoints, the unattended-access limit, revocation and the PSU's consents
page, against the real psd2gate (tests/lib/psd2_fixtures.py starts it on
18080, or $PSD2_TEST_PORT) and PostgreSQL.

Test data: each module makes its own PSUs and TPP clients with psd2ctl
(make_psu / make_client) and walks the real OAuth flow for tokens. The
service has no operator command for balances and transactions, so the
fixtures below insert them straight into PostgreSQL (tables of
src/db/migrations/010_ais.sql) for the accounts psd2ctl created.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

from psd2_fixtures import *  # noqa: E402,F401,F403
from ais_shared import *  # noqa: E402,F401,F403
# Named: a star import leaves out names that begin with "_".
from ais_shared import _running_service  # noqa: E402,F401

API = "/auth/v1/psd2"
ACCOUNT_LIST = API + "/account/account-list"
BALANCE = API + "/account/account-balance"
FUNDS = API + "/funds-confirmations"
CONSENT = API + "/consents/current"


def tx_path(account_id):
    return "%s/account/%s/transactions" % (API, account_id)
