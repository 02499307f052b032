"""pytest fixtures and hooks shared by tests/api and tests/browser.

A suite's conftest.py does `from psd2_fixtures import *`.

Session fixtures: the PostgreSQL cluster (tests/pgcluster.sh), the
keys/migrations/sandbox data (psd2ctl), the psd2gate instance on 18080
and, on demand, the rate-limited instance on 18081. The binaries come from
$PSD2_BIN_DIR (default build/bin), so the same tests run against the
sanitizer build; a server log with a sanitizer report fails the session.
"""

import os
import subprocess

import pytest

import openapi_check
import psd2lib
from psd2lib import (Server, make_client, make_psu, pgcluster_start, psd2ctl,
                     Signer)

__all__ = ["pgcluster", "service_setup", "server", "ratelimit_server",
           "psu_factory", "client_factory", "signer", "dbinfo",
           "pytest_runtest_makereport", "pytest_sessionfinish",
           "_log_offsets"]

_servers = []           # started Server objects, for failure log tails

# Every response of the API suites against the OpenAPI document.
if os.environ.get("PSD2_SUITE_LABEL", "").split("-")[0] in (
        "api", "ais", "bg", "tpp", "pis", "prod"):
    openapi_check.install()
_sanitizer_failures = []


@pytest.fixture(scope="session")
def pgcluster():
    return pgcluster_start()


@pytest.fixture(scope="session")
def dbinfo(pgcluster):
    """libpq conninfo of the test database (for read-only checks)."""
    return pgcluster


@pytest.fixture(scope="session")
def service_setup(pgcluster):
    for b in ("psd2gate", "psd2ctl"):
        path = os.path.join(psd2lib.bin_dir(), b)
        if not os.access(path, os.X_OK):
            pytest.fail("%s is missing: build first (make all, or "
                        "PSD2_BIN_DIR)" % path, pytrace=False)
    for step in (("keys-init",), ("migrate",), ("sandbox-seed",)):
        psd2ctl(*step)
    # The sandbox TPP's QSealC and the CA conf/test.conf trusts (idempotent).
    subprocess.run(["sh", os.path.join(psd2lib.TOP, "tests", "pki",
                                       "mint.sh"), "sandbox",
                    os.path.join(psd2lib.TOP, "var", "sandbox")],
                   check=True, cwd=psd2lib.TOP, stdout=subprocess.DEVNULL)
    return True


def _start(conf, port, name, conf_port):
    srv = Server(conf, port, name, conf_port)
    srv.start()
    _servers.append(srv)
    return srv


def _stop(srv):
    rc = srv.stop()
    problems = list(srv.problems)
    found = srv.sanitizer_reports()
    if found:
        _sanitizer_failures.append((srv, found))
        problems.append("sanitizer report in %s (%s)" % (
            srv.log_path, ", ".join(found)))
    if problems:
        pytest.fail("%s: %s; log tail:\n%s" % (
            srv.conf, "; ".join(problems), srv.tail(80 if found else 20)),
            pytrace=False)
    return rc


@pytest.fixture(scope="session")
def server(service_setup):
    srv = _start("conf/test.conf", psd2lib.MAIN_PORT, "psd2gate-main",
                 psd2lib.CONF_MAIN_PORT)
    yield srv
    _stop(srv)


@pytest.fixture(scope="session")
def ratelimit_server(service_setup):
    srv = _start("conf/test-ratelimit.conf", psd2lib.RATELIMIT_PORT,
                 "psd2gate-ratelimit", psd2lib.CONF_RATELIMIT_PORT)
    yield srv
    _stop(srv)


@pytest.fixture
def psu_factory(service_setup):
    return make_psu


@pytest.fixture
def client_factory(service_setup):
    return make_client


@pytest.fixture(scope="session")
def signer(service_setup):
    # After sandbox-seed: it may create var/sandbox/tpp.crt and tpp.key.
    return Signer.load()


@pytest.fixture(autouse=True)
def _log_offsets(request):
    """Remembers where each server log stood when the test began, so a
    failure shows only what the service said during that test; fails at
    once, saying so, if a server this session started is gone."""
    request.node._psd2_log_offsets = {id(s): s.log_size() for s in _servers}
    for s in _servers:
        if s.proc is not None and s.proc.poll() is not None:
            pytest.fail("psd2gate (%s) is no longer running (exit status "
                        "%s); log tail:\n%s" % (s.conf, s.proc.returncode,
                                                 s.tail(20)), pytrace=False)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and rep.when in ("setup", "call"):
        offsets = getattr(item, "_psd2_log_offsets", {})
        for s in _servers:
            since = offsets.get(id(s), 0)
            tail = s.tail(40, since=since)
            if tail:
                rep.sections.append(("psd2gate log (%s, tail)" % s.log_path,
                                     tail))


def pytest_sessionfinish(session, exitstatus):
    if _sanitizer_failures and session.exitstatus == 0:
        session.exitstatus = 1
