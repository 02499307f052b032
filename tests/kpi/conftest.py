"""KPI suite: the regulator's key performance indicators (src/metrics/
kpi.h, src/db/functions/80_kpi.sql) against the real psd2gate and
PostgreSQL. Each test module starts its own instance of conf/test.conf on
a free port with a name of its own (psd2_instance) and the minutes
written every second, so that its rows in kpi_minute are exactly the
requests the module sent; tokens come from the real OAuth flow of the
suite's main instance."""

import os
import secrets
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402

import psd2lib  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403
from psd2_fixtures import _servers  # noqa: E402
from ais_shared import *  # noqa: E402,F401,F403


def kpi_instance(extra=""):
    """A psd2gate of conf/test.conf on a free port, named kpi-<random>,
    writing its KPI minutes every second (not started)."""
    port = psd2lib.free_port({psd2lib.MAIN_PORT})
    name = "kpi-" + secrets.token_hex(4)
    conf = psd2lib.derived_conf("conf/test.conf", port, name)
    with open(conf, "a") as f:
        f.write("psd2_instance\t%s\npsd2_kpi_flush_seconds\t1\n%s"
                % (name, extra))
    srv = psd2lib.Server(conf, port, name)
    srv.instance = name
    return srv


@pytest.fixture(scope="module")
def kpi_server(service_setup, server):
    srv = kpi_instance()
    srv.start()
    _servers.append(srv)
    yield srv
    srv.stop()
    assert not srv.problems, srv.problems


@pytest.fixture
def db(dbinfo):
    """A connection of the test's own (a test stops the database)."""
    c = psd2lib.db_connect(dbinfo)
    yield c
    c.close()
