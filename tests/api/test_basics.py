"""Health, unknown paths, the per-request log line, the request signer."""

import base64
import re
import time
import uuid

import requests

import psd2lib
from psd2lib import MAIN_URL


def test_health_is_static_ok():
    r = requests.get(MAIN_URL + "/health", timeout=10)
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}
    assert "json" in r.headers.get("Content-Type", "")


def test_unknown_path_is_404_with_tpp_messages():
    r = requests.get(MAIN_URL + "/no/such/path-%s" % uuid.uuid4().hex,
                     timeout=10)
    assert r.status_code == 404
    assert "json" in r.headers.get("Content-Type", "")
    body = r.json()
    assert set(body) == {"tppMessages"}
    msgs = body["tppMessages"]
    assert isinstance(msgs, list) and len(msgs) >= 1
    for m in msgs:
        assert m["category"] == "ERROR"
        assert isinstance(m["code"], str) and m["code"]
        assert isinstance(m["text"], str) and m["text"]


def test_unknown_path_post_is_404_with_tpp_messages():
    r = requests.post(MAIN_URL + "/auth/v1/psd2/nothing-%s" % uuid.uuid4().hex,
                      data=b"{}", headers={"Content-Type": "application/json"},
                      timeout=10)
    assert r.status_code == 404
    assert r.json()["tppMessages"][0]["category"] == "ERROR"


DURATION_RE = re.compile(r"(\d+(\.\d+)?\s*ms\b|\bms[=:]\s*\d|duration[=: ]+\d)", re.I)
REQID_RE = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|req(uest)?[_-]?id[=: ]+\S{6,}|\b[0-9a-f]{12,}\b)", re.I)


def _log_lines_with(server, needle, since, wait=3.0):
    deadline = time.time() + wait
    while True:
        lines = [ln for ln in server.log_text(since).splitlines()
                 if needle in ln]
        if lines or time.time() > deadline:
            return lines
        time.sleep(0.1)


def test_one_log_line_per_request(server):
    since = server.log_size()
    path = "/log-probe-%s" % uuid.uuid4().hex
    r = requests.get(MAIN_URL + path, timeout=10)
    assert r.status_code == 404
    time.sleep(0.5)
    lines = _log_lines_with(server, path, since)
    assert len(lines) == 1, "expected one log line for %s, got %r" % (
        path, lines)
    line = lines[0]
    assert "GET" in line
    assert re.search(r"\b404\b", line), line
    assert DURATION_RE.search(line), "no duration in ms: %r" % line
    assert REQID_RE.search(line.replace(path, "")), \
        "no request id: %r" % line


def test_log_line_for_health_and_token(server):
    since = server.log_size()
    requests.get(MAIN_URL + "/health", timeout=10)
    r = psd2lib.token_request({"grant_type": "authorization_code"},
                              auth="Basic " + base64.b64encode(
                                  b"nobody:nothing").decode())
    assert r.status_code in (400, 401)
    time.sleep(0.5)
    text = server.log_text(since)
    health = [ln for ln in text.splitlines() if "/health" in ln]
    token = [ln for ln in text.splitlines() if "/auth/oauth/token" in ln]
    assert len(health) == 1 and re.search(r"\b200\b", health[0]), health
    assert len(token) == 1 and "POST" in token[0], token
    assert re.search(r"\b%d\b" % r.status_code, token[0]), token
    # Secrets never reach the log.
    assert "nothing" not in text


def test_signer_produces_cavage_headers(signer):
    h = signer.headers("GET", MAIN_URL + psd2lib.ACCOUNT_LIST, b"")
    assert h["Digest"].startswith("SHA-256=")
    assert uuid.UUID(h["X-Request-ID"])
    assert h["Date"].endswith("GMT")
    base64.b64decode(h["TPP-Signing-Certificate"], validate=True)
    sig = h["Signature"]
    assert 'algorithm="rsa-sha256"' in sig
    assert 'headers="digest x-request-id date"' in sig
    assert "Authorization" not in h
