#!/usr/bin/python3
"""The bank's profile (assets/bg-profile.json) as the Markdown table of
the README's "The Berlin Group interface":

    /usr/bin/python3 tests/bg/bg_profile_table.py

tests/bg/test_bg_profile.py checks that the README's table is this one.
"""

import json
import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROFILE = os.path.join(TOP, "assets", "bg-profile.json")


def profile():
    with open(PROFILE, encoding="utf-8") as f:
        return json.load(f)


def _cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def _setting(s):
    if not s:
        return ""
    out = "`%s` (default %s" % (s["name"], s["default"])
    if "range" in s:
        out += ", %s to %s" % tuple(s["range"])
    return out + ")"


def table(doc=None):
    """The table's lines, header first."""
    doc = doc or profile()
    lines = ["| option | psd2gate | setting |", "|---|---|---|"]
    for o in doc["options"]:
        lines.append("| %s | %s | %s |" % (
            _cell(o["option"]), _cell(o["text"]),
            _cell(_setting(o.get("setting")))))
    return lines


if __name__ == "__main__":
    sys.stdout.write("\n".join(table()) + "\n")
