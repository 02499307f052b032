"""Production suite: conf/production.conf started for real
(TLS, mTLS, seccomp, chroot and dropped privileges), psd2ctl's
configuration lookup, the systemd units, the OAuth metadata document.

The shared fixtures (tests/lib/psd2_fixtures.py) give the test cluster;
each module starts the instances it needs.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))

from psd2_fixtures import *  # noqa: E402,F401,F403
