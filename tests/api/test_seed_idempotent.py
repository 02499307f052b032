"""`psd2ctl sandbox-seed` run a second time changes nothing: every row of
every table is the same before and after. It runs on a database
of its own in the test cluster, so that no service, purge or other test
writes between the two snapshots and any difference is the seed's."""

import re

import pytest

import psd2lib

DB = "psd2gate_seedtest"


@pytest.fixture(scope="module")
def seed_conf(pgcluster):
    admin = psd2lib.db_connect(re.sub(r"dbname=\S+ user=\S+",
                                      "dbname=postgres user=postgres",
                                      pgcluster))
    try:
        cur = admin.cursor()
        cur.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)
        cur.execute("CREATE DATABASE %s OWNER psd2gate" % DB)
    finally:
        admin.close()
    conf = psd2lib.derived_conf("conf/test.conf", psd2lib.CONF_MAIN_PORT,
                                "seedtest")
    with open(conf) as f:
        text = f.read()
    assert "dbname=psd2gate " in text
    with open(conf, "w") as f:
        f.write(text.replace("dbname=psd2gate ", "dbname=%s " % DB))
    yield conf, pgcluster.replace("dbname=psd2gate", "dbname=" + DB)
    admin = psd2lib.db_connect(re.sub(r"dbname=\S+ user=\S+",
                                      "dbname=postgres user=postgres",
                                      pgcluster))
    try:
        admin.cursor().execute("DROP DATABASE IF EXISTS %s WITH (FORCE)"
                               % DB)
    finally:
        admin.close()


def test_second_seed_changes_nothing(seed_conf):
    conf, conninfo = seed_conf
    psd2lib.psd2ctl("keys-init", conf=conf)
    psd2lib.psd2ctl("migrate", conf=conf)
    psd2lib.psd2ctl("sandbox-seed", conf=conf)
    first = psd2lib.db_rows(conninfo)
    # The seed did write: anna, bram and the sandbox TPP are there.
    assert sum(len(rows) for rows in first.values()) > 0
    c = psd2lib.db_connect(conninfo)
    try:
        cur = c.cursor()
        cur.execute("SELECT username FROM psu")
        assert {"anna", "bram"} <= {r[0] for r in cur.fetchall()}
    finally:
        c.close()
    psd2lib.psd2ctl("sandbox-seed", conf=conf)
    second = psd2lib.db_rows(conninfo)
    changed = psd2lib.snapshot_diff(first, second)
    assert changed == [], "a second seed changed rows in %s" % changed
