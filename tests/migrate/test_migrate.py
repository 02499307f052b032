"""psd2ctl migrate: digests of applied migrations, the repair of known
earlier versions, and the functions files applied whole on every run."""

import glob
import hashlib
import os
import re

import psycopg2

import psd2lib

TOP = psd2lib.TOP
MIGRATIONS = os.path.join(TOP, "src", "db", "migrations")
HISTORY = os.path.join(TOP, "tests", "migrate", "history")
MIGRATE_C = os.path.join(TOP, "src", "ctl", "ctl_migrate.c")

# The migrations as they stood at the commit that first added 010
# (37ecd10): 001, 002, 011 and 020 have not changed since.
FIRST_010 = ["001_foundation.sql", "002_oauth_functions.sql",
             "010_ais.sql@37ecd10", "011_ais_sandbox.sql",
             "020_devices.sql"]


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def current_digests():
    return {os.path.basename(p): sha256_file(p)
            for p in glob.glob(os.path.join(MIGRATIONS, "*.sql"))}


def conf_for(db):
    """conf/test.conf aimed at database db."""
    path = psd2lib.derived_conf("conf/test.conf", psd2lib.CONF_MAIN_PORT,
                                "migrate-" + db)
    with open(path) as f:
        text = f.read()
    text = re.sub(r"dbname=psd2gate\b", "dbname=" + db, text)
    with open(path, "w") as f:
        f.write(text)
    return path


def migrate(db):
    return psd2lib.psd2ctl("migrate", conf=conf_for(db), check=False)


def connect(db):
    c = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                         user="psd2gate", dbname=db)
    c.autocommit = True
    return c


def old_psd2ctl_migrate(db, files):
    """What psd2ctl migrate did before digests were kept (c36128d to
    this change): each file in a transaction, its name recorded."""
    c = connect(db)
    c.autocommit = False
    with c.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name text"
                    " PRIMARY KEY, applied_at timestamptz NOT NULL "
                    "DEFAULT now())")
        c.commit()
        for f in files:
            base, _, _ = f.partition("@")
            src = os.path.join(HISTORY if "@" in f else MIGRATIONS, f)
            with open(src) as fh:
                cur.execute(fh.read())
            cur.execute("INSERT INTO schema_migrations (name) VALUES (%s)",
                        (base,))
            c.commit()
    c.close()


def fingerprint(db):
    """Everything the schema is made of, as PostgreSQL prints it."""
    queries = {
        "functions": """
            SELECT p.oid::regprocedure::text, pg_get_functiondef(p.oid)
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' ORDER BY 1""",
        "columns": """
            SELECT table_name, column_name, data_type, is_nullable,
                   coalesce(column_default, '')
            FROM information_schema.columns WHERE table_schema = 'public'
              AND table_name <> 'schema_migrations' ORDER BY 1, 2""",
        "indexes": """
            SELECT indexname, indexdef FROM pg_indexes
            WHERE schemaname = 'public' ORDER BY 1""",
        "constraints": """
            SELECT conrelid::regclass::text, conname,
                   pg_get_constraintdef(c.oid)
            FROM pg_constraint c JOIN pg_namespace n
              ON n.oid = c.connamespace
            WHERE n.nspname = 'public' ORDER BY 1, 2""",
        "triggers": """
            SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger
            WHERE NOT tgisinternal ORDER BY 1""",
        "types": """
            SELECT t.typname, a.attname, format_type(a.atttypid, NULL)
            FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
            JOIN pg_class r ON r.oid = t.typrelid AND r.relkind = 'c'
            JOIN pg_attribute a ON a.attrelid = r.oid
            WHERE n.nspname = 'public' ORDER BY 1, a.attnum""",
    }
    c = connect(db)
    out = {}
    with c.cursor() as cur:
        for k, q in queries.items():
            cur.execute(q)
            out[k] = cur.fetchall()
    c.close()
    return out


def recorded(db):
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("SELECT name, sha256 FROM schema_migrations")
        rows = dict(cur.fetchall())
    c.close()
    return rows


def fresh(new_db):
    db = new_db("fresh")
    p = migrate(db)
    assert p.returncode == 0, p.stderr
    return db


def test_fresh_database_records_every_digest(new_db):
    db = fresh(new_db)
    assert recorded(db) == current_digests()


def test_second_migrate_changes_nothing(new_db):
    db = fresh(new_db)
    before = fingerprint(db), recorded(db)
    p = migrate(db)
    assert p.returncode == 0, p.stderr
    assert "applied 0" not in p.stdout and not re.search(
        r"^applied ", p.stdout, re.M), p.stdout
    assert (fingerprint(db), recorded(db)) == before


def test_database_of_first_010_is_upgraded(new_db):
    """Migrated at 37ecd10 (010's first version, no digests kept): the
    upgrade repairs 010, applies 030 and 040, and leaves exactly the
    schema and functions of a fresh database."""
    reference = fresh(new_db)
    db = new_db("old")
    old_psd2ctl_migrate(db, FIRST_010)
    old_funcs = dict(fingerprint(db)["functions"])
    assert any(k.startswith("ais_gate(") and k.count(",") == 5
               for k in old_funcs), "the old 010 was not applied"

    p = migrate(db)
    assert p.returncode == 0, p.stderr
    assert "repaired 010_ais.sql" in p.stdout
    assert "applied 030_tpp.sql" in p.stdout
    assert "applied 040_token_client_active.sql" in p.stdout
    assert recorded(db) == current_digests()
    assert fingerprint(db) == fingerprint(reference)


def test_known_earlier_digest_is_repaired(new_db):
    """A database that recorded 010 as of f2ccbd9 (a digest listed as
    known history) is repaired, not refused."""
    reference = fresh(new_db)
    db = new_db("old2")
    old_psd2ctl_migrate(db, FIRST_010[:2] + ["010_ais.sql@f2ccbd9"] +
                        FIRST_010[3:])
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("ALTER TABLE schema_migrations ADD COLUMN sha256 text")
        for name, digest in current_digests().items():
            cur.execute("UPDATE schema_migrations SET sha256 = %s "
                        "WHERE name = %s", (digest, name))
        cur.execute("UPDATE schema_migrations SET sha256 = %s WHERE name = "
                    "'010_ais.sql'", (sha256_file(os.path.join(
                        HISTORY, "010_ais.sql@f2ccbd9")),))
    c.close()
    p = migrate(db)
    assert p.returncode == 0, p.stderr
    assert "repaired 010_ais.sql" in p.stdout
    assert recorded(db) == current_digests()
    assert fingerprint(db) == fingerprint(reference)


def test_changed_migration_is_refused(new_db):
    db = fresh(new_db)
    other = hashlib.sha256(b"an edited 020").hexdigest()
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("UPDATE schema_migrations SET sha256 = %s "
                    "WHERE name = '020_devices.sql'", (other,))
        # A function edited by hand must survive a refused run too.
        cur.execute("CREATE OR REPLACE FUNCTION ais_amount(p_minor bigint,"
                    " p_currency text) RETURNS numeric LANGUAGE sql "
                    "IMMUTABLE AS $$ SELECT 418::numeric $$")
    c.close()
    before = fingerprint(db), recorded(db)
    p = migrate(db)
    assert p.returncode != 0
    assert "020_devices.sql" in p.stderr and other in p.stderr
    assert "never changes" in p.stderr
    assert (fingerprint(db), recorded(db)) == before


def test_migration_unknown_to_the_build_is_refused(new_db):
    db = fresh(new_db)
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("INSERT INTO schema_migrations (name, sha256) VALUES "
                    "('999_from_the_future.sql', 'x')")
    c.close()
    before = fingerprint(db), recorded(db)
    p = migrate(db)
    assert p.returncode != 0
    assert "999_from_the_future.sql" in p.stderr
    assert (fingerprint(db), recorded(db)) == before


def test_functions_are_reapplied_from_their_files(new_db):
    """A function changed in the database by hand is put back by the next
    migrate: the functions files are the definition."""
    db = fresh(new_db)
    want = fingerprint(db)["functions"]
    c = connect(db)
    with c.cursor() as cur:
        cur.execute("CREATE OR REPLACE FUNCTION ais_amount(p_minor bigint,"
                    " p_currency text) RETURNS numeric LANGUAGE sql "
                    "IMMUTABLE AS $$ SELECT 418::numeric $$")
    c.close()
    assert fingerprint(db)["functions"] != want
    p = migrate(db)
    assert p.returncode == 0, p.stderr
    assert fingerprint(db)["functions"] == want


def test_history_digests_match_the_kept_files():
    """The digests listed in ctl_migrate.c are those of the earlier
    versions kept in tests/migrate/history, and none is current."""
    with open(MIGRATE_C) as f:
        listed = set(re.findall(r'"([0-9a-f]{64})"', f.read()))
    kept = {sha256_file(p) for p in glob.glob(os.path.join(HISTORY, "*"))}
    assert listed == kept
    assert not listed & set(current_digests().values())
