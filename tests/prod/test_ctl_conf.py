"""psd2ctl finds its configuration without -c: $PSD2_CONF, then
/etc/psd2gate/psd2gate.conf (README, operator section); a missing file
is named with where the name came from."""

import os
import subprocess

import psd2lib

DEFAULT = "/etc/psd2gate/psd2gate.conf"
TEST_CONF = os.path.join(psd2lib.TOP, "conf", "test.conf")


def ctl(*args, env_conf=None):
    env = dict(os.environ)
    env.pop("PSD2_CONF", None)
    if env_conf is not None:
        env["PSD2_CONF"] = env_conf
    return subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl")] +
                          list(args), env=env, cwd="/", text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=30)


def test_environment_variable_names_the_file():
    p = ctl("check-settings", env_conf=TEST_CONF)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "%s: settings valid" % TEST_CONF


def test_option_wins_over_the_environment():
    p = ctl("-c", TEST_CONF, "check-settings", env_conf="/nonexistent.conf")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "%s: settings valid" % TEST_CONF


def test_missing_file_from_the_environment_is_named():
    p = ctl("check-settings", env_conf="/nonexistent/psd2.conf")
    assert p.returncode == 2
    assert p.stdout == ""
    assert "/nonexistent/psd2.conf (from PSD2_CONF)" in p.stderr
    assert "No such file or directory" in p.stderr
    assert "usage:" not in p.stderr


def test_default_path_is_used_without_option_or_environment():
    p = ctl("check-settings")
    if os.path.exists(DEFAULT):
        assert p.stdout.strip().startswith(DEFAULT + ": "), p.stderr
    else:
        assert p.returncode == 2
        assert "%s (from the default path)" % DEFAULT in p.stderr
        assert "give -c FILE or set PSD2_CONF" in p.stderr
        assert "usage:" not in p.stderr


def test_usage_names_the_lookup_order():
    p = ctl()
    assert p.returncode == 2
    assert "usage: psd2ctl [-c FILE] command" in p.stderr
    assert "$PSD2_CONF, else %s" % DEFAULT in p.stderr
