"""Statements about the source tree that readers rely on, kept true."""

import os
import re
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROUTES = os.path.join(TOP, "conf", "routes.conf")


def routes_and_table():
    routes, table = [], []
    with open(ROUTES) as f:
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


def test_routes_table_names_every_route_once():
    routes, table = routes_and_table()
    assert routes, "no route lines read from conf/routes.conf"
    assert [(p, h) for p, h, _ in table] == routes


def test_routes_table_names_the_file_of_each_handler():
    _, table = routes_and_table()
    for path, handler, src in table:
        assert defined_in(handler) == [src], (path, handler)
