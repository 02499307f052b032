/*
 * The decider: the service, never the daemon, decides a decoupled
 * payment. psd2-deviced writes the authenticator's outcome into
 * device_challenge; here the outcome's signature is verified against the
 * key recorded at enrolment, over the payment row's own fields
 * (devsig_approval_verify), the counter must exceed the device's last one
 * (devsig_counter_ok), and pis_decide() sets ACTC (raising the counter in
 * the same transaction) or RJCT with the reason.
 *
 * Which worker: one per instance, worker 1 (as housekeeping), with its
 * own connection (src/db/pgconn.c) that LISTENs device_challenge_done (an
 * outcome or a failure was written), device_changed (a device blocked
 * mid-challenge) and payment_actc (a payment to book). Every decision is
 * safe against any number of deciders (other instances): pis_decide()
 * and pis_sweep() lock the payment row and act only on status RCVD,
 * pis_book() only on ACTC, so whoever comes second changes nothing.
 *
 * A cycle is: pis_sweep() (decisions that need no signature: failures,
 * deadlines, blocked devices, outcomes written late), pis_outcomes()
 * (outcomes to verify; each verified here and decided), pis_unbooked()
 * (ACTC payments a crash or a lost notification left; each booked). One
 * cycle runs at a time; a wake-up during a cycle runs one more after it.
 * Cycles run after every (re)connect, on every notification and every
 * psd2_pis_sweep_ms, so that a payment fails on time even with every
 * daemon dead, and nothing waits for a notification lost while the
 * connection was down.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>

#include <jansson.h>

#include "common/encoding.h"
#include "common/settings.h"
#include "common/devframe.h"
#include "common/devsig.h"
#include "metrics/metrics.h"
#include "pis/booking.h"
#include "db/pgconn.h"
#include "pis/pis.h"

#define DECIDE_BATCH	64
#define DECIDE_TICK_MS	250

static const char sql_sweep[] = "SELECT pis_sweep()";
static const char sql_outcomes[] =
    "SELECT payment_id, challenge_id, outcome, counter, signature, nonce, "
    "amount_minor, currency, creditor_name, creditor_iban, changed, "
    "public_key, last_counter, device_ok, payment_xmin, challenge_xmin "
    "FROM pis_outcomes($1)";
static const char sql_cycle_end[] = "SELECT 1";

static struct {
	int		running;
	int		again;
	u_int64_t	next_sweep;
} D;

static void	decide_cycle(void);

/* PostgreSQL's text form of bytea, "\x" and hex, into exactly len bytes
 * (or at most len with *outlen set). */
static int
decide_bytea(const char *s, uint8_t *out, size_t max, size_t *outlen)
{
	size_t	n;

	if (strncmp(s, "\\x", 2) != 0)
		return (-1);
	n = strlen(s + 2);
	if (n % 2 != 0 || n / 2 > max)
		return (-1);
	if (hex_decode(s + 2, n, out, max) != (int)(n / 2))
		return (-1);
	*outlen = n / 2;
	return (0);
}

static int
decide_outcome_code(const char *s)
{
	if (strcmp(s, "approved") == 0)
		return (DEV_OUTCOME_APPROVED);
	if (strcmp(s, "declined") == 0)
		return (DEV_OUTCOME_DECLINED);
	if (strcmp(s, "timed_out") == 0)
		return (DEV_OUTCOME_TIMED_OUT);
	return (-1);
}

/*
 * The verdict on one outcome row: NULL reason for a verified approval;
 * *counter is set (>= 0) when the signature and counter verified.
 */
static const char *
decide_verify(PGresult *res, int row, long long *counter)
{
	struct dev_confirm	 c;
	uint8_t			 pub[DEV_PUBKEY_LEN], sig[DEV_SIG_MAX];
	size_t			 n, siglen;
	long long		 cnt, last;
	const char		*name, *iban, *cur;
	int			 outcome, ok;

	*counter = -1;
	if (PQgetvalue(res, row, 10)[0] == 't')
		return ("payment changed");
	if (PQgetvalue(res, row, 13)[0] != 't')
		return ("device blocked");
	memset(&c, 0, sizeof(c));
	name = PQgetvalue(res, row, 8);
	iban = PQgetvalue(res, row, 9);
	cur = PQgetvalue(res, row, 7);
	cnt = strtoll(PQgetvalue(res, row, 3), NULL, 10);
	last = strtoll(PQgetvalue(res, row, 12), NULL, 10);
	outcome = decide_outcome_code(PQgetvalue(res, row, 2));
	if (outcome == -1 || PQgetisnull(res, row, 3) || cnt < 0 ||
	    cnt > UINT32_MAX || PQgetisnull(res, row, 4) ||
	    uuid_decode(PQgetvalue(res, row, 1), c.challenge) != 0 ||
	    decide_bytea(PQgetvalue(res, row, 5), c.nonce, DEV_NONCE_LEN,
	    &n) == -1 || n != DEV_NONCE_LEN ||
	    decide_bytea(PQgetvalue(res, row, 11), pub, DEV_PUBKEY_LEN,
	    &n) == -1 || n != DEV_PUBKEY_LEN ||
	    decide_bytea(PQgetvalue(res, row, 4), sig, sizeof(sig),
	    &siglen) == -1 || strlen(cur) != 3 ||
	    strlen(name) > DEV_PAYEE_NAME_MAX || strlen(iban) > DEV_IBAN_MAX)
		return ("bad signature");
	c.amount_minor = (uint64_t)strtoll(PQgetvalue(res, row, 6), NULL, 10);
	memcpy(c.currency, cur, 4);
	memcpy(c.payee_name, name, strlen(name) + 1);
	memcpy(c.payee_iban, iban, strlen(iban) + 1);

	/* Over the payment row's fields: a payment changed after the
	 * challenge, a forged row or another key do not verify. */
	if (outcome == DEV_OUTCOME_APPROVED)
		ok = devsig_approval_verify(pub, &c, (uint32_t)cnt, sig,
		    siglen);
	else
		ok = devsig_confirm_verify(pub, &c, (uint8_t)outcome,
		    (uint8_t)dev_outcome_flags(outcome), (uint32_t)cnt, sig,
		    siglen);
	if (!ok)
		return ("bad signature");
	if (!devsig_counter_ok((uint64_t)last, (uint32_t)cnt))
		return ("counter not increasing");
	*counter = cnt;
	if (outcome == DEV_OUTCOME_DECLINED)
		return ("declined");
	if (outcome == DEV_OUTCOME_TIMED_OUT)
		return ("timed out");
	return (NULL);
}

/*
 * The decisions of one batch go to PostgreSQL in one statement, so one
 * transaction and one commit flush for every outcome that arrived
 * together (many presses at once), not one each. pis_decide() locks each
 * payment in the order of pis_outcomes() (oldest outcome first), the
 * same order in every instance.
 */
static const char sql_decide_batch[] =
    "SELECT x.p, x.r, pis_decide(x.p, x.c, x.px, x.cx, x.r, x.d, x.n) "
    "FROM jsonb_to_recordset($1::jsonb) AS x(p uuid, c uuid, px text, "
    "cx text, r text, d text, n bigint)";

/*
 * The SCA outcome of one decision in psd2_sca_total{kind="payment"}:
 * only what this decider set (not "decided" elsewhere, not "stale").
 */
static void
decide_count(const char *status, const char *why)
{
	if (strcmp(status, "ACTC") == 0)
		metrics_sca("payment", "ok");
	else if (strcmp(status, "RJCT") == 0)
		metrics_sca("payment", strcmp(why, "declined") == 0 ?
		    "denied" : "failed");
}

static void
decide_done(PGresult *res, void *arg)
{
	const char	*r, *why;
	int		 row;

	(void)arg;
	if (res == NULL) {
		D.again = 1;
		return;
	}
	for (row = 0; row < PQntuples(res); row++) {
		r = PQgetvalue(res, row, 2);
		why = PQgetisnull(res, row, 1) ? "refused at the decision" :
		    PQgetvalue(res, row, 1);
		if (strcmp(r, "stale") == 0)
			D.again = 1;
		decide_count(r, why);
		if (strcmp(r, "RJCT") == 0)
			kore_log(LOG_INFO, "pis: payment %s RJCT (%s)",
			    PQgetvalue(res, row, 0), why);
		else
			kore_log(LOG_INFO, "pis: payment %s %s",
			    PQgetvalue(res, row, 0), strcmp(r, "decided") == 0 ?
			    "already decided elsewhere" : r);
	}
}

/* One outcome's verdict as an element of the batch. */
static json_t *
decide_row(PGresult *res, int row)
{
	const char	*reason;
	long long	 cnt;

	reason = decide_verify(res, row, &cnt);
	return (json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:o}",
	    "p", PQgetvalue(res, row, 0), "c", PQgetvalue(res, row, 1),
	    "px", PQgetvalue(res, row, 14), "cx", PQgetvalue(res, row, 15),
	    "r", reason, "d", reason != NULL &&
	    strcmp(reason, "payment changed") == 0 ?
	    "payment row differs from the challenge" : NULL,
	    "n", cnt >= 0 ? json_integer(cnt) : json_null()));
}

static void
decide_batch(PGresult *res)
{
	json_t		*batch, *one;
	const char	*p[1];
	char		*text;
	int		 row;

	batch = json_array();
	for (row = 0; row < PQntuples(res); row++) {
		if ((one = decide_row(res, row)) != NULL)
			json_array_append_new(batch, one);
	}
	text = json_array_size(batch) > 0 ?
	    json_dumps(batch, JSON_COMPACT) : NULL;
	json_decref(batch);
	if (text == NULL)
		return;
	p[0] = text;
	(void)pgconn_query(sql_decide_batch, 1, p, decide_done, NULL);
	free(text);
}

static void
decide_cycle_end(PGresult *res, void *arg)
{
	(void)res;
	(void)arg;
	D.running = 0;
	if (D.again) {
		D.again = 0;
		decide_cycle();
	}
}

static void
decide_unbooked_done(void *arg)
{
	(void)arg;
	if (pgconn_query(sql_cycle_end, 0, NULL, decide_cycle_end, NULL) == -1)
		D.running = 0;
}

static void
decide_outcomes(PGresult *res, void *arg)
{
	(void)arg;
	if (res == NULL) {
		D.running = 0;
		return;
	}
	decide_batch(res);
	if (PQntuples(res) == DECIDE_BATCH)
		D.again = 1;
	/* After the decisions (one connection, queries in order). */
	if (booking_sweep(decide_unbooked_done, NULL) == -1)
		D.running = 0;
}

static void
decide_swept(PGresult *res, void *arg)
{
	const char	*p[1];
	char		 limit[16];

	(void)arg;
	if (res == NULL) {
		D.running = 0;
		return;
	}
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") != 0) {
		kore_log(LOG_INFO, "pis: sweep ended %s payment(s)",
		    PQgetvalue(res, 0, 0));
		/* Deadlines, blocked devices, failed challenges: failed SCA. */
		metrics_count_n(METRICS_SCA, "kind", "payment", "outcome",
		    "failed", strtoull(PQgetvalue(res, 0, 0), NULL, 10));
	}
	snprintf(limit, sizeof(limit), "%d", DECIDE_BATCH);
	p[0] = limit;
	if (pgconn_query(sql_outcomes, 1, p, decide_outcomes, NULL) == -1)
		D.running = 0;
}

static void
decide_cycle(void)
{
	if (!pgconn_up())
		return;
	if (D.running) {
		D.again = 1;
		return;
	}
	D.running = 1;
	D.next_sweep = kore_time_ms() + (u_int64_t)pis_settings()->sweep_ms;
	if (pgconn_query(sql_sweep, 0, NULL, decide_swept, NULL) == -1)
		D.running = 0;
}

static void
decide_connected(void)
{
	static const char *const	listen[] = {
		"LISTEN device_challenge_done",
		"LISTEN device_changed",
		"LISTEN payment_actc",
	};
	size_t				i;

	D.running = 0;
	D.again = 0;
	for (i = 0; i < sizeof(listen) / sizeof(listen[0]); i++)
		(void)pgconn_query(listen[i], 0, NULL, NULL, NULL);
	/* Whatever happened while the connection was down. */
	decide_cycle();
}

static void
decide_notify(const char *channel, const char *payload)
{
	if (strcmp(channel, "payment_actc") == 0) {
		booking_request(payload);
		return;
	}
	decide_cycle();
}

static void
decide_tick(void *arg, u_int64_t now)
{
	(void)arg;
	pgconn_tick();
	if (now >= D.next_sweep)
		decide_cycle();
}

void
pis_decider_start(void)
{
	static const struct pgconn_hooks	hooks = {
		"pis: decider",
		"psd2gate-pis",
		decide_connected,
		decide_notify,
	};

	if (worker == NULL || worker->id != 1)
		return;
	pgconn_start(settings_get("db", ""), &hooks);
	kore_timer_add(decide_tick, DECIDE_TICK_MS, NULL, 0);
}
