/*
 * psd2-deviced end to end: this program owns the umockdev testbed and the
 * emulated authenticators, starts the real daemon binary under the
 * preload, and drives it through PostgreSQL (the database named in
 * $PSD2_DEVTEST_DB, prepared by tests/device/run.sh). It also runs
 * psd2ctl's device commands (ctl_device) against the same database.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "common/settings.h"
#include "ctl_device.h"
#include "devsig.h"
#include "encoding.h"
#include "devtest.h"

#define WAIT_MS		20000	/* an upper bound: every wait polls */
#define DAEMONS_MAX	2
#define OWNED_MAX	32

struct t {
	struct usbemu	*emu;
	EVP_PKEY	*mfr;
	char		*dir;
	struct fw	*fws[32];
	size_t		 nfws;
	PGconn		*db;
	pid_t		 daemons[DAEMONS_MAX];
	char		 conf[DAEMONS_MAX][512];
	char		*owned[OWNED_MAX];	/* freed by test_teardown */
	size_t		 nowned;
};

static const char	*daemon_path;
static unsigned int	 serial_seq;

static PGresult *
q(struct t *t, const char *sql, int n, ...)
{
	const char	*p[8];
	va_list		 ap;
	int		 i;
	PGresult	*res;

	va_start(ap, n);
	for (i = 0; i < n && i < 8; i++)
		p[i] = va_arg(ap, const char *);
	va_end(ap);
	res = PQexecParams(t->db, sql, n, NULL, p, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK &&
	    PQresultStatus(res) != PGRES_COMMAND_OK)
		fprintf(stderr, "sql: %s", PQerrorMessage(t->db));
	return (res);
}

/* The first column of the first row, or "" (copied; the caller frees). */
static char *
q1_dup(struct t *t, const char *sql, int n, const char *a, const char *b)
{
	PGresult	*res = q(t, sql, n, a, b);
	char		*v;

	v = strdup(PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return (v);
}

/*
 * Hands a string to the test's teardown, which frees it: a failed
 * assertion leaves the test function at once, before any free().
 */
static char *
own(struct t *t, char *s)
{
	if (s == NULL || t->nowned == OWNED_MAX) {
		free(s);
		fail_msg("own: %s", s == NULL ? "out of memory" : "too many");
	}
	t->owned[t->nowned++] = s;
	return (s);
}

/* As q1_dup(), owned by the test. */
static char *
q1(struct t *t, const char *sql, int n, const char *a, const char *b)
{
	return (own(t, q1_dup(t, sql, n, a, b)));
}

/* Polls until the query's first value equals want. */
static int
wait_value(struct t *t, const char *sql, const char *arg, const char *want)
{
	int64_t	end = devtest_now_ms() + WAIT_MS;
	char	*v;
	int	 ok = 0;

	while (!ok && devtest_now_ms() < end) {
		v = q1_dup(t, sql, arg ? 1 : 0, arg, NULL);
		ok = v != NULL && strcmp(v, want) == 0;
		free(v);
		if (!ok)
			usleep(20000);
	}
	return (ok);
}

static int
wait_pending(struct fw *fw, int want)
{
	int64_t	end = devtest_now_ms() + WAIT_MS;

	while (fw_pending(fw) != want && devtest_now_ms() < end)
		usleep(10000);
	return (fw_pending(fw) == want);
}

static void
write_conf(struct t *t, int i, const char *host, int lease)
{
	FILE	*fp;
	char	 ca[1024], cwd[512];

	if (devtest_ca_path()[0] == '/')
		snprintf(ca, sizeof(ca), "%s", devtest_ca_path());
	else
		snprintf(ca, sizeof(ca), "%s/%s", getcwd(cwd, sizeof(cwd)),
		    devtest_ca_path());
	snprintf(t->conf[i], sizeof(t->conf[i]), "%s/deviced%d.conf", t->dir,
	    i);
	assert_non_null(fp = fopen(t->conf[i], "w"));
	fprintf(fp, "psd2_db %s\n"
	    "psd2_device_vidpid 1209:0001\n"
	    "psd2_device_manufacturer_ca %s\n"
	    "psd2_device_host %s\n"
	    "psd2_device_lease_seconds %d\n"
	    "psd2_device_busy_retry_ms 200\n",
	    getenv("PSD2_DEVTEST_DB"), ca, host, lease);
	fclose(fp);
}

static pid_t
start_daemon(struct t *t, int i, const char *host, int lease)
{
	char	 log[600];
	pid_t	 pid;
	int	 fd;

	write_conf(t, i, host, lease);
	snprintf(log, sizeof(log), "%s/deviced%d.log", t->dir, i);
	if ((pid = fork()) == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(daemon_path, daemon_path, "--foreground", "--conf",
		    t->conf[i], (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	t->daemons[i] = pid;
	return (pid);
}

/* Returns the exit status, or -1 if it had to be killed. */
static int
stop_daemon(struct t *t, int i, int sig)
{
	int64_t	end = devtest_now_ms() + 5000;
	int	status;

	if (t->daemons[i] <= 0)
		return (0);
	kill(t->daemons[i], sig);
	while (devtest_now_ms() < end) {
		if (waitpid(t->daemons[i], &status, WNOHANG) == t->daemons[i]) {
			t->daemons[i] = 0;
			return (WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status));
		}
		usleep(10000);
	}
	kill(t->daemons[i], SIGKILL);
	waitpid(t->daemons[i], &status, 0);
	t->daemons[i] = 0;
	return (-1);
}

static struct fw *
new_device(struct t *t, char *serial, size_t len)
{
	struct fw	*fw;

	snprintf(serial, len, "E2E%05u%05u", (unsigned)getpid() % 100000,
	    ++serial_seq);
	assert_true(t->nfws < sizeof(t->fws) / sizeof(t->fws[0]));
	assert_non_null(fw = devtest_fw(t->emu, serial, t->dir, t->mfr));
	t->fws[t->nfws++] = fw;
	assert_int_equal(fw_plug(fw), 0);
	return (fw);
}

static int
ctl(const char *a, const char *b, const char *c, PGconn *db)
{
	char	*argv[4] = { (char *)a, (char *)b, (char *)c, NULL };
	int	 argc = c != NULL ? 3 : b != NULL ? 2 : 1;

	return (ctl_device(db, argc, argv));
}

/* Four eyes: psd2ctl requests the assignment, a staff member approves. */
static void
assign(struct t *t, const char *serial)
{
	assert_int_equal(ctl("assign", serial, "anna", t->db), 0);
	assert_string_equal(q1(t, "SELECT staff_device_action('staff:e2e', "
	    "'assign_approve', $1, NULL)", 1, serial, NULL), "ok");
}

/* Waits for the daemon to record the device, then enrols and assigns. */
static void
enrol(struct t *t, const char *serial)
{
	assert_true(wait_value(t, "SELECT status FROM device WHERE serial = $1",
	    serial, "not_enrolled"));
	assert_int_equal(ctl("enrol", serial, NULL, t->db), 0);
	assign(t, serial);
}

static char *
add_challenge_in(struct t *t, const char *serial, int seconds,
    const char *currency)
{
	char	secs[16];
	const char *p[3] = { serial, secs, currency };
	PGresult *res;
	char	*v;

	snprintf(secs, sizeof(secs), "%d", seconds);
	res = PQexecParams(t->db, "INSERT INTO device_challenge "
	    "(device_serial, psu_id, nonce, amount_minor, currency, payee_name, "
	    "payee_iban, deadline) SELECT $1, id, decode(md5(random()::text) "
	    "|| md5(random()::text), 'hex'), 123456, $3, 'Zoë Müller', "
	    "'NL91ABNA0417164300', now() + make_interval(secs => $2::int) "
	    "FROM psu WHERE username = 'anna' RETURNING id", 3, NULL, p, NULL,
	    NULL, 0);
	v = strdup(PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return (own(t, v));
}

static char *
add_challenge(struct t *t, const char *serial, int seconds)
{
	return (add_challenge_in(t, serial, seconds, "EUR"));
}

/* What the service does with the counter it has just accepted. */
static int
devsig_exhausted_str(const char *counter)
{
	return (devsig_counter_exhausted(strtoull(counter, NULL, 10)));
}

static const char *status_sql =
    "SELECT status FROM device_challenge WHERE id = $1";

/* Reads the stored outcome and verifies it as the service will. */
static int
verify_outcome(struct t *t, const char *id, uint8_t outcome)
{
	PGresult		*res;
	struct dev_confirm	 c;
	uint8_t			 pub[DEV_PUBKEY_LEN], sig[DEV_SIG_MAX];
	size_t			 i, siglen;
	const char		*s;
	uint32_t		 counter;
	int			 ok;

	res = q(t, "SELECT encode(d.public_key, 'hex'), encode(c.nonce, "
	    "'hex'), c.amount_minor, c.currency, c.payee_name, c.payee_iban, "
	    "c.counter, encode(c.signature, 'hex'), d.last_counter "
	    "FROM device_challenge c JOIN device d ON d.serial = "
	    "c.device_serial WHERE c.id = $1", 1, id);
	if (PQntuples(res) != 1) {
		fprintf(stderr, "verify_outcome: no challenge %s\n", id);
		PQclear(res);
		return (0);
	}
	memset(&c, 0, sizeof(c));
	assert_int_equal(uuid_decode(id, c.challenge), 0);
	for (i = 0; i < DEV_PUBKEY_LEN; i++)
		sscanf(PQgetvalue(res, 0, 0) + 2 * i, "%2hhx", &pub[i]);
	for (i = 0; i < DEV_NONCE_LEN; i++)
		sscanf(PQgetvalue(res, 0, 1) + 2 * i, "%2hhx", &c.nonce[i]);
	c.amount_minor = strtoull(PQgetvalue(res, 0, 2), NULL, 10);
	snprintf(c.currency, sizeof(c.currency), "%s", PQgetvalue(res, 0, 3));
	snprintf(c.payee_name, sizeof(c.payee_name), "%s",
	    PQgetvalue(res, 0, 4));
	snprintf(c.payee_iban, sizeof(c.payee_iban), "%s",
	    PQgetvalue(res, 0, 5));
	counter = (uint32_t)strtoul(PQgetvalue(res, 0, 6), NULL, 10);
	s = PQgetvalue(res, 0, 7);
	siglen = strlen(s) / 2;
	for (i = 0; i < siglen && i < DEV_SIG_MAX; i++)
		sscanf(s + 2 * i, "%2hhx", &sig[i]);
	/* An approval as the service will check it: UV required. */
	if (outcome == DEV_OUTCOME_APPROVED)
		ok = devsig_approval_verify(pub, &c, counter, sig, siglen);
	else
		ok = devsig_confirm_verify(pub, &c, outcome,
		    (uint8_t)dev_outcome_flags(outcome), counter, sig, siglen);
	ok = ok && devsig_counter_ok(strtoull(PQgetvalue(res, 0, 8), NULL,
	    10), counter);
	/* What the PSU saw is bound: one cent more does not verify. */
	c.amount_minor++;
	if (devsig_confirm_verify(pub, &c, outcome,
	    (uint8_t)dev_outcome_flags(outcome), counter, sig, siglen))
		ok = 0;
	PQclear(res);
	return (ok);
}

static int
group_setup(void **state)
{
	struct t	*t = calloc(1, sizeof(*t));
	char		 err[256];

	assert_non_null(t);
	assert_non_null(t->emu = usbemu_new());
	assert_non_null(t->mfr = devtest_manufacturer_key());
	assert_non_null(t->dir = devtest_tmpdir());
	assert_non_null(getenv("PSD2_DEVTEST_DB"));
	t->db = PQconnectdb(getenv("PSD2_DEVTEST_DB"));
	assert_int_equal(PQstatus(t->db), CONNECTION_OK);
	/* psd2ctl's settings: the CA keys for enrolment. */
	write_conf(t, 0, "e2e-ctl", 30);
	if (settings_load(t->conf[0], NULL, err, sizeof(err)) != 0)
		fail_msg("settings: %s", err);
	*state = t;
	return (0);
}

static int
group_teardown(void **state)
{
	struct t	*t = *state;
	size_t		 i;

	if (t == NULL)
		return (0);
	for (i = 0; i < t->nfws; i++)
		fw_unplug(t->fws[i]);
	usbemu_free(t->emu);
	for (i = 0; i < t->nfws; i++)
		fw_free(t->fws[i]);
	EVP_PKEY_free(t->mfr);
	PQfinish(t->db);
	settings_free();
	devtest_rmdir(t->dir);
	free(t);
	return (0);
}

static int
test_setup(void **state)
{
	struct t	*t = *state;

	PQclear(q(t, "DELETE FROM device_challenge", 0));
	PQclear(q(t, "DELETE FROM device_assignment", 0));
	PQclear(q(t, "DELETE FROM device", 0));
	return (0);
}

/* Every test leaves no daemon and no device behind. */
static int
test_teardown(void **state)
{
	struct t	*t = *state;
	size_t		 i;

	for (i = 0; i < DAEMONS_MAX; i++)
		(void)stop_daemon(t, (int)i, SIGKILL);
	for (i = 0; i < t->nfws; i++)
		fw_unplug(t->fws[i]);
	for (i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	t->nowned = 0;
	return (0);
}

#define TOGETHER	6

/*
 * Devices answering together: their challenges arrive in one commit (so
 * the daemon claims them in one statement) and, while the first write
 * waits for a row lock, the other answers queue up and are written in
 * one pipelined transaction: one xmin for all of them. One of those was
 * cancelled by the service meanwhile: its write is refused, the others
 * still commit, and each outcome verifies as the service checks it.
 */
static void
test_outcomes_together(void **state)
{
	struct t	*t = *state;
	struct fw	*fws[TOGETHER];
	char		 s[TOGETHER][32], user[48], *ids[TOGETHER];
	const char	*p[TOGETHER];
	PGconn		*locker;
	PGresult	*res;
	int		 i;

	start_daemon(t, 0, "e2e-a", 30);
	for (i = 0; i < TOGETHER; i++) {
		fws[i] = new_device(t, s[i], sizeof(s[i]));
		assert_true(wait_value(t, "SELECT status FROM device WHERE "
		    "serial = $1", s[i], "not_enrolled"));
		assert_int_equal(ctl("enrol", s[i], NULL, t->db), 0);
		snprintf(user, sizeof(user), "together-%s", s[i]);
		PQclear(q(t, "INSERT INTO psu (username) VALUES ($1) "
		    "ON CONFLICT DO NOTHING", 1, user));
		assert_int_equal(ctl("assign", s[i], user, t->db), 0);
		assert_string_equal(q1(t, "SELECT staff_device_action("
		    "'staff:e2e', 'assign_approve', $1, NULL)", 1, s[i], NULL),
		    "ok");
		p[i] = s[i];
	}
	res = PQexecParams(t->db, "INSERT INTO device_challenge "
	    "(device_serial, psu_id, nonce, amount_minor, currency, "
	    "payee_name, payee_iban, deadline) SELECT d.serial, d.psu_id, "
	    "decode(md5(random()::text) || md5(random()::text), 'hex'), 4200, "
	    "'EUR', 'Zoë Müller', 'NL91ABNA0417164300', now() + "
	    "interval '30 s' FROM device d WHERE d.serial = ANY(ARRAY[$1, $2, "
	    "$3, $4, $5, $6]) ORDER BY d.serial RETURNING id, device_serial",
	    TOGETHER, NULL, p, NULL, NULL, 0);
	assert_int_equal(PQntuples(res), TOGETHER);
	for (i = 0; i < TOGETHER; i++) {
		assert_string_equal(PQgetvalue(res, i, 1), s[i]);
		ids[i] = own(t, strdup(PQgetvalue(res, i, 0)));
	}
	PQclear(res);
	for (i = 0; i < TOGETHER; i++) {
		assert_true(wait_pending(fws[i], 1));
		assert_int_equal(fw_pin(fws[i], FW_DEFAULT_PIN), FW_PIN_OK);
	}
	/* The first end's write waits for this row lock (lock_timeout is
	 * 2 s); the others queue meanwhile. */
	locker = PQconnectdb(getenv("PSD2_DEVTEST_DB"));
	assert_int_equal(PQstatus(locker), CONNECTION_OK);
	PQclear(PQexec(locker, "BEGIN"));
	res = PQexecParams(locker, "SELECT 1 FROM device_challenge WHERE id = "
	    "$1 FOR UPDATE", 1, NULL, (const char *const *)&ids[0], NULL,
	    NULL, 0);
	assert_int_equal(PQntuples(res), 1);
	PQclear(res);
	assert_int_equal(fw_press(fws[0]), 0);
	usleep(200000);
	for (i = 1; i < TOGETHER; i++)
		assert_int_equal(fw_press(fws[i]), 0);
	PQclear(q(t, "UPDATE device_challenge SET status = 'cancelled', "
	    "lease_owner = NULL, lease_expires = NULL WHERE id = $1", 1,
	    ids[TOGETHER - 1]));
	usleep(500000);
	PQclear(PQexec(locker, "COMMIT"));
	PQfinish(locker);
	for (i = 0; i < TOGETHER - 1; i++) {
		assert_true(wait_value(t, "SELECT status || ' ' || outcome "
		    "FROM device_challenge WHERE id = $1", ids[i],
		    "done approved"));
		assert_true(verify_outcome(t, ids[i], DEV_OUTCOME_APPROVED));
	}
	assert_string_equal(q1(t, status_sql, 1, ids[TOGETHER - 1], NULL),
	    "cancelled");
	/* One transaction for the answers that waited together. */
	res = q(t, "SELECT count(DISTINCT xmin::text) FROM device_challenge "
	    "WHERE id = ANY(ARRAY[$1, $2, $3, $4]::uuid[])", 4, ids[1], ids[2],
	    ids[3], ids[4]);
	assert_string_equal(PQgetvalue(res, 0, 0), "1");
	PQclear(res);
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_first_seen_enrol_assign_block(void **state)
{
	struct t	*t = *state;
	struct fw	*bad;
	char		 s1[32], s2[32], *v;
	PGresult	*res;
	ExecStatusType	 st;

	(void)new_device(t, s1, sizeof(s1));
	bad = new_device(t, s2, sizeof(s2));
	fw_set_fault(bad, FW_FAULT_BAD_ATTEST);
	start_daemon(t, 0, "e2e-a", 30);
	assert_true(wait_value(t, "SELECT status || ' ' || attestation_ok || "
	    "' ' || host FROM device WHERE serial = $1", s1,
	    "not_enrolled true e2e-a"));
	assert_true(wait_value(t, "SELECT attestation_ok::text FROM device "
	    "WHERE serial = $1", s2, "false"));
	/* Not enrolled: no challenge can even be created for it. */
	res = q(t, "INSERT INTO device_challenge (device_serial, psu_id, nonce, "
	    "amount_minor, currency, payee_name, payee_iban, deadline) SELECT "
	    "$1, id, decode(repeat('00', 32), 'hex'), 1, 'EUR', 'x', "
	    "'DE89370400440532013000', now() + interval '1 minute' FROM psu",
	    1, s1);
	st = PQresultStatus(res);
	PQclear(res);
	assert_int_equal(st, PGRES_FATAL_ERROR);
	assert_int_equal(ctl("enrol", s2, NULL, t->db), 1);
	assert_int_equal(ctl("enrol", "NOSUCH", NULL, t->db), 1);
	assert_int_equal(ctl("enrol", s1, NULL, t->db), 0);
	assert_int_equal(ctl("assign", s1, "nobody", t->db), 1);
	/* The requester cannot approve their own request. */
	assert_int_equal(ctl("assign", s1, "anna", t->db), 0);
	assert_int_equal(ctl("approve", s1, NULL, t->db), 1);
	assert_string_equal(q1(t, "SELECT staff_device_action('staff:e2e', "
	    "'assign_approve', $1, NULL)", 1, s1, NULL), "ok");
	assert_int_equal(ctl("list", NULL, NULL, t->db), 0);
	assert_int_equal(ctl("frobnicate", NULL, NULL, t->db), 2);
	v = q1(t, "SELECT d.status || ' ' || p.username FROM device d JOIN psu p "
	    "ON p.id = d.psu_id WHERE serial = $1", 1, s1, NULL);
	assert_string_equal(v, "active anna");
	v = q1(t, "SELECT status FROM device WHERE serial = $1", 1, s2, NULL);
	assert_string_equal(v, "not_enrolled");
	/* Blocking fails what is open and stops new work. */
	v = add_challenge(t, s1, 60);
	assert_int_equal(ctl("block", s1, NULL, t->db), 0);
	assert_true(wait_value(t, "SELECT status || ' ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", v, "failed device blocked"));
	assert_int_equal(ctl("enrol", s1, NULL, t->db), 1);
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_confirm_end_to_end(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], disp[FW_DISPLAY_MAX], *id;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	fw_display(fw, disp, sizeof(disp));
	/* Each field on its own labelled line, the prompt last (5.3.3). */
	assert_string_equal(disp, "AMOUNT 1 234.56 EUR\nPAYEE Zoë Müller\n"
	    "IBAN NL91 ABNA 0417 1643 00\nENTER PIN [decline]");
	/* Confirm needs the PIN first (knowledge, then possession). */
	assert_int_equal(fw_press(fw), -2);
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, "SELECT status || ' ' || outcome || ' ' || "
	    "attempts FROM device_challenge WHERE id = $1", id,
	    "done approved 1"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	assert_false(verify_outcome(t, id, DEV_OUTCOME_DECLINED));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_decline_and_timeout(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(fw_decline(fw), 0);
	assert_true(wait_value(t, "SELECT status || ' ' || outcome FROM "
	    "device_challenge WHERE id = $1", id, "done declined"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_DECLINED));
	/*
	 * Nobody presses: the device's own timeout answers, signed, and
	 * before the deadline (its timeout is the seconds left less one).
	 */
	id = add_challenge(t, s, 4);
	assert_true(wait_pending(fw, 1));
	assert_true(wait_value(t, "SELECT status || ' ' || outcome || ' ' || "
	    "(finished_at < deadline) FROM device_challenge WHERE id = $1", id,
	    "done timed_out true"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_TIMED_OUT));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_unplug_and_replug(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	fw_unplug(fw);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: device unplugged"));
	/* Plugged back in (as a hand does, a moment later), it is found
	 * again and works. */
	usleep(300000);
	assert_int_equal(fw_plug(fw), 0);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
fault_case(struct t *t, struct fw *fw, const char *s, enum fw_fault fault,
    const char *want)
{
	char	*id;

	fw_set_fault(fw, fault);
	id = add_challenge(t, s, 30);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id, want));
	fw_set_fault(fw, FW_FAULT_NONE);
}

static void
test_malformed_stall_busy(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id, *v;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	fault_case(t, fw, s, FW_FAULT_BAD_FRAME, "failed: malformed answer");
	fault_case(t, fw, s, FW_FAULT_STALL, "failed: endpoint stalled");
	/* Busy: released and retried until the device takes it. */
	fw_set_fault(fw, FW_FAULT_BUSY);
	id = add_challenge(t, s, 30);
	assert_true(wait_value(t, "SELECT (attempts >= 2 AND last_error = "
	    "'device busy')::text FROM device_challenge WHERE id = $1", id,
	    "true"));
	fw_set_fault(fw, FW_FAULT_NONE);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	v = q1(t, "SELECT outcome FROM device_challenge WHERE id = $1", 1, id,
	    NULL);
	assert_string_equal(v, "approved");
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_two_daemons_one_challenge(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id, *v;

	fw = new_device(t, s, sizeof(s));
	/*
	 * Both daemons must hold the device before the challenge exists:
	 * only then is the loser a contender for the claim. Each records
	 * the device (host column) after its INFO exchange, and an idle
	 * daemon sends the device nothing more. Without this wait, a slow
	 * daemon (ASan) sent its INFO after the winner's CONFIRM, and the
	 * emulator, which lets two processes claim the interface (the
	 * kernel would refuse the second with EBUSY), routes a later
	 * answer to the process that wrote last: the RESULT went to the
	 * loser and the winner never got it.
	 */
	start_daemon(t, 0, "e2e-a", 30);
	assert_true(wait_value(t, "SELECT status || ' ' || host FROM device "
	    "WHERE serial = $1", s, "not_enrolled e2e-a"));
	start_daemon(t, 1, "e2e-b", 30);
	assert_true(wait_value(t, "SELECT status || ' ' || host FROM device "
	    "WHERE serial = $1", s, "not_enrolled e2e-b"));
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	/* Give the loser every chance to (wrongly) send a second CONFIRM. */
	usleep(300000);
	assert_int_equal(fw_confirms_seen(fw), 1);
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	v = q1(t, "SELECT attempts || ' ' || outcome FROM device_challenge "
	    "WHERE id = $1", 1, id, NULL);
	assert_string_equal(v, "1 approved");
	usleep(200000);
	assert_int_equal(fw_confirms_seen(fw), 1);
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
	assert_int_equal(stop_daemon(t, 1, SIGTERM), 0);
}

/* A challenge on the device's display, its daemon (lease 3 s) killed. */
static struct fw *
shown_then_killed(struct t *t, char *s, size_t len, char **id)
{
	struct fw	*fw;

	fw = new_device(t, s, len);
	start_daemon(t, 0, "e2e-a", 3);
	enrol(t, s);
	*id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(stop_daemon(t, 0, SIGKILL), 128 + SIGKILL);
	return (fw);
}

static void
test_killed_lease_retaken(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id, *v;
	int64_t		 killed;

	fw = shown_then_killed(t, s, sizeof(s), &id);
	killed = devtest_now_ms();
	v = q1(t, "SELECT status FROM device_challenge WHERE id = $1", 1, id,
	    NULL);
	assert_string_equal(v, "claimed");
	start_daemon(t, 1, "e2e-b", 3);
	assert_true(wait_value(t, "SELECT attempts::text FROM device_challenge "
	    "WHERE id = $1", id, "2"));
	/* Not before the dead daemon's lease ran out. */
	assert_true(devtest_now_ms() - killed >= 2000);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, "SELECT status || ' ' || outcome || ' ' || "
	    "(lease_owner IS NULL) FROM device_challenge WHERE id = $1", id,
	    "done approved true"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	assert_int_equal(stop_daemon(t, 1, SIGTERM), 0);
}

/*
 * ERROR CONFLICT leaves the first content on the display (5.3); the host
 * then sends CANCEL, so the PSU cannot approve a payment already ended.
 * The content changes under a dead daemon's claim; the daemon that
 * retakes it is refused and clears the display.
 */
static void
test_conflict_cancelled(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;

	fw = shown_then_killed(t, s, sizeof(s), &id);
	PQclear(q(t, "UPDATE device_challenge SET amount_minor = 999 "
	    "WHERE id = $1", 1, id));
	start_daemon(t, 1, "e2e-b", 3);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: device refused: challenge changed"));
	assert_true(wait_pending(fw, 0));
	assert_int_equal(devtest_approve(fw), -1);
	assert_int_equal(stop_daemon(t, 1, SIGTERM), 0);
}

/* INFO with a public key that is not a point on P-256: never recorded,
 * never used (5.2); a good device beside it is. */
static void
test_key_not_on_curve(void **state)
{
	struct t	*t = *state;
	struct fw	*bad;
	char		 s[32], good[32];

	bad = new_device(t, s, sizeof(s));
	fw_set_fault(bad, FW_FAULT_BAD_KEY);
	(void)new_device(t, good, sizeof(good));
	start_daemon(t, 0, "e2e-a", 30);
	assert_true(wait_value(t, "SELECT status FROM device WHERE serial = $1",
	    good, "not_enrolled"));
	usleep(500000);
	assert_string_equal(q1(t, "SELECT count(*)::text FROM device WHERE "
	    "serial = $1", 1, s, NULL), "0");
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_sigterm_releases_lease(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id, *v;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
	v = q1(t, "SELECT status || ' ' || (lease_owner IS NULL) || ' ' || "
	    "last_error FROM device_challenge WHERE id = $1", 1, id, NULL);
	assert_string_equal(v, "pending true daemon stopped");
	/* The device was told: its display no longer asks. */
	assert_true(wait_pending(fw, 0));
	/* The next daemon takes it up at once. */
	start_daemon(t, 1, "e2e-b", 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	assert_int_equal(stop_daemon(t, 1, SIGTERM), 0);
}

static void
kill_daemon_connections(struct t *t)
{
	PGresult	*res;
	ExecStatusType	 st;
	int		 n = 0;

	res = q(t, "SELECT count(pg_terminate_backend(pid)) FROM "
	    "pg_stat_activity WHERE application_name = 'psd2-deviced' "
	    "AND datname = current_database()", 0);
	if ((st = PQresultStatus(res)) == PGRES_TUPLES_OK)
		n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	assert_int_equal(st, PGRES_TUPLES_OK);
	assert_true(n >= 1);
}

static void
test_database_restart(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	/* The connection drops while a confirmation is on the display; the
	 * outcome is kept and written after the reconnect. */
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	kill_daemon_connections(t);
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	/* Work queued while it was away is found after the reconnect. */
	kill_daemon_connections(t);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

static void
test_expired_without_device(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 3);
	enrol(t, s);
	fw_unplug(fw);
	id = add_challenge(t, s, 2);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: deadline passed without an answer"));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

/*
 * The PIN's retry counter: five wrong PINs end the challenge at once
 * ("device refused: PIN locked") and every later one, until staff reset
 * the PIN with the PUK on the device itself.
 */
static void
test_pin_lock_and_staff_reset(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;
	int		 i;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	for (i = 0; i < DEV_PIN_TRIES - 1; i++)
		assert_int_equal(fw_pin(fw, "0000"), FW_PIN_WRONG);
	assert_int_equal(fw_press(fw), -2);
	assert_int_equal(fw_pin(fw, "0000"), FW_PIN_LOCKED);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: device refused: PIN locked"));
	assert_int_equal(fw_pending(fw), 0);
	id = add_challenge(t, s, 30);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: device refused: PIN locked"));
	assert_int_equal(fw_unlock(fw, "87654321", "4321"), FW_PIN_WRONG);
	assert_int_equal(fw_unlock(fw, FW_DEFAULT_PUK, "4321"), FW_PIN_OK);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(fw_pin(fw, FW_DEFAULT_PIN), FW_PIN_WRONG);
	assert_int_equal(fw_pin(fw, "4321"), FW_PIN_OK);
	assert_int_equal(fw_press(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

/*
 * A device that approves without checking the PIN (fault nouv) and
 * claims UV in its RESULT: the outcome is stored as the daemon got it,
 * and the service's check refuses it.
 */
static void
test_approval_without_uv_refused(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id;

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	fw_set_fault(fw, FW_FAULT_NO_UV);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(fw_press(fw), 0);
	assert_true(wait_value(t, "SELECT status || ' ' || outcome FROM "
	    "device_challenge WHERE id = $1", id, "done approved"));
	assert_false(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

/* A currency the device cannot display fails at once, nothing shown. */
static void
test_currency_not_displayable(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id, disp[FW_DISPLAY_MAX];

	fw = new_device(t, s, sizeof(s));
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge_in(t, s, 30, "XAU");
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: device refused: currency not displayable"));
	assert_int_equal(fw_pending(fw), 0);
	id = add_challenge_in(t, s, 30, "JPY");
	assert_true(wait_pending(fw, 1));
	fw_display(fw, disp, sizeof(disp));
	assert_non_null(strstr(disp, "AMOUNT 123 456 JPY\nPAYEE "));
	assert_int_equal(fw_decline(fw), 0);
	assert_true(wait_value(t, status_sql, id, "done"));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

/*
 * Counter exhaustion: 2^32 - 1 is used once; then the device refuses
 * (no BUSY loop), and the service sees a device to replace.
 */
static void
test_counter_exhausted(void **state)
{
	struct t	*t = *state;
	struct fw	*fw;
	char		 s[32], *id, *v;

	fw = new_device(t, s, sizeof(s));
	fw_set_counter(fw, UINT32_MAX - 1);
	start_daemon(t, 0, "e2e-a", 30);
	enrol(t, s);
	id = add_challenge(t, s, 30);
	assert_true(wait_pending(fw, 1));
	assert_int_equal(devtest_approve(fw), 0);
	assert_true(wait_value(t, "SELECT status || ' ' || counter FROM "
	    "device_challenge WHERE id = $1", id, "done 4294967295"));
	assert_true(verify_outcome(t, id, DEV_OUTCOME_APPROVED));
	v = q1(t, "SELECT counter FROM device_challenge WHERE id = $1", 1, id,
	    NULL);
	assert_true(devsig_exhausted_str(v));
	id = add_challenge(t, s, 30);
	assert_true(wait_value(t, "SELECT status || ': ' || failure_reason "
	    "FROM device_challenge WHERE id = $1", id,
	    "failed: device refused: counter exhausted"));
	assert_int_equal(stop_daemon(t, 0, SIGTERM), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_first_seen_enrol_assign_block, test_setup,
		    test_teardown),
		cmocka_unit_test_setup_teardown(test_outcomes_together,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_confirm_end_to_end,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_decline_and_timeout,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_unplug_and_replug,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_stall_busy,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_two_daemons_one_challenge,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_killed_lease_retaken,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_conflict_cancelled,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_key_not_on_curve,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_releases_lease,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_database_restart,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_expired_without_device,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_pin_lock_and_staff_reset,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(
		    test_approval_without_uv_refused, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_currency_not_displayable,
		    test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_counter_exhausted,
		    test_setup, test_teardown),
	};

	if ((daemon_path = getenv("PSD2_DEVICED")) == NULL)
		daemon_path = "build/bin/psd2-deviced";
	return (cmocka_run_group_tests_name("device-e2e", tests, group_setup,
	    group_teardown));
}
