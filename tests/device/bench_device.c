/*
 * Device figures (make bench-device, not a test): 50 emulated
 * authenticators on one psd2-deviced. Prints the time from a confirm
 * press to the outcome committed in PostgreSQL (seen as the commit's
 * NOTIFY on device_challenge_done), and the daemon's CPU while idle.
 * Each round every device shows a payment and has its PIN entered (the
 * keypad talks to no one); then the confirm buttons are pressed at random
 * moments within BENCH_SPREAD_MS, or with 0 all at once: the emulator
 * presses them back to back, as fast as it can sign and send, and each
 * press is timed from its own moment. A thread of its own takes the
 * NOTIFYs as they come, so that pressing never delays the reading.
 * Environment: PSD2_DEVTEST_DB, PSD2_DEVICED, PSD2_DEV_TESTKEYS,
 * BENCH_DEVICES (50), BENCH_ROUNDS (10), BENCH_IDLE_SECONDS (10).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "devsig.h"
#include "devtest.h"

#define BENCH_MAX	256

static PGconn	*db;

/* What the NOTIFY thread shares with the pressing one. */
static struct {
	pthread_mutex_t	 lock;
	PGconn		*db;
	char		 ids[BENCH_MAX][40];
	int64_t		 seen[BENCH_MAX];	/* 0: not yet */
	int		 n;
	int		 done;
	int		 stop;
} L = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
die(const char *what)
{
	fprintf(stderr, "bench: %s %s\n", what, db ? PQerrorMessage(db) : "");
	exit(1);
}

static PGresult *
sql(const char *q, int n, const char *const *p)
{
	PGresult	*res = PQexecParams(db, q, n, NULL, p, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK &&
	    PQresultStatus(res) != PGRES_COMMAND_OK)
		die(q);
	return (res);
}

static int64_t
now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* Stamps each round's NOTIFYs the moment they arrive. */
static void *
listener(void *arg)
{
	struct pollfd	 pfd;
	PGnotify	*n;
	int64_t		 now;
	int		 i, stop = 0;

	(void)arg;
	while (!stop) {
		pfd.fd = PQsocket(L.db);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 20);
		now = now_us();
		if (PQconsumeInput(L.db) == 0)
			die("listener");
		pthread_mutex_lock(&L.lock);
		while ((n = PQnotifies(L.db)) != NULL) {
			for (i = 0; i < L.n; i++) {
				if (L.seen[i] == 0 && strcmp(L.ids[i],
				    n->extra) == 0) {
					L.seen[i] = now;
					L.done++;
				}
			}
			PQfreemem(n);
		}
		stop = L.stop;
		pthread_mutex_unlock(&L.lock);
	}
	return (NULL);
}

static int
listener_done(void)
{
	int	n;

	pthread_mutex_lock(&L.lock);
	n = L.done;
	pthread_mutex_unlock(&L.lock);
	return (n);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

static double
cpu_seconds(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	unsigned long	 ut, st;
	FILE		*fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL || fgets(buf, sizeof(buf), fp) ==
	    NULL)
		die("stat");
	fclose(fp);
	p = strrchr(buf, ')') + 2;
	if (sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		die("stat fields");
	return ((double)(ut + st) / (double)sysconf(_SC_CLK_TCK));
}

/* One challenge per device, shown and its PIN entered. */
static void
round_prepare(struct fw **fws, char (*serials)[32], int ndev)
{
	PGresult	*res;
	int64_t		 end;
	int		 i, k;

	pthread_mutex_lock(&L.lock);
	L.n = 0;
	L.done = 0;
	pthread_mutex_unlock(&L.lock);
	for (i = 0; i < ndev; i++) {
		res = sql("INSERT INTO device_challenge (device_serial, "
		    "psu_id, nonce, amount_minor, currency, payee_name, "
		    "payee_iban, deadline) SELECT $1, id, "
		    "decode(md5(random()::text) || md5(random()::text), "
		    "'hex'), 1000 + $2::int, 'EUR', 'Bench GmbH', "
		    "'DE89370400440532013000', now() + interval '60 s' "
		    "FROM psu WHERE username = 'bench-' || $1 "
		    "RETURNING id", 2,
		    (const char *const[]){ serials[i], "1" });
		pthread_mutex_lock(&L.lock);
		snprintf(L.ids[i], sizeof(L.ids[i]), "%s",
		    PQgetvalue(res, 0, 0));
		L.seen[i] = 0;
		pthread_mutex_unlock(&L.lock);
		PQclear(res);
	}
	pthread_mutex_lock(&L.lock);
	L.n = ndev;
	pthread_mutex_unlock(&L.lock);
	for (end = devtest_now_ms() + 20000, k = 0; k < ndev &&
	    devtest_now_ms() < end; usleep(5000))
		for (k = 0, i = 0; i < ndev; i++)
			k += fw_pending(fws[i]);
	if (k < ndev)
		die("not all devices displayed the payment");
	for (i = 0; i < ndev; i++) {
		if (fw_pin(fws[i], FW_DEFAULT_PIN) != FW_PIN_OK)
			die("PIN");
	}
}

/*
 * Presses at random moments within the spread (0: everybody at once, the
 * worst case), each timed from its own press; lat gets ndev figures,
 * span how long the emulator took to make the round's presses.
 */
static void
bench_round(struct fw **fws, char (*serials)[32], int ndev, int spread,
    int r, int64_t *lat, int64_t *span)
{
	int64_t		 pressed[BENCH_MAX], due[BENCH_MAX], t0, now, next;
	int64_t		 end;
	PGresult	*res;
	int		 i, left;

	round_prepare(fws, serials, ndev);
	for (i = 0; i < ndev; i++) {
		due[i] = spread > 0 ? random() % spread * 1000 : 0;
		pressed[i] = -1;
	}
	t0 = now_us();
	for (left = ndev; left > 0;) {
		next = INT64_MAX;
		for (i = 0; i < ndev; i++) {
			if (pressed[i] == -1 && now_us() - t0 >= due[i]) {
				pressed[i] = now_us();
				if (fw_press(fws[i]) != 0)
					die("press");
				left--;
			}
			if (pressed[i] == -1 && t0 + due[i] < next)
				next = t0 + due[i];
		}
		if (left > 0 && (now = now_us()) < next)
			usleep((useconds_t)(next - now));
	}
	*span = now_us() - t0;
	for (end = devtest_now_ms() + 20000; listener_done() < ndev &&
	    devtest_now_ms() < end;)
		usleep(1000);
	if (listener_done() < ndev)
		die("not all outcomes committed");
	pthread_mutex_lock(&L.lock);
	for (i = 0; i < ndev; i++)
		lat[i] = L.seen[i] - pressed[i];
	pthread_mutex_unlock(&L.lock);
	res = sql("SELECT count(*) FROM device_challenge WHERE "
	    "status = 'done' AND outcome = 'approved'", 0, NULL);
	if (atoi(PQgetvalue(res, 0, 0)) != (r + 1) * ndev)
		die("outcome count");
	PQclear(res);
}

int
main(void)
{
	struct usbemu	*emu;
	struct fw	*fws[BENCH_MAX];
	char		 serials[BENCH_MAX][32];
	int64_t		 lat[BENCH_MAX * 64], span[64];
	pthread_t	 th;
	int		 spread;
	EVP_PKEY	*mfr;
	char		*dir, conf[600], log[600], ca[600], cwd[512];
	PGresult	*res;
	FILE		*fp;
	pid_t		 pid;
	int		 ndev, rounds, idle, i, r, k = 0, nlat, status;
	int64_t		 end;
	double		 c0, c1;

	ndev = getenv("BENCH_DEVICES") ? atoi(getenv("BENCH_DEVICES")) : 50;
	rounds = getenv("BENCH_ROUNDS") ? atoi(getenv("BENCH_ROUNDS")) : 10;
	spread = getenv("BENCH_SPREAD_MS") ? atoi(getenv("BENCH_SPREAD_MS")) :
	    1000;
	idle = getenv("BENCH_IDLE_SECONDS") ?
	    atoi(getenv("BENCH_IDLE_SECONDS")) : 10;
	if (ndev < 1 || ndev > BENCH_MAX || rounds < 1 || rounds > 64)
		die("bad BENCH_DEVICES or BENCH_ROUNDS");
	if ((emu = usbemu_new()) == NULL || (mfr = devtest_manufacturer_key())
	    == NULL || (dir = devtest_tmpdir()) == NULL)
		die("setup");
	if ((db = PQconnectdb(getenv("PSD2_DEVTEST_DB"))) == NULL ||
	    PQstatus(db) != CONNECTION_OK)
		die("connect");
	PQclear(sql("DELETE FROM device_challenge", 0, NULL));
	PQclear(sql("DELETE FROM device", 0, NULL));
	for (i = 0; i < ndev; i++) {
		snprintf(serials[i], sizeof(serials[i]), "BENCH%04d", i);
		if ((fws[i] = devtest_fw(emu, serials[i], dir, mfr)) == NULL ||
		    fw_plug(fws[i]) != 0)
			die("device");
	}
	if (devtest_ca_path()[0] == '/')
		snprintf(ca, sizeof(ca), "%s", devtest_ca_path());
	else
		snprintf(ca, sizeof(ca), "%s/%s", getcwd(cwd, sizeof(cwd)),
		    devtest_ca_path());
	snprintf(conf, sizeof(conf), "%s/bench.conf", dir);
	snprintf(log, sizeof(log), "%s/deviced.log", dir);
	if ((fp = fopen(conf, "w")) == NULL)
		die("conf");
	fprintf(fp, "psd2_db %s\npsd2_device_manufacturer_ca %s\n"
	    "psd2_device_host bench\n", getenv("PSD2_DEVTEST_DB"), ca);
	fclose(fp);
	if ((pid = fork()) == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(getenv("PSD2_DEVICED"), "psd2-deviced", "--foreground",
		    "--conf", conf, (char *)NULL);
		_exit(127);
	}
	/* All recorded, then enrolled and assigned in one statement. */
	for (end = devtest_now_ms() + 30000; devtest_now_ms() < end;
	    usleep(50000)) {
		res = sql("SELECT count(*) FROM device", 0, NULL);
		k = atoi(PQgetvalue(res, 0, 0));
		PQclear(res);
		if (k == ndev)
			break;
	}
	if (k != ndev)
		die("not all devices recorded");
	/*
	 * A PSU has at most one active device (migration 082): one each, in
	 * the device test database's stand-in psu table (tests/device/
	 * testdb.sh: id and username only).
	 */
	PQclear(sql("INSERT INTO psu (username) SELECT 'bench-' || serial "
	    "FROM device ON CONFLICT (username) DO NOTHING", 0, NULL));
	PQclear(sql("UPDATE device d SET status = 'active', enrolled_at = "
	    "now(), psu_id = p.id FROM psu p "
	    "WHERE p.username = 'bench-' || d.serial", 0, NULL));
	if ((L.db = PQconnectdb(getenv("PSD2_DEVTEST_DB"))) == NULL ||
	    PQstatus(L.db) != CONNECTION_OK ||
	    PQresultStatus(res = PQexec(L.db, "LISTEN device_challenge_done"))
	    != PGRES_COMMAND_OK)
		die("listener connect");
	PQclear(res);
	if (pthread_create(&th, NULL, listener, NULL) != 0)
		die("listener thread");
	usleep(500000);

	for (r = 0; r < rounds; r++)
		bench_round(fws, serials, ndev, spread, r, lat + r * ndev,
		    span + r);
	nlat = rounds * ndev;
	pthread_mutex_lock(&L.lock);
	L.stop = 1;
	pthread_mutex_unlock(&L.lock);
	pthread_join(th, NULL);
	PQfinish(L.db);
	qsort(lat, (size_t)nlat, sizeof(lat[0]), cmp_i64);
	qsort(span, (size_t)rounds, sizeof(span[0]), cmp_i64);
	printf("device bench: %d devices, %d presses spread over %d ms: "
	    "press -> committed p50 %.1f ms, p99 %.1f ms, max %.1f ms "
	    "(target p99 <= 50 ms)\n", ndev, nlat, spread, lat[nlat / 2] / 1000.0,
	    lat[(nlat * 99) / 100] / 1000.0,
	    lat[nlat - 1] / 1000.0);
	if (spread == 0)
		printf("device bench: %d rounds of %d presses at once: the "
		    "emulator needed %.1f ms (median round; fastest %.1f, "
		    "slowest %.1f) to press a round's %d, back to back\n",
		    rounds, ndev, span[rounds / 2] / 1000.0, span[0] / 1000.0,
		    span[rounds - 1] / 1000.0, ndev);

	c0 = cpu_seconds(pid);
	sleep((unsigned int)idle);
	c1 = cpu_seconds(pid);
	printf("device bench: daemon idle with %d devices: %.2f%% of a core "
	    "over %d s (target < 1%%)\n", ndev, 100.0 * (c1 - c0) / idle,
	    idle);

	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	for (i = 0; i < ndev; i++)
		fw_unplug(fws[i]);
	usbemu_free(emu);
	for (i = 0; i < ndev; i++)
		fw_free(fws[i]);
	EVP_PKEY_free(mfr);
	PQfinish(db);
	devtest_rmdir(dir);
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1);
}
