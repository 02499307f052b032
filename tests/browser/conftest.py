"""Browser suite: headless Chromium (Debian chromium + chromium-driver)
driven by Selenium against the real psd2gate on 18080, with a tiny TPP
callback server on 127.0.0.1:8000 in this process."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402
import psd2lib  # noqa: E402

from psd2_fixtures import *  # noqa: E402,F401,F403

CALLBACK = "http://127.0.0.1:8000/callback"


@pytest.fixture(autouse=True)
def _running_service(server):
    return server


@pytest.fixture(scope="session")
def callback_server():
    try:
        srv = psd2lib.CallbackServer(8000)
    except OSError as e:
        pytest.fail("cannot listen on 127.0.0.1:8000 for the TPP callback "
                    "(%s): is something else using it?" % e, pytrace=False)
    yield srv
    srv.close()


@pytest.fixture
def driver():
    # The performance log: callback_requests() reads the TPP's callback.
    d = psd2lib.chromium(performance_log=True)
    yield d
    psd2lib.quit_chromium(d)


@pytest.fixture
def nojs_driver():
    d = psd2lib.chromium(javascript=False, performance_log=True)
    yield d
    psd2lib.quit_chromium(d)


def document_statuses(d):
    """(url, status) of every top-level document response since the last
    call (from Chromium's performance log)."""
    out = []
    for entry in d.get_log("performance"):
        try:
            msg = json.loads(entry["message"])["message"]
        except (KeyError, ValueError):
            continue
        if msg.get("method") != "Network.responseReceived":
            continue
        p = msg.get("params", {})
        if p.get("type") != "Document":
            continue
        out.append((p["response"]["url"], p["response"]["status"]))
    return out
