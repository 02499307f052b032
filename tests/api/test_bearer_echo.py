"""The spec's 401 body names the bearer token that was sent ("Invalid access
token: <token>"), nothing else: an Authorization header of another scheme
(a client's Basic credentials sent by mistake) is never echoed."""

import pytest

from psd2lib import ACCOUNT_LIST, api_get, basic_auth, sandbox_client
from test_bearer_revoke import assert_bearer_401

SC = sandbox_client()
BASIC = basic_auth(SC.client_id, SC.secret)


@pytest.mark.parametrize("auth", [BASIC, "basic " + BASIC.split(" ", 1)[1],
                                  "Token s3cr3t-t0ken-value",
                                  "Digest username=\"u\", response=\"abc\"",
                                  "s3cr3t-without-scheme", "Bearer"])
def test_other_schemes_are_not_echoed(signer, auth):
    r = api_get(signer, ACCOUNT_LIST, authorization=auth)
    assert_bearer_401(r, "Invalid access token: ")
    rest = auth.split(" ", 1)[-1]
    assert rest not in r.text


def test_bearer_value_is_echoed(signer):
    r = api_get(signer, ACCOUNT_LIST, authorization="Bearer not-ours")
    assert_bearer_401(r, "Invalid access token: not-ours")
