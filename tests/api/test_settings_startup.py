"""Settings are validated when psd2gate starts: a bad psd2_
value (type, range, an unknown name) stops startup with a message naming
the setting, instead of killing a worker at its first request. Each case
starts psd2gate on a derived conf/test.conf (bound to port 0, so that a
psd2gate that wrongly starts takes no port of the other tests) and
expects it to exit non-zero at once."""

import os
import signal
import subprocess

import pytest

import psd2lib

CASES = [
    ("page_size", "0", "psd2_page_size: 0 is out of range (1 to 1000)"),
    ("page_size", "1001",
     "psd2_page_size: 1001 is out of range (1 to 1000)"),
    ("page_size", "fifty", "psd2_page_size: not an integer: \"fifty\""),
    ("page_size", "50x", "psd2_page_size: not an integer: \"50x\""),
    ("unattended_limit", "0",
     "psd2_unattended_limit: 0 is out of range (1 to 4)"),
    ("unattended_limit", "5",
     "psd2_unattended_limit: 5 is out of range (1 to 4)"),
    ("clock_skew", "0", "psd2_clock_skew: 0 is out of range (1 to 3600)"),
    ("session_idle", "301",
     "psd2_session_idle: 301 is out of range (1 to 300)"),
    ("login_max_failures", "6",
     "psd2_login_max_failures: 6 is out of range (1 to 5)"),
    ("access_token_ttl", "-1",
     "psd2_access_token_ttl: -1 is out of range (1 to 86400)"),
    # FAPI 2.0 5.3.2.1: an authorisation code lives at most 60 seconds.
    ("code_ttl", "61", "psd2_code_ttl: 61 is out of range (1 to 60)"),
    ("signing_required", "maybe",
     "psd2_signing_required: not yes or no: \"maybe\""),
    ("cookie_secure", "true", "psd2_cookie_secure: not yes or no: \"true\""),
    ("environment", "staging",
     "psd2_environment: \"staging\" is not one of: sandbox production"),
    ("page_sise", "50", "psd2_page_sise: unknown setting"),
    ("unsigned_roles", "PSP_XX",
     "psd2_unsigned_roles: \"PSP_XX\" is not a list of PSD2 roles"),
    # Valid in itself, but only meaningful with signing off.
    ("unsigned_roles", "PSP_AI",
     "psd2_unsigned_roles applies only with psd2_signing_required no"),
    ("consent_max_days", "60",
     "psd2_consent_default_days (90) is more than psd2_consent_max_days "
     "(60)"),
    # WebAuthn: browsers refuse an IP address as a relying party id, and
    # allow http only on localhost.
    ("webauthn_origin", "http://127.0.0.1:18080",
     "psd2_webauthn_origin: \"http://127.0.0.1:18080\" is not "
     "https://domain[:port] or http://localhost[:port]"),
    ("webauthn_origin", "http://bank.example",
     "psd2_webauthn_origin: \"http://bank.example\" is not "
     "https://domain[:port] or http://localhost[:port]"),
    ("webauthn_origin", "https://bank.example/auth",
     "psd2_webauthn_origin: \"https://bank.example/auth\" is not "
     "https://domain[:port] or http://localhost[:port]"),
    # Staff security keys: the roots must be read, the models UUIDs.
    ("staff_key_roots", "/nonexistent/roots.pem",
     "psd2_staff_key_roots or psd2_staff_key_aaguids: "
     "/nonexistent/roots.pem: No such file or directory"),
    ("staff_key_roots", "/etc/passwd",
     "psd2_staff_key_roots or psd2_staff_key_aaguids: /etc/passwd: "
     "no certificate"),
    ("staff_key_aaguids", "yubikey-5",
     "psd2_staff_key_roots or psd2_staff_key_aaguids: AAGUID 1 "
     "\"yubikey-5\" is not a UUID 8-4-4-4-12"),
]


def start_with(name, value, label):
    conf = psd2lib.derived_conf("conf/test.conf", 0, "settings-" + label)
    with open(conf, "a") as f:
        f.write("psd2_%s %s\n" % (name, value))
    cmd = [os.path.join(psd2lib.bin_dir(), "psd2gate"), "-c", conf, "-f",
           "-n", "-r"]
    p = subprocess.Popen(cmd, cwd=psd2lib.TOP, env=psd2lib.sanitizer_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail("psd2gate started with psd2_%s %s (killed); output:\n%s"
                    % (name, value, out.decode(errors="replace")[-2000:]))
    return p.returncode, out.decode(errors="replace")


@pytest.mark.parametrize("name,value,message", CASES,
                         ids=["%s=%s" % (c[0], c[1]) for c in CASES])
def test_bad_setting_stops_startup(name, value, message):
    # The label names a file: a value's slashes and colons go.
    label = "%s-%s" % (name, value.replace("/", "_").replace(":", "_"))
    rc, out = start_with(name, value, label)
    assert rc == 1, out
    assert message in out, out
    # Refused in the parent, before any worker ran.
    assert "[wrk" not in out, out


def test_good_settings_start():
    """The check itself (psd2ctl check-settings runs the same one) accepts
    what the shipped configurations hold."""
    for conf in ("conf/test.conf", "conf/sandbox.conf",
                 "conf/production.conf", "conf/test-ratelimit.conf",
                 "conf/psd2-deviced-sandbox.conf", "tests/tpp/tls.conf"):
        p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl"),
                            "-c", conf, "check-settings"], cwd=psd2lib.TOP,
                           env=psd2lib.sanitizer_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
        assert p.returncode == 0, (conf, p.stdout)
        assert p.stdout == "%s: settings valid\n" % conf


def test_psd2ctl_refuses_a_bad_setting(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("psd2_db dbname=x\npsd2_page_size 0\n")
    p = subprocess.run([os.path.join(psd2lib.bin_dir(), "psd2ctl"), "-c",
                        str(conf), "check-settings"], cwd=psd2lib.TOP,
                       env=psd2lib.sanitizer_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    assert p.returncode == 1
    assert p.stderr == ("psd2ctl: %s: psd2_page_size: 0 is out of range "
                        "(1 to 1000)\n" % conf)
