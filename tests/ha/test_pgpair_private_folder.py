"""tests/ha/pgpair.sh in a folder the postgres user cannot enter: the
pair of a checkout cloned into root's home or under any 0700 folder. As
root, initdb and pg_ctl run as postgres, who could not reach such a DIR
(the script exited with nothing printed); the clusters then live under
/var/tmp and DIR points there, as tests/pgcluster.sh does. Not as root,
the clusters are the caller's own and stay in DIR: the pair must work
below a private folder either way."""

import os
import shutil
import subprocess
import tempfile

import psycopg2

import psd2lib

PGPAIR = os.path.join(psd2lib.TOP, "tests", "ha", "pgpair.sh")


def test_pair_below_a_private_folder():
    private = tempfile.mkdtemp(prefix="psd2-private-")
    assert os.stat(private).st_mode & 0o777 == 0o700
    d = os.path.join(private, "checkout", "var", "ha-private")
    pport = psd2lib.free_port()
    sport = psd2lib.free_port({pport})

    def pgpair(*args):
        p = subprocess.run(["sh", PGPAIR, d, str(pport), str(sport)] +
                           list(args), capture_output=True, text=True,
                           timeout=180, cwd=private)
        assert p.returncode == 0, (args, p.stdout, p.stderr)

    target = None
    try:
        pgpair("primary")
        pgpair("standby")
        if os.geteuid() == 0:
            # Only root hands the clusters to postgres, who cannot
            # enter the private folder.
            assert os.path.islink(d)
            target = os.path.realpath(d)
            assert target.startswith("/var/tmp/"), target
        else:
            assert os.path.isdir(d) and not os.path.islink(d)
        for port in (pport, sport):
            conn = psycopg2.connect(host="127.0.0.1", port=port,
                                    dbname="psd2gate", user="psd2gate",
                                    sslmode="disable")
            with conn.cursor() as cur:
                cur.execute("SELECT pg_is_in_recovery()")
                assert cur.fetchone()[0] == (port == sport)
            conn.close()
    finally:
        subprocess.run(["sh", PGPAIR, d, str(pport), str(sport), "stop"],
                       capture_output=True, timeout=120)
        shutil.rmtree(private, ignore_errors=True)
        if target is not None:
            shutil.rmtree(target, ignore_errors=True)
