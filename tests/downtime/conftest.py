"""Downtime suite (EBA GL 2.2): the detector, the probe and the incidents
against the real psd2gate and PostgreSQL, with the real fault (the test
cluster stopped); the Prometheus alert rules. See
tests/lib/psd2_fixtures.py for the session fixtures."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ha"))

from psd2_fixtures import *  # noqa: E402,F401,F403
