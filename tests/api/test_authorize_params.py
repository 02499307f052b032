"""Repeated OAuth parameters are invalid_request (RFC 6749 3.1 and 3.2):
at the authorisation endpoint an error page when client_id or redirect_uri
is repeated (never a redirect), otherwise an error redirect (without a
state when state itself is repeated); at the token and revoke endpoints a
400 invalid_request."""

import urllib.parse

import pytest
import requests

from psd2lib import (MAIN_URL, basic_auth, location_params, run_code_flow,
                     s256, sandbox_client, token_request)
from test_authorize import assert_error_page, assert_error_redirect

SC = sandbox_client()
RU = SC.redirect_uri
CHALLENGE = s256("v" * 50)

BASE = [("response_type", "code"), ("client_id", SC.client_id),
        ("redirect_uri", RU), ("scope", "ACCOUNT_INFORMATION"),
        ("state", "st-rep"), ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256")]


def authorize(pairs):
    q = urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)
    return requests.get(MAIN_URL + "/auth/oauth/authorize?" + q,
                        allow_redirects=False, timeout=15)


def with_repeat(name, value=None):
    pairs = list(BASE)
    first = dict(pairs)[name]
    pairs.append((name, first if value is None else value))
    return pairs


def test_base_request_is_accepted():
    r = authorize(BASE)
    assert r.status_code == 200 and "login-form" in r.text


@pytest.mark.parametrize("name,value", [
    ("client_id", None), ("client_id", "no-such-client"),
    ("redirect_uri", None), ("redirect_uri", "https://tpp.example/callback"),
    ("redirect_uri", "https://evil.example/cb"),
])
def test_repeated_client_id_or_redirect_uri_is_an_error_page(name, value):
    assert_error_page(authorize(with_repeat(name, value)))


def test_repeated_redirect_uri_with_a_control_character_is_an_error_page():
    """A duplicate that the route's validator would drop still counts."""
    assert_error_page(authorize(with_repeat("redirect_uri", RU + "\n")))


@pytest.mark.parametrize("name,value", [
    ("response_type", None), ("response_type", "token"),
    ("scope", None), ("scope", "FUND_AVAILABILITY"),
    ("code_challenge", None), ("code_challenge_method", None),
])
def test_repeated_parameter_is_an_error_redirect_with_state(name, value):
    q = assert_error_redirect(authorize(with_repeat(name, value)),
                              "invalid_request", "st-rep")
    assert name in q["error_description"][0]


def test_repeated_empty_parameter_counts():
    pairs = list(BASE) + [("scope", "")]
    assert_error_redirect(authorize(pairs), "invalid_request", "st-rep")


@pytest.mark.parametrize("second", ["st-rep", "other"])
def test_repeated_state_is_an_error_redirect_without_state(second):
    r = authorize(with_repeat("state", second))
    assert r.status_code == 302, (r.status_code, r.text[:300])
    parts, q = location_params(r)
    assert parts.scheme + "://" + parts.netloc + parts.path == RU
    assert q["error"] == ["invalid_request"]
    assert "state" not in q and "code" not in q


def test_encoded_name_counts_as_the_same_parameter():
    q = urllib.parse.urlencode(BASE) + "&sco%70e=ACCOUNT_INFORMATION"
    r = requests.get(MAIN_URL + "/auth/oauth/authorize?" + q,
                     allow_redirects=False, timeout=15)
    assert_error_redirect(r, "invalid_request", "st-rep")


# -- token endpoint --------------------------------------------------------

@pytest.fixture
def code(psu_factory):
    c, _, _, _ = run_code_flow(SC, psu_factory())
    return c


@pytest.mark.parametrize("name", ["grant_type", "code", "redirect_uri",
                                  "client_id"])
def test_token_repeated_parameter_is_invalid_request(code, name):
    pairs = [("grant_type", "authorization_code"), ("code", code),
             ("redirect_uri", RU), ("client_id", SC.client_id)]
    pairs.append((name, dict(pairs)[name]))
    r = token_request(pairs, SC)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_request"
    assert name in r.json()["error_description"]
    # Nothing was spent: the same code still works once.
    ok = token_request(pairs[:-1], SC)
    assert ok.status_code == 200, ok.text


def test_token_repeated_refresh_token_is_invalid_request(psu_factory):
    c, _, _, _ = run_code_flow(SC, psu_factory())
    tok = token_request({"grant_type": "authorization_code", "code": c,
                         "redirect_uri": RU}, SC).json()
    rt = tok["refresh_token"]
    r = token_request([("grant_type", "refresh_token"), ("refresh_token", rt),
                       ("refresh_token", rt)], SC)
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    ok = token_request({"grant_type": "refresh_token", "refresh_token": rt},
                       SC)
    assert ok.status_code == 200, ok.text


def test_revoke_repeated_token_is_invalid_request():
    r = requests.post(MAIN_URL + "/auth/oauth/revoke",
                      data="token=a&token=b",
                      headers={"Authorization": basic_auth(SC.client_id,
                                                           SC.secret),
                               "Content-Type":
                               "application/x-www-form-urlencoded"},
                      timeout=15)
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
