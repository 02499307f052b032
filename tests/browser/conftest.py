"""Browser suite: headless Chromium (Debian chromium + chromium-driver)
driven by Selenium against the real psd2gate on 18080, with a tiny TPP
callback server on 127.0.0.1:8000 in this process."""

import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402
import psd2lib  # noqa: E402

from psd2_fixtures import *  # noqa: E402,F401,F403

CALLBACK = "http://127.0.0.1:8000/callback"


@pytest.fixture(autouse=True)
def _running_service(server):
    return server


class CallbackServer:
    """Records every request the browser sends to 127.0.0.1:8000."""

    def __init__(self):
        self.requests = []
        self.cond = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with outer.cond:
                    outer.requests.append(self.path)
                    outer.cond.notify_all()
                body = b"<!doctype html><title>TPP</title><p id=tpp-done>ok"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 8000),
                                                     Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def wait_for(self, state, timeout=20):
        """The query of the /callback request that carries state."""
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for path in self.requests:
                    parts = urllib.parse.urlsplit(path)
                    q = urllib.parse.parse_qs(parts.query,
                                              keep_blank_values=True)
                    if parts.path == "/callback" and \
                            q.get("state") == [state]:
                        return q, path
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(
                        "no /callback with state %r; got %r" % (
                            state, self.requests))
                self.cond.wait(left)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def callback_server():
    try:
        srv = CallbackServer()
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
