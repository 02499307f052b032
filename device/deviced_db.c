/*
 * psd2-deviced's main thread: PostgreSQL. It records devices, claims
 * challenges for the devices plugged in here with a lease (FOR UPDATE
 * SKIP LOCKED, so several daemons share one queue), hands them to the USB
 * thread, and writes outcomes back. Every write is a call of a function
 * of src/db/functions/50_devices.sql (the daemon's role may do nothing
 * else). An end that cannot be written yet waits in memory: while the
 * database is away, until the reconnect; after an error that can pass (a
 * lock or statement timeout, a serialisation failure, a deadlock), for
 * another try with backoff, until it could no longer count.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <openssl/rand.h>

#include "deviced_db.h"
#include "devsig.h"
#include "encoding.h"

#define DB_RECONNECT_MIN_MS	250
#define DB_RECONNECT_MAX_MS	5000
#define DB_STOP_WAIT_MS		1500
#define DB_RETRY_MIN_MS		100
#define DB_RETRY_MAX_MS		2000
/* How long after the challenge's deadline an end is still tried: by then
 * the service has decided the payment (an outcome written after the
 * deadline counts as timed out), so the write can no longer matter. */
#define DB_WRITE_GRACE_MS	30000
/* Claims wait while outcomes are still coming in (their writes first),
 * but never longer than this. */
#define DB_CLAIM_DEFER_MS	200

enum wkind {
	W_NONE,
	W_RESULT,
	W_FAILED,
	W_RELEASE
};

struct mdev {
	char			 serial[DEV_SERIAL_MAX + 1];
	int			 present;
	int			 recorded;
	int			 usable;
	int			 want_claim;
	int64_t			 retry_at;
	struct dev_info		 info;
	int			 attest_ok;
	int			 has_claim;
	int			 cancelling;
	uint8_t			 challenge[DEV_CHALLENGE_LEN];
	char			 challenge_id[37];
	/* "<id> request id=<x-request-id of the initiation, or ->": how
	 * every log line names the claimed challenge. */
	char			 challenge_tag[96];
	enum wkind		 wkind;
	struct dev_result	 result;
	char			 reason[DEVD_REASON_MAX];
	/* The end's write: the function's verdict, the next try after an
	 * error that can pass, and the last moment worth trying. */
	char			 verdict[16];
	int			 write_tries;
	int			 write_backoff_ms;
	int64_t			 write_at;
	int64_t			 write_until;
};

static struct {
	const struct devd_conf	*conf;
	struct dqueue		*from_usb;
	struct dqueue		*to_usb;
	PGconn			*db;
	char			 owner[192];
	int64_t			 reconnect_at;
	int			 backoff_ms;
	int64_t			 next_renew;
	int64_t			 next_sweep;
	int			 stopping;
	struct mdev		*devs[DEVD_MAX_DEVICES];
	size_t			 ndevs;
	struct devd_stats	 stats;
	int64_t			 next_metrics;
	int64_t			 claims_deferred;	/* since, or 0 */
	char			 sqlstate[6];	/* of the last error */
} M;

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * PostgreSQL's text form of bytea ("\x" and lower-case hex, the input of
 * a text parameter): len bytes need 2 * len + 3 bytes of out. Not the
 * plain hex of src/common/encoding.c.
 */
static void
bytea_text_encode(const uint8_t *in, size_t len, char *out)
{
	static const char	hex[] = "0123456789abcdef";
	size_t			i;

	out[0] = '\\';
	out[1] = 'x';
	for (i = 0; i < len; i++) {
		out[2 + 2 * i] = hex[in[i] >> 4];
		out[3 + 2 * i] = hex[in[i] & 0xf];
	}
	out[2 + 2 * len] = '\0';
}

static int
hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	return (-1);
}

/* PostgreSQL's text form of bytea: "\x" and lower-case hex. */
static int
bytea_decode(const char *s, uint8_t *out, size_t len)
{
	size_t	i;
	int	hi, lo;

	if (strncmp(s, "\\x", 2) != 0 || strlen(s) != 2 + 2 * len)
		return (-1);
	for (i = 0; i < len; i++) {
		if ((hi = hex_nibble(s[2 + 2 * i])) == -1 ||
		    (lo = hex_nibble(s[3 + 2 * i])) == -1)
			return (-1);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (0);
}

static void
db_drop(const char *why)
{
	if (M.db == NULL)
		return;
	devd_log("database connection lost: %s", why);
	PQfinish(M.db);
	M.db = NULL;
	M.reconnect_at = now_ms() + M.backoff_ms;
}

/*
 * Whether an error may pass if the same statement is tried again, by
 * SQLSTATE: transaction rollback (40: serialisation failure, deadlock),
 * insufficient resources (53), lock not available (55P03: lock_timeout),
 * operator intervention (57: statement_timeout, a cancel, a shutdown),
 * system errors (58) and connection exceptions (08). Anything else (bad
 * data, a missing privilege or function) would fail the same way again.
 */
static int
sqlstate_transient(const char *s)
{
	return (strncmp(s, "40", 2) == 0 || strncmp(s, "53", 2) == 0 ||
	    strcmp(s, "55P03") == 0 || strncmp(s, "57", 2) == 0 ||
	    strncmp(s, "58", 2) == 0 || strncmp(s, "08", 2) == 0);
}

/* Runs one statement; NULL (and the connection dropped if it broke) on
 * failure, with the error's SQLSTATE in M.sqlstate. */
static PGresult *
db_exec(const char *sql, int n, const char *const *params)
{
	PGresult	*res;
	ExecStatusType	 st;
	const char	*code;

	M.sqlstate[0] = '\0';
	if (M.db == NULL)
		return (NULL);
	res = PQexecParams(M.db, sql, n, NULL, params, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return (res);
	if (PQstatus(M.db) != CONNECTION_OK) {
		PQclear(res);
		db_drop(PQerrorMessage(M.db));
		return (NULL);
	}
	code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	snprintf(M.sqlstate, sizeof(M.sqlstate), "%s", code ? code : "");
	devd_log("database error (SQLSTATE %s): %s", M.sqlstate,
	    strtok(PQresultErrorMessage(res), "\n"));
	PQclear(res);
	return (NULL);
}

static int
db_connect(void)
{
	const char	*keys[] = { "dbname", "connect_timeout",
	    "application_name", "options", NULL };
	const char	*vals[] = { M.conf->db, "5", "psd2-deviced",
	    "-c statement_timeout=5000 -c lock_timeout=2000", NULL };
	static const char *const channels[] = {
		"LISTEN device_challenge_new",
		"LISTEN device_changed",
		"LISTEN device_challenge_done",
	};
	PGresult	*res;
	size_t		 i;

	M.db = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(M.db) != CONNECTION_OK) {
		devd_log("database connect failed: %s",
		    strtok(PQerrorMessage(M.db), "\n"));
		PQfinish(M.db);
		M.db = NULL;
		M.reconnect_at = now_ms() + M.backoff_ms;
		M.backoff_ms = M.backoff_ms * 2 > DB_RECONNECT_MAX_MS ?
		    DB_RECONNECT_MAX_MS : M.backoff_ms * 2;
		return (-1);
	}
	for (i = 0; i < sizeof(channels) / sizeof(channels[0]); i++) {
		if ((res = db_exec(channels[i], 0, NULL)) == NULL) {
			db_drop("LISTEN failed");
			return (-1);
		}
		PQclear(res);
	}
	(void)PQsetnonblocking(M.db, 0);
	M.backoff_ms = DB_RECONNECT_MIN_MS;
	M.stats.connects++;
	devd_log("database connected");
	/* Whatever happened meanwhile: record again, look for work. */
	for (i = 0; i < M.ndevs; i++) {
		M.devs[i]->recorded = 0;
		M.devs[i]->want_claim = 1;
	}
	M.next_sweep = 0;
	return (0);
}

static struct mdev *
mdev_find(const char *serial, int create)
{
	struct mdev	*d;
	size_t		 i;

	for (i = 0; i < M.ndevs; i++) {
		if (strcmp(M.devs[i]->serial, serial) == 0)
			return (M.devs[i]);
	}
	if (!create || M.ndevs == DEVD_MAX_DEVICES)
		return (NULL);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		abort();
	snprintf(d->serial, sizeof(d->serial), "%s", serial);
	M.devs[M.ndevs++] = d;
	return (d);
}

static void
db_record(struct mdev *d)
{
	char		 pub[2 + 2 * DEV_PUBKEY_LEN + 1];
	char		 att[2 + 2 * DEV_SIG_MAX + 1];
	const char	*p[7];
	PGresult	*res;

	bytea_text_encode(d->info.pubkey, DEV_PUBKEY_LEN, pub);
	bytea_text_encode(d->info.attest, d->info.attest_len, att);
	p[0] = d->serial;
	p[1] = d->info.model;
	p[2] = d->info.firmware;
	p[3] = pub;
	p[4] = att;
	p[5] = d->attest_ok ? "true" : "false";
	p[6] = M.conf->host;
	res = db_exec("SELECT status, first_time FROM deviced_record($1, $2, "
	    "$3, $4::bytea, $5::bytea, $6::boolean, $7)", 7, p);
	if (res == NULL)
		return;
	d->recorded = 1;
	if (PQntuples(res) == 0) {
		/* Same serial, other key: a clone or a swapped device. */
		d->usable = 0;
		devd_log("device %s presents a public key other than the "
		    "recorded one; not used", d->serial);
	} else {
		d->usable = 1;
		devd_log("device %s %s, status %s", d->serial,
		    strcmp(PQgetvalue(res, 0, 1), "t") == 0 ?
		    "recorded for the first time" : "seen again",
		    PQgetvalue(res, 0, 0));
	}
	PQclear(res);
}

static void
send_cancel(struct mdev *d)
{
	struct dmsg	*m = dmsg_new(UM_CANCEL, d->serial);

	memcpy(m->challenge, d->challenge, DEV_CHALLENGE_LEN);
	d->cancelling = 1;
	dqueue_push(M.to_usb, m);
}

/* One row of deviced_claim()'s columns in a result: at column off of
 * row row (the batch puts the serial first). */
struct claim_row {
	PGresult	*res;
	int		 row;
	int		 off;
};

static const char *
claim_val(const struct claim_row *c, int col)
{
	return (PQgetvalue(c->res, c->row, c->off + col));
}

/* The claimed row's id and request id (column 8, NULL for a challenge
 * that no request made), as the log names them. */
static void
challenge_tag(const struct claim_row *c, char *out, size_t len)
{
	const char	*rid = "-";

	if (!PQgetisnull(c->res, c->row, c->off + 8) &&
	    strlen(claim_val(c, 8)) == 36)
		rid = claim_val(c, 8);
	snprintf(out, len, "%.36s request id=%s", claim_val(c, 0), rid);
}

static int
claim_fill(struct mdev *d, const struct claim_row *c, struct dmsg *m)
{
	const char	*name, *iban, *cur;
	long long	 amount;
	int		 timeout;

	name = claim_val(c, 4);
	iban = claim_val(c, 5);
	cur = claim_val(c, 3);
	amount = strtoll(claim_val(c, 2), NULL, 10);
	timeout = atoi(claim_val(c, 6));
	if (uuid_decode(claim_val(c, 0), m->confirm.challenge) ||
	    bytea_decode(claim_val(c, 1), m->confirm.nonce,
	    DEV_NONCE_LEN) || amount <= 0 || strlen(cur) != 3 ||
	    strlen(name) > DEV_PAYEE_NAME_MAX || strlen(iban) > DEV_IBAN_MAX)
		return (-1);
	m->confirm.amount_minor = (uint64_t)amount;
	memcpy(m->confirm.currency, cur, 4);
	memcpy(m->confirm.payee_name, name, strlen(name) + 1);
	memcpy(m->confirm.payee_iban, iban, strlen(iban) + 1);
	m->confirm.timeout_s = (uint16_t)timeout;
	memcpy(d->challenge, m->confirm.challenge, DEV_CHALLENGE_LEN);
	snprintf(d->challenge_id, sizeof(d->challenge_id), "%s",
	    claim_val(c, 0));
	challenge_tag(c, d->challenge_tag, sizeof(d->challenge_tag));
	return (0);
}

/* A challenge deviced_claim() gave the device: to the USB thread. */
static void
claim_take(struct mdev *d, const struct claim_row *c)
{
	struct dmsg	*m = dmsg_new(UM_CONFIRM, d->serial);

	if (claim_fill(d, c, m) == 0) {
		d->has_claim = 1;
		d->cancelling = 0;
		/* The deadline is the device's timeout and one second later
		 * (PROTOCOL.md 5.6). */
		d->write_until = now_ms() + ((int64_t)m->confirm.timeout_s +
		    1) * 1000 + DB_WRITE_GRACE_MS;
		devd_log("challenge %s claimed for device %s (attempt %s, "
		    "%us to answer)", d->challenge_tag, d->serial,
		    claim_val(c, 7), m->confirm.timeout_s);
		dqueue_push(M.to_usb, m);
	} else {
		free(m);
		challenge_tag(c, d->challenge_tag, sizeof(d->challenge_tag));
		devd_log("challenge %s unreadable", d->challenge_tag);
	}
	/* There may be more queued for this device later. */
	d->want_claim = 1;
}

/*
 * The device's timeout is the whole seconds left to the deadline, less
 * one second kept for the RESULT's way back and its write; a challenge
 * with less than two seconds left is not sent at all (PROTOCOL.md 5.6).
 */
static void
db_claim(struct mdev *d)
{
	char		 lease[16], pub[2 + 2 * DEV_PUBKEY_LEN + 1];
	const char	*p[4];
	struct claim_row c = { NULL, 0, 0 };

	snprintf(lease, sizeof(lease), "%d", M.conf->lease_seconds);
	bytea_text_encode(d->info.pubkey, DEV_PUBKEY_LEN, pub);
	p[0] = M.owner;
	p[1] = lease;
	p[2] = d->serial;
	p[3] = pub;
	c.res = db_exec("SELECT id, nonce, amount_minor, currency, "
	    "payee_name, payee_iban, timeout_s, attempts, request_id "
	    "FROM deviced_claim($1, $2::int, $3, $4::bytea)", 4, p);
	if (c.res == NULL)
		return;
	d->want_claim = 0;
	if (PQntuples(c.res) == 1)
		claim_take(d, &c);
	PQclear(c.res);
}

/*
 * Several devices looking for work (each one that has just ended a
 * challenge, every device after a reconnect): one deviced_claim() per
 * device, all in one statement, so one round trip instead of one each.
 * The text arrays hold serials (letters, digits, '-', '.', '_') and hex
 * keys, each quoted, so no element needs escaping or reads as NULL.
 */
static void
db_claim_batch(struct mdev **ds, size_t n)
{
	static char	 serials[DEVD_MAX_DEVICES * (DEV_SERIAL_MAX + 3) + 3];
	static char	 keys[DEVD_MAX_DEVICES * (2 * DEV_PUBKEY_LEN + 3) + 3];
	char		 lease[16];
	const char	*p[4];
	struct claim_row c = { NULL, 0, 1 };
	struct mdev	*d;
	size_t		 i, so = 0, ko = 0;

	serials[so++] = keys[ko++] = '{';
	for (i = 0; i < n; i++) {
		so += (size_t)snprintf(serials + so, sizeof(serials) - so,
		    "%s\"%s\"", i > 0 ? "," : "", ds[i]->serial);
		ko += (size_t)snprintf(keys + ko, sizeof(keys) - ko, "%s\"",
		    i > 0 ? "," : "");
		(void)hex_encode(ds[i]->info.pubkey, DEV_PUBKEY_LEN, keys + ko,
		    sizeof(keys) - ko);
		ko += 2 * DEV_PUBKEY_LEN;
		keys[ko++] = '"';
	}
	serials[so++] = keys[ko++] = '}';
	serials[so] = keys[ko] = '\0';
	snprintf(lease, sizeof(lease), "%d", M.conf->lease_seconds);
	p[0] = M.owner;
	p[1] = lease;
	p[2] = serials;
	p[3] = keys;
	c.res = db_exec("SELECT s.serial, c.id, c.nonce, c.amount_minor, "
	    "c.currency, c.payee_name, c.payee_iban, c.timeout_s, c.attempts, "
	    "c.request_id FROM unnest($3::text[], $4::text[]) AS s(serial, "
	    "pub) CROSS JOIN LATERAL deviced_claim($1, $2::int, s.serial, "
	    "decode(s.pub, 'hex')) c", 4, p);
	if (c.res == NULL)
		return;
	for (i = 0; i < n; i++)
		ds[i]->want_claim = 0;
	for (c.row = 0; c.row < PQntuples(c.res); c.row++) {
		if ((d = mdev_find(PQgetvalue(c.res, c.row, 0), 0)) != NULL &&
		    !d->has_claim)
			claim_take(d, &c);
	}
	PQclear(c.res);
}

/* The metrics' name for the end of a claim. */
static int
end_kind(const struct mdev *d)
{
	if (d->wkind == W_FAILED)
		return (DEVD_OUT_FAILED);
	if (d->wkind == W_RELEASE)
		return (DEVD_OUT_RELEASED);
	if (d->result.outcome == DEV_OUTCOME_APPROVED)
		return (DEVD_OUT_APPROVED);
	if (d->result.outcome == DEV_OUTCOME_DECLINED)
		return (DEVD_OUT_DECLINED);
	return (DEVD_OUT_TIMED_OUT);
}

enum wres {
	WR_OK,		/* the function answered: d->verdict */
	WR_ERROR,	/* an SQL error, the connection still up */
	WR_LOST		/* no connection */
};

/* The write function's call for the claim's end (0: nothing to call). The
 * parameters point into sig and counter. */
static int
write_query(const struct mdev *d, const char **sql, const char **p,
    char *counter, size_t clen, char *sig)
{
	p[0] = d->challenge_id;
	p[1] = M.owner;
	switch (d->wkind) {
	case W_RESULT:
		snprintf(counter, clen, "%" PRIu32, d->result.counter);
		bytea_text_encode(d->result.sig, d->result.sig_len, sig);
		p[2] = dev_outcome_name(d->result.outcome);
		p[3] = counter;
		p[4] = sig;
		*sql = "SELECT deviced_finish($1::uuid, $2, $3, $4::bigint, "
		    "$5::bytea)";
		return (5);
	case W_FAILED:
	case W_RELEASE:
		p[2] = d->reason;
		p[3] = d->wkind == W_RELEASE ? "true" : "false";
		*sql = "SELECT deviced_fail($1::uuid, $2, $3, $4::boolean)";
		return (4);
	default:
		return (0);
	}
}

/* The function's verdict ("written", or why not) into d->verdict. */
static void
write_verdict(struct mdev *d, PGresult *res)
{
	snprintf(d->verdict, sizeof(d->verdict), "%s", PQntuples(res) == 1 ?
	    PQgetvalue(res, 0, 0) : "unknown");
}

/* Calls the write function of the claim's end. */
static enum wres
db_write(struct mdev *d)
{
	char		 counter[16], sig[2 + 2 * DEV_SIG_MAX + 1];
	const char	*p[5], *sql;
	PGresult	*res;
	int		 n;

	if ((n = write_query(d, &sql, p, counter, sizeof(counter), sig)) == 0) {
		snprintf(d->verdict, sizeof(d->verdict), "written");
		return (WR_OK);
	}
	if ((res = db_exec(sql, n, p)) == NULL)
		return (M.db == NULL ? WR_LOST : WR_ERROR);
	write_verdict(d, res);
	PQclear(res);
	return (WR_OK);
}

static const char *
wkind_name(const struct mdev *d)
{
	if (d->wkind == W_RESULT)
		return (dev_outcome_name(d->result.outcome));
	return (d->wkind == W_FAILED ? "failed" : "released");
}

static void
write_clear(struct mdev *d)
{
	d->wkind = W_NONE;
	d->has_claim = 0;
	d->write_tries = 0;
	d->write_backoff_ms = 0;
	d->write_at = 0;
}

/* The function answered (committed): log and count what it did. */
static void
write_done(struct mdev *d)
{
	if (strcmp(d->verdict, "written") == 0) {
		M.stats.ends[end_kind(d)]++;
		if (d->wkind == W_RESULT)
			devd_log("challenge %s on device %s: %s, counter %"
			    PRIu32, d->challenge_tag, d->serial, wkind_name(d),
			    d->result.counter);
		else
			devd_log("challenge %s on device %s %s: %s",
			    d->challenge_tag, d->serial, wkind_name(d),
			    d->reason);
	} else if (strcmp(d->verdict, "cancelled") == 0) {
		/* The service's cancel took the row first (PROTOCOL.md 5.4). */
		M.stats.not_written[DEVD_NW_REFUSED]++;
		devd_log("challenge %s on device %s: %s refused, the service "
		    "had cancelled the challenge", d->challenge_tag, d->serial,
		    wkind_name(d));
	} else {
		M.stats.not_written[DEVD_NW_REFUSED]++;
		devd_log("challenge %s on device %s: %s, %s not written",
		    d->challenge_tag, d->serial, d->verdict, wkind_name(d));
	}
	write_clear(d);
}

/*
 * The write failed with the connection up. An error that can pass is
 * tried again with backoff while the end can still count; anything else,
 * or past that, is given up, logged and counted.
 */
static void
write_failed(struct mdev *d)
{
	int64_t	now = now_ms();

	d->write_tries++;
	if (sqlstate_transient(M.sqlstate) && now < d->write_until) {
		d->write_backoff_ms = d->write_backoff_ms == 0 ?
		    DB_RETRY_MIN_MS : d->write_backoff_ms * 2;
		if (d->write_backoff_ms > DB_RETRY_MAX_MS)
			d->write_backoff_ms = DB_RETRY_MAX_MS;
		d->write_at = now + d->write_backoff_ms;
		M.stats.write_retries++;
		devd_log("challenge %s on device %s: %s not written yet "
		    "(SQLSTATE %s), try %d in %d ms", d->challenge_tag,
		    d->serial, wkind_name(d), M.sqlstate, d->write_tries + 1,
		    d->write_backoff_ms);
		return;
	}
	M.stats.not_written[DEVD_NW_GIVEN_UP]++;
	devd_log("challenge %s on device %s: %s given up after %d tries "
	    "(SQLSTATE %s%s)", d->challenge_tag, d->serial, wkind_name(d),
	    d->write_tries, M.sqlstate, now < d->write_until ?
	    ", not an error that passes" : ", too late to count");
	write_clear(d);
}

/* An end waiting to be written whose (next) try is due. */
static int
write_due(const struct mdev *d, int64_t now)
{
	return (d->wkind != W_NONE && now >= d->write_at);
}

static void
flush_one_by_one(void)
{
	int64_t	now = now_ms();
	size_t	i;

	for (i = 0; i < M.ndevs && M.db != NULL; i++) {
		if (!write_due(M.devs[i], now))
			continue;
		switch (db_write(M.devs[i])) {
		case WR_OK:
			write_done(M.devs[i]);
			break;
		case WR_ERROR:
			write_failed(M.devs[i]);
			break;
		case WR_LOST:
			break;
		}
	}
}

/*
 * The next result of a pipeline and the NULL that ends it; NULL (the
 * SQLSTATE in M.sqlstate, the connection dropped if it broke) unless it
 * has the status wanted.
 */
static PGresult *
pipe_result(ExecStatusType want)
{
	PGresult	*res, *end;
	const char	*code;

	if ((res = PQgetResult(M.db)) != NULL &&
	    PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
		while ((end = PQgetResult(M.db)) != NULL)
			PQclear(end);
	}
	if (res != NULL && PQresultStatus(res) == want)
		return (res);
	code = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (code != NULL && M.sqlstate[0] == '\0') {
		snprintf(M.sqlstate, sizeof(M.sqlstate), "%s", code);
		devd_log("database error (SQLSTATE %s): %s", M.sqlstate,
		    strtok(PQresultErrorMessage(res), "\n"));
	}
	PQclear(res);
	if (PQstatus(M.db) != CONNECTION_OK)
		db_drop(PQerrorMessage(M.db));
	return (NULL);
}

/*
 * BEGIN, every due end's write and COMMIT sent at once and read back
 * after (libpq's pipeline mode): one round trip and one commit flush for
 * the whole batch. 0 if all were written and committed; the verdicts are
 * only used then.
 */
static int
flush_pipelined(int64_t now)
{
	char		 counter[16], sig[2 + 2 * DEV_SIG_MAX + 1];
	const char	*p[5], *sql = NULL;
	PGresult	*res;
	size_t		 i;
	int		 n, ok = 1;

	M.sqlstate[0] = '\0';
	if (PQenterPipelineMode(M.db) != 1)
		return (-1);
	ok = PQsendQueryParams(M.db, "BEGIN", 0, NULL, NULL, NULL, NULL, 0);
	for (i = 0; i < M.ndevs && ok; i++) {
		if (!write_due(M.devs[i], now))
			continue;
		n = write_query(M.devs[i], &sql, p, counter, sizeof(counter),
		    sig);
		ok = PQsendQueryParams(M.db, sql, n, NULL, p, NULL, NULL, 0);
	}
	ok = ok && PQsendQueryParams(M.db, "COMMIT", 0, NULL, NULL, NULL,
	    NULL, 0) && PQpipelineSync(M.db);
	if (!ok) {
		db_drop(PQerrorMessage(M.db));
		return (-1);
	}
	if ((res = pipe_result(PGRES_COMMAND_OK)) == NULL)
		ok = 0;
	PQclear(res);
	for (i = 0; i < M.ndevs && M.db != NULL; i++) {
		if (!write_due(M.devs[i], now))
			continue;
		if ((res = pipe_result(PGRES_TUPLES_OK)) == NULL)
			ok = 0;
		else
			write_verdict(M.devs[i], res);
		PQclear(res);
	}
	if (M.db != NULL && (res = pipe_result(PGRES_COMMAND_OK)) == NULL)
		ok = 0;
	PQclear(res);
	if (M.db != NULL && (res = pipe_result(PGRES_PIPELINE_SYNC)) == NULL)
		ok = 0;
	PQclear(res);
	if (M.db != NULL && PQexitPipelineMode(M.db) != 1)
		db_drop("pipeline not ended");
	return (ok && M.db != NULL ? 0 : -1);
}

/*
 * Outcomes that arrive together (many devices answering at once) share
 * one transaction, sent in one go, so one round trip and one commit flush
 * instead of one per device. If the batch fails for any reason but a
 * lost connection, each is written alone (and an error is then tried
 * again or given up for that one alone).
 */
static void
flush_writes(void)
{
	PGresult	*res;
	int64_t		 now = now_ms();
	size_t		 i, n = 0;

	for (i = 0; i < M.ndevs; i++)
		n += write_due(M.devs[i], now);
	if (n == 0 || M.db == NULL)
		return;
	if (n == 1) {
		flush_one_by_one();
		return;
	}
	if (flush_pipelined(now) == 0) {
		for (i = 0; i < M.ndevs; i++) {
			if (write_due(M.devs[i], now))
				write_done(M.devs[i]);
		}
		return;
	}
	if (M.db == NULL)
		return;
	if ((res = db_exec("ROLLBACK", 0, NULL)) != NULL)
		PQclear(res);
	flush_one_by_one();
}

static void
end_claim(struct mdev *d, enum wkind kind, const char *reason)
{
	d->wkind = kind;
	snprintf(d->reason, sizeof(d->reason), "%s", reason ? reason : "");
}

static void
on_usb(struct dmsg *m)
{
	struct mdev	*d;
	int		 ours;

	if ((d = mdev_find(m->serial, m->type == DM_ARRIVED)) == NULL)
		return;
	ours = d->has_claim && d->wkind == W_NONE &&
	    memcmp(d->challenge, m->challenge, DEV_CHALLENGE_LEN) == 0;
	switch (m->type) {
	case DM_ARRIVED:
		d->present = 1;
		d->info = m->info;
		d->attest_ok = m->attest_ok;
		d->recorded = 0;
		d->want_claim = 1;
		break;
	case DM_GONE:
		d->present = 0;
		break;
	case DM_RESULT:
		if (ours && !d->cancelling) {
			d->result = m->result;
			end_claim(d, W_RESULT, NULL);
		}
		break;
	case DM_FAILED:
		if (ours && !d->cancelling)
			end_claim(d, W_FAILED, m->reason);
		else if (ours)
			d->has_claim = 0;
		break;
	case DM_BUSY:
		if (ours && !d->cancelling) {
			end_claim(d, W_RELEASE, "device busy");
			d->retry_at = now_ms() + M.conf->busy_retry_ms;
			d->want_claim = 1;
		}
		break;
	case DM_CANCELLED:
		if (ours && d->cancelling) {
			devd_log("challenge %s cancelled on device %s",
			    d->challenge_tag, d->serial);
			d->has_claim = 0;
			d->cancelling = 0;
		}
		break;
	default:
		break;
	}
}

static void
on_notify(PGnotify *n)
{
	struct mdev	*d;
	size_t		 i;

	if (strcmp(n->relname, "device_challenge_done") == 0) {
		/* Ended by someone else (cancelled by the service, swept,
		 * or retaken after our lease ran out): stop the device. */
		for (i = 0; i < M.ndevs; i++) {
			d = M.devs[i];
			if (d->has_claim && d->wkind == W_NONE &&
			    !d->cancelling &&
			    strcmp(d->challenge_id, n->extra) == 0)
				send_cancel(d);
		}
		return;
	}
	if ((d = mdev_find(n->extra, 0)) != NULL && d->present)
		d->want_claim = 1;
}

static void
db_input(void)
{
	PGnotify	*n;

	if (M.db == NULL)
		return;
	if (PQconsumeInput(M.db) == 0 || PQstatus(M.db) != CONNECTION_OK) {
		db_drop(PQerrorMessage(M.db));
		return;
	}
	while ((n = PQnotifies(M.db)) != NULL) {
		on_notify(n);
		PQfreemem(n);
	}
}

/* Leases live while we renew them; a claim not renewed was lost. */
static void
db_renew(void)
{
	char		 lease[16];
	const char	*p[2];
	PGresult	*res;
	struct mdev	*d;
	size_t		 i;
	int		 k, held;

	snprintf(lease, sizeof(lease), "%d", M.conf->lease_seconds);
	p[0] = M.owner;
	p[1] = lease;
	res = db_exec("SELECT id FROM deviced_renew($1, $2::int) AS id", 2, p);
	if (res == NULL)
		return;
	for (i = 0; i < M.ndevs; i++) {
		d = M.devs[i];
		if (!d->has_claim || d->wkind != W_NONE || d->cancelling)
			continue;
		for (held = 0, k = 0; k < PQntuples(res) && !held; k++)
			held = strcmp(PQgetvalue(res, k, 0),
			    d->challenge_id) == 0;
		if (!held) {
			devd_log("challenge %s on device %s: lease lost",
			    d->challenge_tag, d->serial);
			send_cancel(d);
		}
	}
	PQclear(res);
}

/* Challenges nobody can answer any more end as failed. */
static void
db_sweep(void)
{
	char		 serials[DEVD_MAX_DEVICES * (DEV_SERIAL_MAX + 1) + 3];
	const char	*p[1];
	PGresult	*res;
	struct mdev	*d;
	size_t		 i, off = 0;
	int		 k;

	res = db_exec("SELECT deviced_sweep()", 0, NULL);
	if (res == NULL)
		return;
	PQclear(res);
	/* Work that arrived without a notification (expired leases). */
	serials[off++] = '{';
	for (i = 0; i < M.ndevs; i++) {
		d = M.devs[i];
		if (!d->present || !d->usable || d->has_claim)
			continue;
		off += (size_t)snprintf(serials + off, sizeof(serials) - off,
		    "%s%s", off > 1 ? "," : "", d->serial);
	}
	serials[off++] = '}';
	serials[off] = '\0';
	if (off == 2)
		return;
	p[0] = serials;
	res = db_exec("SELECT DISTINCT device_serial FROM device_challenge "
	    "WHERE device_serial = ANY($1::text[]) AND deadline > now() "
	    "AND (status = 'pending' OR (status = 'claimed' "
	    "AND lease_expires < now()))", 1, p);
	if (res == NULL)
		return;
	for (k = 0; k < PQntuples(res); k++) {
		if ((d = mdev_find(PQgetvalue(res, k, 0), 0)) != NULL)
			d->want_claim = 1;
	}
	PQclear(res);
}

/*
 * Whether the claims wait for this turn: while the USB thread has more
 * messages queued (devices answering together), their outcomes are
 * written first, so a burst of presses is not held up by a claim per
 * device in between; a wait never outlasts DB_CLAIM_DEFER_MS.
 */
static int
claims_wait(int64_t now)
{
	if (dqueue_empty(M.from_usb)) {
		M.claims_deferred = 0;
		return (0);
	}
	if (M.claims_deferred == 0)
		M.claims_deferred = now;
	return (now - M.claims_deferred < DB_CLAIM_DEFER_MS);
}

static void
db_work(void)
{
	struct mdev	*d, *want[DEVD_MAX_DEVICES];
	int64_t		 now = now_ms();
	size_t		 i, n;

	flush_writes();
	for (i = 0; i < M.ndevs && M.db != NULL; i++) {
		d = M.devs[i];
		if (d->present && !d->recorded)
			db_record(d);
	}
	if (M.db != NULL && now >= M.next_renew) {
		db_renew();
		M.next_renew = now + M.conf->lease_seconds * 1000 / 3;
	}
	if (M.db != NULL && now >= M.next_sweep) {
		db_sweep();
		M.next_sweep = now + M.conf->lease_seconds * 1000 / 3;
	}
	if (M.db == NULL || M.stopping || claims_wait(now))
		return;
	for (i = 0, n = 0; i < M.ndevs; i++) {
		d = M.devs[i];
		if (d->present && d->recorded && d->usable && d->want_claim &&
		    !d->has_claim && now >= d->retry_at)
			want[n++] = d;
	}
	if (n == 1)
		db_claim(want[0]);
	else if (n > 1)
		db_claim_batch(want, n);
}

/* At most once a second, whatever else happens. */
static void
metrics_tick(void)
{
	size_t	i;

	if (M.conf->metrics_path[0] == '\0' || now_ms() < M.next_metrics)
		return;
	M.next_metrics = now_ms() + 1000;
	M.stats.present = 0;
	for (i = 0; i < M.ndevs; i++)
		M.stats.present += M.devs[i]->present;
	M.stats.seen = (int)M.ndevs;
	M.stats.connected = M.db != NULL;
	if (devd_metrics_write(M.conf->metrics_path, M.conf->host,
	    &M.stats) != 0)
		devd_log("metrics file %s not written", M.conf->metrics_path);
}

static int
poll_timeout(void)
{
	int64_t	now = now_ms(), next = now + 1000;
	size_t	i;

	if (M.db == NULL && M.reconnect_at < next)
		next = M.reconnect_at;
	for (i = 0; i < M.ndevs; i++) {
		if (M.devs[i]->want_claim && !M.devs[i]->has_claim &&
		    M.devs[i]->retry_at > now && M.devs[i]->retry_at < next)
			next = M.devs[i]->retry_at;
		if (M.db != NULL && M.devs[i]->wkind != W_NONE &&
		    M.devs[i]->write_at < next)
			next = M.devs[i]->write_at;
	}
	return (next > now ? (int)(next - now) : 0);
}

static int
claims_held(void)
{
	size_t	i;
	int	n = 0;

	for (i = 0; i < M.ndevs; i++)
		n += M.devs[i]->has_claim;
	return (n);
}

/* SIGTERM: write what is finished, give back what is not. */
static void
db_stop(void)
{
	const char	*p[1] = { M.owner };
	PGresult	*res;
	int64_t		 end = now_ms() + DB_STOP_WAIT_MS;
	struct dmsg	*m;
	size_t		 i;

	/* One last try for every end still waiting, backoff or not. */
	for (i = 0; i < M.ndevs; i++)
		M.devs[i]->write_at = 0;
	flush_writes();
	for (i = 0; i < M.ndevs; i++) {
		if (M.devs[i]->has_claim && M.devs[i]->wkind == W_NONE &&
		    !M.devs[i]->cancelling)
			send_cancel(M.devs[i]);
	}
	if ((res = db_exec("SELECT deviced_release_all($1, 'daemon stopped')",
	    1, p)) != NULL) {
		devd_log("stopping: %s lease(s) released",
		    PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	/* Give the devices a moment to clear their displays. */
	while (claims_held() > 0 && now_ms() < end) {
		struct pollfd pfd = { M.from_usb->efd, POLLIN, 0 };

		(void)poll(&pfd, 1, 50);
		dqueue_drain_fd(M.from_usb);
		while ((m = dqueue_pop(M.from_usb)) != NULL) {
			if (m->type == DM_CANCELLED || m->type == DM_FAILED ||
			    m->type == DM_RESULT || m->type == DM_GONE) {
				struct mdev *d = mdev_find(m->serial, 0);

				if (d != NULL)
					d->has_claim = 0;
			}
			free(m);
		}
	}
}

int
devd_db_run(const struct devd_conf *conf, struct dqueue *from_usb,
    struct dqueue *to_usb, int sigfd)
{
	struct pollfd			 pfd[3];
	struct signalfd_siginfo		 si;
	struct dmsg			*m;
	uint8_t				 rnd[4];
	int				 nfd;
	size_t				 i;

	memset(&M, 0, sizeof(M));
	M.conf = conf;
	M.from_usb = from_usb;
	M.to_usb = to_usb;
	M.backoff_ms = DB_RECONNECT_MIN_MS;
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return (1);
	snprintf(M.owner, sizeof(M.owner), "%s:%ld:%02x%02x%02x%02x",
	    conf->host, (long)getpid(), rnd[0], rnd[1], rnd[2], rnd[3]);
	devd_log("started as lease owner %s", M.owner);
	(void)db_connect();
	while (!M.stopping) {
		pfd[0].fd = sigfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = from_usb->efd;
		pfd[1].events = POLLIN;
		nfd = 2;
		if (M.db != NULL) {
			pfd[2].fd = PQsocket(M.db);
			pfd[2].events = POLLIN;
			nfd = 3;
		}
		if (poll(pfd, (nfds_t)nfd, poll_timeout()) == -1 &&
		    errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				devd_log("signal %u: stopping", si.ssi_signo);
				M.stopping = 1;
			}
		}
		dqueue_drain_fd(from_usb);
		while ((m = dqueue_pop(from_usb)) != NULL) {
			on_usb(m);
			free(m);
		}
		if (M.db == NULL && now_ms() >= M.reconnect_at)
			(void)db_connect();
		db_input();
		db_work();
		metrics_tick();
	}
	db_stop();
	for (i = 0; i < M.ndevs; i++)
		free(M.devs[i]);
	if (M.db != NULL)
		PQfinish(M.db);
	return (0);
}
