/*
 * psd2ctl audit seal|verify|checkpoint|list: the hash-chained audit log
 * (migrations 081 and 100: rows in audit_log, their links in
 * audit_chain; src/db/functions/71_audit.sql, README "Audit log").
 *
 * verify recomputes every hash here, in C, from the stored fields (not
 * with the database's own functions, which whoever changed the rows
 * could have changed too), names the first row that does not match and
 * exits 1; with --checkpoint it also checks the chain still holds the
 * signed head (a deleted tail, or a chain recomputed by a superuser).
 * It also reports rows whose time goes backwards in chain order by more
 * than a late commit explains (a backdated row: only the owner can still
 * choose a row's time, migration 120).
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/crypto.h"
#include "common/encoding.h"
#include "common/keyring.h"
#include "common/settings.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

#define AUDIT_SEAL_BATCH	"10000"
#define AUDIT_CHECKPOINT_HDR	"psd2gate audit checkpoint v1\n"
/*
 * How far a row's time may lie before that of a row sealed earlier: a
 * row is stamped when inserted and sealed after its transaction commits,
 * so a transaction that commits after a later one's row was sealed puts
 * an earlier time after it in the chain. Longer than any transaction the
 * service or psd2ctl holds open after writing a row.
 */
#define AUDIT_LATE_COMMIT_US	(60LL * 1000000)
#define AUDIT_BACKWARDS_SHOWN	10

struct audit_head {
	long long	seq;
	uint8_t		hash[32];
};

static void
audit_field(EVP_MD_CTX *md, const char *value, size_t len)
{
	char	prefix[32];
	int	n;

	n = snprintf(prefix, sizeof(prefix), "%zu:", len);
	EVP_DigestUpdate(md, prefix, (size_t)n);
	EVP_DigestUpdate(md, value, len);
	EVP_DigestUpdate(md, "\n", 1);
}

/* SHA-256(prev || canonical bytes of the row), README "Audit log". */
static int
audit_row_hash(const uint8_t prev[32], const char *const fields[6],
    uint8_t out[32])
{
	static const char	 hdr[] = "psd2gate-audit-v1\n";
	EVP_MD_CTX		*md;
	unsigned int		 len;
	int			 i, ok;

	if ((md = EVP_MD_CTX_new()) == NULL)
		return (-1);
	ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
	    EVP_DigestUpdate(md, prev, 32) &&
	    EVP_DigestUpdate(md, hdr, sizeof(hdr) - 1);
	for (i = 0; ok && i < 6; i++)
		audit_field(md, fields[i], strlen(fields[i]));
	ok = ok && EVP_DigestFinal_ex(md, out, &len) && len == 32;
	EVP_MD_CTX_free(md);
	return (ok ? 0 : -1);
}

static int
audit_bytea(const char *text, uint8_t out[32])
{
	/* bytea in hex output: \x + 64 digits */
	if (text == NULL || strncmp(text, "\\x", 2) != 0 ||
	    strlen(text) != 66)
		return (-1);
	return (hex_decode(text + 2, 64, out, 32) == 32 ? 0 : -1);
}

static int
audit_seal(PGconn *db, struct audit_head *head, int quiet)
{
	PGresult	*res;
	const char	*params[1] = { AUDIT_SEAL_BATCH };
	int		 total, n;

	total = 0;
	head->seq = 0;
	memset(head->hash, 0, sizeof(head->hash));
	do {
		/* Every unsealed row, however late it committed. */
		res = ctl_exec(db, "SELECT sealed, head_seq, head_hash "
		    "FROM audit_seal($1, NULL)", 1, params);
		n = atoi(PQgetvalue(res, 0, 0));
		total += n;
		if (!PQgetisnull(res, 0, 1)) {
			head->seq = atoll(PQgetvalue(res, 0, 1));
			(void)audit_bytea(PQgetvalue(res, 0, 2), head->hash);
		}
		PQclear(res);
	} while (n > 0);
	if (!quiet) {
		char	hex[65];

		hex_encode(head->hash, 32, hex, sizeof(hex));
		printf("audit: sealed %d rows; head seq %lld hash %s\n",
		    total, head->seq, hex);
	}
	return (0);
}

static int
audit_load_key(struct keyring *kr)
{
	char	path[PATH_MAX], err[256];

	if (settings_path("audit_keys", NULL, path, sizeof(path)) == -1) {
		fprintf(stderr, "psd2ctl: psd2_audit_keys is not set\n");
		return (-1);
	}
	if (keyring_load(kr, path, err, sizeof(err)) == -1) {
		fprintf(stderr, "psd2ctl: audit keys: %s\n", err);
		return (-1);
	}
	return (0);
}

static void
audit_mac(const struct keyring_key *k, const char *body, char hex[65])
{
	uint8_t	mac[32];

	crypto_hmac_sha256(k->key, KEYRING_KEY_LEN, body, strlen(body), mac);
	hex_encode(mac, sizeof(mac), hex, 65);
}

/* Seals, then writes the signed head to path (atomically). */
static int
audit_checkpoint(PGconn *db, const char *path)
{
	struct keyring			 kr;
	const struct keyring_key	*k;
	struct audit_head		 head;
	char				 body[512], hex[65], mac[65], tmp[PATH_MAX];
	char				 at[32];
	time_t				 now;
	FILE				*fp;

	if (audit_load_key(&kr) == -1 || (k = keyring_current(&kr)) == NULL)
		return (1);
	audit_seal(db, &head, 1);
	hex_encode(head.hash, 32, hex, sizeof(hex));
	now = time(NULL);
	strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	snprintf(body, sizeof(body), AUDIT_CHECKPOINT_HDR
	    "seq: %lld\nhash: %s\nat: %s\nkey: %s\n", head.seq, hex, at,
	    k->id);
	audit_mac(k, body, mac);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fp = fopen(tmp, "w")) == NULL ||
	    fprintf(fp, "%smac: %s\n", body, mac) < 0 || fflush(fp) != 0 ||
	    fsync(fileno(fp)) != 0 || fclose(fp) != 0 ||
	    rename(tmp, path) == -1) {
		fprintf(stderr, "psd2ctl: %s: %s\n", path, strerror(errno));
		keyring_clear(&kr);
		return (1);
	}
	keyring_clear(&kr);
	printf("audit checkpoint: seq %lld hash %s -> %s\n", head.seq, hex,
	    path);
	return (0);
}

/* Reads and authenticates a checkpoint file; -1 with a message. */
static int
audit_checkpoint_read(const char *path, struct audit_head *head)
{
	struct keyring			 kr;
	const struct keyring_key	*k;
	FILE				*fp;
	char				 buf[1024], *mac, keyid[KEYRING_ID_MAX + 1];
	char				 hex[65], want[65];
	size_t				 n;

	if ((fp = fopen(path, "r")) == NULL) {
		fprintf(stderr, "psd2ctl: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if (strncmp(buf, AUDIT_CHECKPOINT_HDR,
	    strlen(AUDIT_CHECKPOINT_HDR)) != 0 ||
	    (mac = strstr(buf, "mac: ")) == NULL ||
	    sscanf(buf + strlen(AUDIT_CHECKPOINT_HDR),
	    "seq: %lld\nhash: %64s\n", &head->seq, hex) != 2 ||
	    strlen(hex) != 64 || hex_decode(hex, 64, head->hash, 32) != 32) {
		fprintf(stderr, "psd2ctl: %s: not a checkpoint file\n", path);
		return (-1);
	}
	*mac = '\0';
	mac += 5;
	{
		const char	*kp = strstr(buf, "key: ");

		if (kp == NULL || sscanf(kp, "key: %16s", keyid) != 1) {
			fprintf(stderr, "psd2ctl: %s: no key id\n", path);
			return (-1);
		}
	}
	if (audit_load_key(&kr) == -1)
		return (-1);
	if ((k = keyring_find(&kr, keyid, strlen(keyid))) == NULL) {
		fprintf(stderr, "psd2ctl: %s: unknown key %s\n", path, keyid);
		keyring_clear(&kr);
		return (-1);
	}
	audit_mac(k, buf, want);
	keyring_clear(&kr);
	if (strlen(mac) < 64 || !crypto_equal(mac, want, 64)) {
		fprintf(stderr, "psd2ctl: %s: signature does not verify\n",
		    path);
		return (-1);
	}
	return (0);
}

struct audit_walk {
	long long	expect_seq;
	uint8_t		prev[32];
	long long	rows;
	int		bad;
	int		cp_found;
	struct audit_head cp;
	int		have_cp;
	long long	latest_us;	/* the latest time so far */
	long long	latest_seq;
	long long	backwards;	/* rows backdated beyond a late commit */
	long long	late;		/* rows within it */
	long long	late_max_us;
};

/*
 * Time in chain order: a row stamped before a row sealed earlier than
 * it, by more than a late commit explains, is named (verify fails).
 */
static void
audit_check_time(PGresult *res, struct audit_walk *w)
{
	long long	 seq, at_us, back;

	if (PQgetisnull(res, 0, 8))
		return;
	seq = atoll(PQgetvalue(res, 0, 0));
	at_us = atoll(PQgetvalue(res, 0, 8));
	if (w->latest_seq == 0 || at_us >= w->latest_us) {
		w->latest_us = at_us;
		w->latest_seq = seq;
		return;
	}
	back = w->latest_us - at_us;
	if (back <= AUDIT_LATE_COMMIT_US) {
		w->late++;
		if (back > w->late_max_us)
			w->late_max_us = back;
		return;
	}
	if (w->backwards++ < AUDIT_BACKWARDS_SHOWN)
		printf("audit: BAD row id %s (seq %lld): time goes backwards: "
		    "%s is %lld s before the time of seq %lld (a backdated "
		    "row)\n", PQgetvalue(res, 0, 1), seq,
		    PQgetvalue(res, 0, 2), back / 1000000, w->latest_seq);
}

/* One sealed row: checks it against the chain; the first bad one is named. */
static void
audit_check_row(PGresult *res, struct audit_walk *w)
{
	const char	*fields[6];
	uint8_t		 prev[32], stored[32], computed[32];
	long long	 seq;
	int		 i;

	seq = atoll(PQgetvalue(res, 0, 0));
	for (i = 0; i < 6; i++)
		fields[i] = PQgetvalue(res, 0, i);
	w->rows++;
	audit_check_time(res, w);
	if (w->bad)
		return;
	if (PQgetisnull(res, 0, 2)) {
		printf("audit: BAD row id %s (seq %lld): the row was deleted "
		    "after sealing (its link is in the chain)\n", fields[1],
		    seq);
		w->bad = 1;
		return;
	}
	if (seq != w->expect_seq) {
		printf("audit: BAD row id %s (seq %lld): seq %lld expected; "
		    "rows were deleted before it\n", fields[1], seq,
		    w->expect_seq);
		w->bad = 1;
		return;
	}
	if (audit_bytea(PQgetvalue(res, 0, 6), prev) == -1 ||
	    audit_bytea(PQgetvalue(res, 0, 7), stored) == -1 ||
	    !crypto_equal(prev, w->prev, 32)) {
		printf("audit: BAD row id %s (seq %lld): prev_hash is not "
		    "the hash of seq %lld\n", fields[1], seq, seq - 1);
		w->bad = 1;
		return;
	}
	if (audit_row_hash(w->prev, fields, computed) == -1 ||
	    !crypto_equal(computed, stored, 32)) {
		printf("audit: BAD row id %s (seq %lld): its content does not "
		    "match its hash (changed after sealing)\n", fields[1],
		    seq);
		w->bad = 1;
		return;
	}
	if (w->have_cp && seq == w->cp.seq) {
		if (!crypto_equal(stored, w->cp.hash, 32)) {
			printf("audit: BAD row id %s (seq %lld): its hash is "
			    "not the checkpoint's (the chain was "
			    "recomputed)\n", fields[1], seq);
			w->bad = 1;
			return;
		}
		w->cp_found = 1;
	}
	memcpy(w->prev, stored, 32);
	w->expect_seq = seq + 1;
}

static int
audit_verify(PGconn *db, const char *checkpoint)
{
	struct audit_walk	 w;
	PGresult		*res;
	long long		 unsealed;

	memset(&w, 0, sizeof(w));
	w.expect_seq = 1;
	if (checkpoint != NULL) {
		if (audit_checkpoint_read(checkpoint, &w.cp) == -1)
			return (1);
		w.have_cp = 1;
	}
	/* The links in chain order, each with its row (NULL if deleted). */
	if (!PQsendQuery(db, "SELECT c.seq::text, c.id::text, "
	    "to_char(a.at AT TIME ZONE 'UTC', "
	    "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), a.actor, a.action, "
	    "a.detail::text, c.prev_hash, c.row_hash, "
	    "(extract(epoch FROM a.at) * 1000000)::bigint::text "
	    "FROM audit_chain c "
	    "LEFT JOIN audit_log a ON a.id = c.id ORDER BY c.seq") ||
	    !PQsetSingleRowMode(db)) {
		fprintf(stderr, "psd2ctl: %s", PQerrorMessage(db));
		return (1);
	}
	while ((res = PQgetResult(db)) != NULL) {
		if (PQresultStatus(res) == PGRES_SINGLE_TUPLE)
			audit_check_row(res, &w);
		else if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			fprintf(stderr, "psd2ctl: %s", PQerrorMessage(db));
			w.bad = 1;
		}
		PQclear(res);
	}
	if (!w.bad && w.have_cp && !w.cp_found && w.cp.seq > 0) {
		printf("audit: BAD chain: it ends at seq %lld, before the "
		    "checkpoint's seq %lld (rows deleted at its end)\n",
		    w.expect_seq - 1, w.cp.seq);
		w.bad = 1;
	}
	res = ctl_exec(db, "SELECT count(*), min(a.id), max(a.id) "
	    "FROM audit_log a WHERE NOT EXISTS (SELECT 1 FROM audit_chain c "
	    "WHERE c.id = a.id)", 0, NULL);
	unsealed = atoll(PQgetvalue(res, 0, 0));
	if (unsealed > 0)
		printf("audit: %lld rows not yet sealed (ids %s to %s)\n",
		    unsealed, PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2));
	PQclear(res);
	if (w.late > 0)
		printf("audit: %lld rows stamped up to %lld ms before a row "
		    "sealed earlier (transactions that committed late)\n",
		    w.late, w.late_max_us / 1000);
	if (w.backwards > 0) {
		printf("audit: BAD chain: %lld rows whose time goes backwards "
		    "by more than %lld s\n", w.backwards,
		    AUDIT_LATE_COMMIT_US / 1000000);
		w.bad = 1;
	}
	if (w.bad)
		return (1);
	printf("audit: chain intact: %lld sealed rows%s\n", w.rows,
	    w.have_cp ? ", checkpoint matches" : "");
	return (0);
}

static int
audit_list(PGconn *db, int argc, char **argv)
{
	PGresult	*res;
	const char	*params[3] = { NULL, NULL, "50" };
	int		 i;

	for (i = 0; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--actor") == 0)
			params[0] = argv[i + 1];
		else if (strcmp(argv[i], "--action") == 0)
			params[1] = argv[i + 1];
		else if (strcmp(argv[i], "--limit") == 0)
			params[2] = argv[i + 1];
		else
			return (2);
	}
	if (i != argc)
		return (2);
	res = ctl_exec(db, "SELECT a.id, coalesce(c.seq::text, '-'), "
	    "to_char(a.at AT TIME ZONE 'UTC', "
	    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
	    "a.actor, a.action, a.detail::text FROM audit_log a "
	    "LEFT JOIN audit_chain c ON c.id = a.id "
	    "WHERE ($1::text IS NULL OR a.actor = $1) "
	    "AND ($2::text IS NULL OR a.action = $2) "
	    "ORDER BY a.id DESC LIMIT $3::integer", 3, params);
	for (i = 0; i < PQntuples(res); i++)
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", PQgetvalue(res, i, 0),
		    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
		    PQgetvalue(res, i, 3), PQgetvalue(res, i, 4),
		    PQgetvalue(res, i, 5));
	PQclear(res);
	return (0);
}

int
ctl_audit(PGconn *db, int argc, char **argv)
{
	struct audit_head	head;

	if (argc < 1)
		return (2);
	if (strcmp(argv[0], "seal") == 0 && argc == 1)
		return (audit_seal(db, &head, 0));
	if (strcmp(argv[0], "verify") == 0 && argc == 1)
		return (audit_verify(db, NULL));
	if (strcmp(argv[0], "verify") == 0 && argc == 3 &&
	    strcmp(argv[1], "--checkpoint") == 0)
		return (audit_verify(db, argv[2]));
	if (strcmp(argv[0], "checkpoint") == 0 && argc == 2)
		return (audit_checkpoint(db, argv[1]));
	if (strcmp(argv[0], "list") == 0)
		return (audit_list(db, argc - 1, argv + 1));
	return (2);
}
