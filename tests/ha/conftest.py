"""HA and observability suite: metrics, request ids, several
instances behind HAProxy, PostgreSQL restarts. pytest against the real
psd2gate and PostgreSQL; see tests/lib/psd2_fixtures.py."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))

from psd2_fixtures import *  # noqa: E402,F401,F403
