"""Statements about the source tree that readers rely on, kept true."""

import glob
import os
import re
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROUTE_FILES = sorted(
    p for p in glob.glob(os.path.join(TOP, "conf", "*.conf"))
    if re.search(r"^\s*route\s", open(p).read(), re.M))


def routes_and_table(path):
    """The route lines of a configuration file, and the table of its
    header comment (path, handler, the file defining the handler)."""
    routes, table = [], []
    with open(path) as f:
        for line in f:
            words = line.split()
            if words[:1] == ["route"]:
                routes.append((words[1], words[2]))
            m = re.match(r"#\s+(\S+)\s+(\w+)\s+(src/\S+\.c)$", line.rstrip())
            if m:
                table.append(m.groups())
    return routes, table


def defined_in(handler):
    """Files of src/ that define the handler (OpenBSD style: the name
    starts the line)."""
    p = subprocess.run(["grep", "-rlE", r"^%s\(" % re.escape(handler),
                        "src"], cwd=TOP, stdout=subprocess.PIPE, text=True)
    return sorted(p.stdout.split())


def test_route_files_found():
    names = [os.path.basename(p) for p in ROUTE_FILES]
    assert "routes.conf" in names and "staff.conf" in names, names


@pytest.mark.parametrize("path", ROUTE_FILES, ids=os.path.basename)
def test_routes_table_names_every_route_once(path):
    routes, table = routes_and_table(path)
    assert routes, path
    assert [(p, h) for p, h, _ in table] == routes


@pytest.mark.parametrize("path", ROUTE_FILES, ids=os.path.basename)
def test_routes_table_names_the_file_of_each_handler(path):
    _, table = routes_and_table(path)
    for route, handler, src in table:
        assert defined_in(handler) == [src], (route, handler)
