"""A row found by its key is checked for expiry in a form no index answers
(src/db/README.md): with "expires_at > now()" beside the key, a plan made
while the statistics had not seen the live rows range-scanned the purge's
index (token_expires) over every live token, 20 to 40 ms a refresh grant
(tests/bench/README.md). Here the statistics are made to lag on a
database of its own, and the grant's plans, read from auto_explain in
the same session, must take the token by its hash."""

import os

import psycopg2

import psd2lib
from test_migrate import conf_for, fresh

GRANT = ("SELECT result FROM oauth_refresh_grant_bound(sha256(int8send(%s)),"
         " 'sandbox-tpp', sha256(int8send(%s) || '\\x01'::bytea),"
         " sha256(int8send(%s) || '\\x02'::bytea), 900, NULL)")
TOKENS = ("INSERT INTO token (token_hash, kind, family, client_id,"
          " consent_id, scopes, expires_at)"
          " SELECT sha256(int8send(k)), 'refresh', gen_random_uuid(),"
          " 'sandbox-tpp', %s, '{ACCOUNT_INFORMATION}', now() + %s"
          " FROM generate_series(%s, %s) k")


def lagging_statistics(db):
    """2,000 expired tokens analysed, then 2,000 live ones not."""
    c = psycopg2.connect(host="127.0.0.1", port=os.environ["PGPORT"],
                         user="postgres", dbname=db)
    c.autocommit = True
    with c.cursor() as cur:
        cur.execute("ALTER TABLE token SET (autovacuum_enabled = false)")
        cur.execute("SELECT id FROM psu LIMIT 1")
        psu = cur.fetchone()[0]
        cur.execute("INSERT INTO consent (id, psu_id, client_id, scopes,"
                    " valid_until, sca_at) VALUES (gen_random_uuid(), %s,"
                    " 'sandbox-tpp',"
                    " '{ACCOUNT_INFORMATION}', current_date + 90, now())"
                    " RETURNING id", (psu,))
        consent = cur.fetchone()[0]
        cur.execute(TOKENS, (consent, "-1 day", 1, 2000))
        cur.execute("ANALYZE token")
        cur.execute(TOKENS, (consent, "1 day", 10001, 12000))
    return c


def grant_plans(c, keys):
    """The refresh grant for each key, with the plans of its statements."""
    c.notices.clear()
    with c.cursor() as cur:
        cur.execute("LOAD 'auto_explain'")
        for setting in ("auto_explain.log_min_duration = 0",
                        "auto_explain.log_nested_statements = on",
                        "auto_explain.log_level = notice",
                        "client_min_messages = notice"):
            cur.execute("SET " + setting)
        out = []
        for k in keys:
            del c.notices[:]
            cur.execute(GRANT, (k, k, k))
            out.append((cur.fetchone()[0],
                        [n for n in c.notices if "UPDATE token t" in n]))
    return out


def test_refresh_grant_takes_the_token_by_its_hash(new_db):
    db = fresh(new_db)
    psd2lib.psd2ctl("sandbox-seed", conf=conf_for(db))
    c = lagging_statistics(db)
    try:
        # Past the first five calls too, when PL/pgSQL may keep a generic
        # plan.
        for result, plans in grant_plans(c, range(10001, 10009)):
            assert result == "ok"
            assert len(plans) == 1, plans
            assert "token_pkey" in plans[0], plans[0]
            assert "token_expires" not in plans[0], plans[0]
    finally:
        c.close()
