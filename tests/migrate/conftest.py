"""Migration suite: psd2ctl migrate against databases of the real test
cluster, each test on databases of its own (never the suites' psd2gate)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))

import psycopg2  # noqa: E402
import pytest  # noqa: E402

import psd2lib  # noqa: E402


@pytest.fixture(scope="session")
def cluster():
    info = psd2lib.pgcluster_start()
    for b in ("psd2ctl",):
        if not os.access(os.path.join(psd2lib.bin_dir(), b), os.X_OK):
            pytest.fail("%s is missing: build first" % b, pytrace=False)
    psd2lib.psd2ctl("keys-init")
    return info


@pytest.fixture
def new_db(cluster, request):
    """Makes empty databases owned by psd2gate; drops them afterwards."""
    made = []

    def make(tag):
        name = "psd2gate_mig_%s_%s" % (request.node.name[5:25].lower()
                                       .replace("[", "_").replace("]", "")
                                       .replace("-", "_"), tag)
        with superuser() as c, c.cursor() as cur:
            cur.execute('DROP DATABASE IF EXISTS "%s"' % name)
            cur.execute('CREATE DATABASE "%s" OWNER psd2gate' % name)
        made.append(name)
        return name

    yield make
    with superuser() as c, c.cursor() as cur:
        for name in made:
            cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)


class superuser:
    """An autocommit connection as the cluster's superuser."""

    def __enter__(self):
        self.c = psycopg2.connect(host="127.0.0.1",
                                  port=os.environ["PGPORT"],
                                  user="postgres", dbname="postgres")
        self.c.autocommit = True
        return self.c

    def __exit__(self, *exc):
        self.c.close()
