"""API suite: pytest against the real psd2gate and PostgreSQL (see
tests/lib/psd2_fixtures.py for the session fixtures)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import pytest  # noqa: E402

from psd2_fixtures import *  # noqa: E402,F401,F403


@pytest.fixture(autouse=True)
def _running_service(server):
    """Every API test talks to the instance on 18080."""
    return server
