"""The systemd units of conf/systemd, read and generated for a test
machine: /usr/local/bin becomes the build's binaries, /etc/psd2gate a
folder of the test."""

import configparser
import os

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UNIT_DIR = os.path.join(TOP, "conf", "systemd")
UNITS = ("psd2gate.service", "psd2-deviced.service")


def read(name):
    """{section: {key: [values]}} (systemd allows repeated keys)."""
    out = {}
    section = None
    with open(os.path.join(UNIT_DIR, name)) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                section = out.setdefault(line.strip("[]"), {})
                continue
            k, v = line.split("=", 1)
            section.setdefault(k, []).append(v)
    return out


def capability_bounding_set(name="psd2gate.service"):
    caps = read(name)["Service"]["CapabilityBoundingSet"][-1].split()
    return [c.lower().replace("cap_", "", 1) for c in caps]


def generate(dest, bin_dir, etc_dir):
    paths = []
    for name in UNITS:
        with open(os.path.join(UNIT_DIR, name)) as f:
            text = f.read()
        text = text.replace("/usr/local/bin/", bin_dir.rstrip("/") + "/")
        text = text.replace("/etc/psd2gate/", etc_dir.rstrip("/") + "/")
        path = os.path.join(dest, name)
        with open(path, "w") as f:
            f.write(text)
        paths.append(path)
    return paths


__all__ = ["read", "generate", "capability_bounding_set", "UNITS",
           "configparser"]
