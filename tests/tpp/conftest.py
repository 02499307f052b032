"""TPP identity suite: request signatures, digests and eIDAS
certificates against the real psd2gate and PostgreSQL.

The test PKI is minted at import (tests/pki/mint.sh: the sandbox CA in
var/sandbox/, the test certificates in var/test-pki/ issued by it), before
any server starts, so the service trusts it. This suite runs its own
instance of conf/test.conf with psd2_signing_required on (a derived copy
under var/test-logs/); the shared fixtures do the rest.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402

import psd2lib  # noqa: E402
import psd2_fixtures  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403

SANDBOX_DIR = os.path.join(psd2lib.TOP, "var", "sandbox")
PKI_DIR = os.path.join(psd2lib.TOP, "var", "test-pki")
MINT = os.path.join(psd2lib.TOP, "tests", "pki", "mint.sh")

subprocess.run(["sh", MINT, "sandbox", SANDBOX_DIR], check=True)
subprocess.run(["sh", MINT, "test", PKI_DIR, os.path.join(SANDBOX_DIR, "ca")],
               check=True)


@pytest.fixture(scope="session")
def server(service_setup):
    conf = psd2lib.derived_conf("conf/test.conf", psd2lib.MAIN_PORT,
                                "psd2gate-tpp")
    with open(conf, "a") as f:
        f.write("psd2_signing_required yes\n")
        f.write("psd2_trust_dir %s\n" % os.path.join(SANDBOX_DIR, "trust"))
        f.write("psd2_crl_dir %s\n" % os.path.join(SANDBOX_DIR, "crl"))
    srv = psd2_fixtures._start(conf, psd2lib.MAIN_PORT, "psd2gate-tpp", None)
    yield srv
    psd2_fixtures._stop(srv)


@pytest.fixture(autouse=True)
def _running_service(server):
    return server
