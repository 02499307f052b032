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
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402

import psd2lib  # noqa: E402
import psd2_fixtures  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403
from ais_shared import *  # noqa: E402,F401,F403
from ais_shared import sql  # noqa: E402
from psd2lib import db_connect  # noqa: E402

API = "/auth/v1/psd2"
ACCOUNT_LIST = API + "/account/account-list"
BALANCE = API + "/account/account-balance"
FUNDS = API + "/funds-confirmations"
CONSENT = API + "/consents/current"


def tx_path(account_id):
    return "%s/account/%s/transactions" % (API, account_id)


def _conf_has(conf, name):
    with open(os.path.join(psd2lib.TOP, conf)) as f:
        return any(ln.split()[:1] == [name] for ln in f)


@pytest.fixture(scope="session")
def ais_pki():
    """The sandbox TPP certificate and the CA the service must trust.
    While conf/test.conf configures no psd2_trust_dir (TPP identity work
    in progress), a private sandbox PKI is minted with tests/pki/mint.sh
    and passed to this suite's own instance; otherwise None (the shared
    fixtures apply unchanged)."""
    if _conf_has("conf/test.conf", "psd2_trust_dir"):
        return None
    mint = os.path.join(psd2lib.TOP, "tests", "pki", "mint.sh")
    if not os.path.exists(mint):
        return None
    d = os.path.join(psd2lib.LOG_DIR, "ais-pki")
    os.makedirs(psd2lib.LOG_DIR, exist_ok=True)
    subprocess.run(["sh", mint, "sandbox", d], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return d


@pytest.fixture(scope="session")
def signer(ais_pki):
    if ais_pki is None:
        return psd2lib.Signer.load()
    with open(os.path.join(ais_pki, "tpp.crt"), "rb") as f:
        crt = f.read()
    with open(os.path.join(ais_pki, "tpp.key"), "rb") as f:
        key = f.read()
    return psd2lib.Signer(crt, key)


@pytest.fixture(scope="session")
def server(service_setup, ais_pki):
    if ais_pki is None:
        srv = psd2_fixtures._start("conf/test.conf", psd2lib.MAIN_PORT,
                                   "psd2gate-main", psd2lib.CONF_MAIN_PORT)
    else:
        conf = psd2lib.derived_conf("conf/test.conf", psd2lib.MAIN_PORT,
                                    "psd2gate-main")
        with open(conf, "a") as f:
            f.write("psd2_trust_dir %s\n" % os.path.join(ais_pki, "trust"))
        srv = psd2_fixtures._start(conf, psd2lib.MAIN_PORT,
                                   "psd2gate-main", None)
    yield srv
    psd2_fixtures._stop(srv)


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
