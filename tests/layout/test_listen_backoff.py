"""The LISTEN connection (src/db/pgconn.c) reconnects as Kore's pool does
(conf/kore-patches/0020): the same backoff and the same connect timeout,
which both read from the same constants and connect_timeout setting."""

import os
import re

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PATCH = os.path.join(TOP, "conf", "kore-patches", "0020-pgsql-reconnect.patch")
PGCONN = os.path.join(TOP, "src", "db", "pgconn.c")


def defines(path, prefix):
    """NAME -> value of the `#define <prefix>NAME <number>` lines (a
    patch's added lines too)."""
    found = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^\+?#define\s+%s(\w+)\s+(\d+)\s*$" % prefix, line)
            if m:
                found[m.group(1)] = int(m.group(2))
    return found


def test_listen_connection_backs_off_as_the_pool():
    pool = defines(PATCH, "PGSQL_")
    listen = defines(PGCONN, "PGCONN_")
    for name in ("BACKOFF_MIN", "BACKOFF_MAX", "CONNECT_TIMEOUT"):
        assert name in pool, name
        assert listen.get(name) == pool[name], (name, listen, pool)


def test_listen_connection_reads_connect_timeout_as_the_pool():
    with open(PATCH) as f:
        patch = f.read()
    with open(PGCONN) as f:
        pgconn = f.read()
    for text in (patch, pgconn):
        assert 'strcmp(opt->keyword, "connect_timeout")' in text
        assert "secs > 0 && secs <= 3600" in text
