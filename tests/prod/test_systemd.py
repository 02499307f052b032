"""The systemd units (conf/systemd): systemd-analyze verify on copies
whose paths exist on this machine, and the hardening each must keep.
That psd2gate runs with the unit's capability bounding set is shown by
test_production.py, which starts it under setpriv with exactly that
set."""

import os
import re
import subprocess

import psd2lib
import units


def test_units_verify(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "psd2gate.conf").write_text("")
    (etc / "psd2-deviced.conf").write_text("")
    paths = units.generate(str(tmp_path), psd2lib.bin_dir(), str(etc))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no"] + paths,
                       text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    # Anything systemd says about these units is a finding.
    ours = [ln for ln in (p.stdout + p.stderr).splitlines()
            if any(u in ln for u in units.UNITS)]
    assert ours == [], "\n".join(ours)


def test_verify_catches_a_broken_unit(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    paths = units.generate(str(tmp_path), "/nonexistent/bin", str(etc))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", paths[0]],
                       text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert p.returncode != 0
    assert "/nonexistent/bin/psd2gate" in p.stderr


COMMON = {"ProtectSystem": "strict", "PrivateTmp": "yes",
          "ProtectHome": "yes", "NoNewPrivileges": "yes",
          "Restart": "on-failure", "ProtectKernelModules": "yes",
          "ProtectKernelTunables": "yes", "ProtectControlGroups": "yes",
          "RestrictNamespaces": "yes", "MemoryDenyWriteExecute": "yes",
          "SystemCallArchitectures": "native", "AmbientCapabilities": ""}


def service(name):
    return {k: v[-1] for k, v in units.read(name)["Service"].items()}


def test_psd2gate_keeps_only_the_capabilities_kore_needs():
    s = service("psd2gate.service")
    for k, v in COMMON.items():
        assert s.get(k) == v, (k, s.get(k))
    assert s["User"] == "root"
    assert sorted(s["CapabilityBoundingSet"].split()) == sorted([
        "CAP_SYS_CHROOT", "CAP_SETUID", "CAP_SETGID",
        "CAP_NET_BIND_SERVICE", "CAP_KILL"])
    assert s["PrivateDevices"] == "yes"
    assert re.search(r"psd2gate -c /etc/psd2gate/psd2gate\.conf -f$",
                     s["ExecStart"])
    # The production configuration drops the workers to psd2gate.
    conf = open(os.path.join(psd2lib.TOP, "conf", "production.conf")).read()
    assert re.search(r"(?m)^runas\s+psd2gate$", conf)
    assert re.search(r"(?m)^keymgr_runas\s+psd2gate$", conf)


def test_deviced_is_its_own_user_with_usb_devices_only():
    s = service("psd2-deviced.service")
    for k, v in COMMON.items():
        assert s.get(k) == v, (k, s.get(k))
    assert s["User"] == s["Group"] == "psd2dev"
    assert "SupplementaryGroups" not in s
    assert s["CapabilityBoundingSet"] == ""
    assert s["DevicePolicy"] == "closed"
    assert units.read("psd2-deviced.service")["Service"]["DeviceAllow"] == \
        ["char-usb_device rw"]
    rule = open(os.path.join(units.UNIT_DIR, "70-psd2-deviced.rules")).read()
    rules = [ln for ln in rule.splitlines() if ln and not ln.startswith("#")]
    assert rules == [
        'SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", '
        'ATTR{idVendor}=="1209", ATTR{idProduct}=="0001", '
        'GROUP="psd2dev", MODE="0660"']
    # The same device as the daemon's settings (psd2_device_vidpid).
    conf = open(os.path.join(psd2lib.TOP, "conf",
                             "psd2-deviced-sandbox.conf")).read()
    assert re.search(r"(?m)^psd2_device_vidpid\s+1209:0001$", conf)
