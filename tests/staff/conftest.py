"""Staff portal suite: psd2gate with its staff listener (conf/
staff.conf) on PSD2_TEST_STAFF_PORT (default 18083, else a free port),
the public listener on PSD2_TEST_PORT, headless Chromium, the real test
database."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402

import psd2lib  # noqa: E402
from psd2_fixtures import *  # noqa: E402,F401,F403
from psd2_fixtures import _servers  # noqa: E402
from staff_lib import STAFF_PORT, make_staff  # noqa: E402


def staff_conf():
    """conf/test.conf on the test ports plus the staff server and its
    routes (as conf/sandbox.conf has them), connecting as psd2_service."""
    path = psd2lib.derived_conf("conf/test.conf", psd2lib.MAIN_PORT,
                                "psd2gate-staff")
    with open(path) as f:
        text = f.read()
    marker = "include %s" % os.path.join(psd2lib.TOP, "conf", "common.conf")
    assert marker in text, text
    text = text.replace(marker, (
        "server staff {\n\tbind 127.0.0.1 %d\n\ttls no\n}\n%s\n"
        "domain * {\n\tattach staff\n\tinclude %s\n}\n"
        % (STAFF_PORT, marker,
           os.path.join(psd2lib.TOP, "conf", "staff.conf"))))
    # Security keys are offered on the staff port in use (WebAuthn's
    # origin names it).
    origin = "psd2_staff_webauthn_origin"
    assert origin in text
    text = re.sub(r"(?m)^%s\s.*$" % origin,
                  "%s http://localhost:%d" % (origin, STAFF_PORT), text)
    # conf/test.conf: the service runs as its own role (migration 083).
    assert "user=psd2_service " in text
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="session")
def staff_server(service_setup):
    srv = psd2lib.Server(staff_conf(), psd2lib.MAIN_PORT, "psd2gate-staff")
    srv.staff_url = "http://127.0.0.1:%d" % STAFF_PORT
    srv.start()
    _servers.append(srv)
    yield srv
    rc = srv.stop()
    assert not srv.problems, srv.problems
    del rc


@pytest.fixture(autouse=True)
def _running_staff(staff_server):
    return staff_server


@pytest.fixture
def driver():
    d = psd2lib.chromium()
    yield d
    psd2lib.quit_chromium(d)


@pytest.fixture
def nojs_driver():
    d = psd2lib.chromium(javascript=False)
    yield d
    psd2lib.quit_chromium(d)


@pytest.fixture
def operator(service_setup):
    return make_staff("operator")


@pytest.fixture
def admin(service_setup):
    return make_staff("admin")


@pytest.fixture
def db(dbinfo):
    c = psd2lib.db_connect(dbinfo)
    yield c
    c.close()
