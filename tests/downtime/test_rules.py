"""The Prometheus alert rules in the repository
(conf/prometheus/psd2gate-rules.yml): valid for promtool, firing as
tests/downtime/rules-test.yml expects, and naming only metrics that a
running psd2gate exposes."""

import os
import re
import subprocess

import psd2lib
from ha_lib import PROMTOOL

RULES = os.path.join(psd2lib.TOP, "conf", "prometheus", "psd2gate-rules.yml")
HERE = os.path.dirname(__file__)


def promtool(*args, cwd=None):
    p = subprocess.run([PROMTOOL] + list(args), capture_output=True,
                       text=True, timeout=60, cwd=cwd)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return p.stdout


def test_rules_check():
    out = promtool("check", "rules", RULES)
    assert "SUCCESS: 5 rules found" in out, out


def test_rules_fire_as_expected():
    out = promtool("test", "rules", "rules-test.yml", cwd=HERE)
    assert "SUCCESS" in out, out


def test_rules_name_metrics_psd2gate_exposes():
    """Every psd2_ name in the rules is a family of src/metrics/metrics.c
    (a renamed metric would leave an alert that never fires)."""
    with open(RULES) as f:
        rules = f.read()
    with open(os.path.join(psd2lib.TOP, "src", "metrics", "metrics.c")) as f:
        families = set(re.findall(r'"(psd2_[a-z_]+)"', f.read()))
    used = set(re.findall(r"\b(psd2_[a-z_]+)\b", rules))
    assert used and used <= families, used - families
