/*
 * Device figures (make bench-device, not a test): 50 emulated
 * authenticators on one psd2-deviced. Prints the time from a button press
 * to the outcome committed in PostgreSQL (seen as the commit's NOTIFY on
 * device_challenge_done), and the daemon's CPU while idle.
 * Environment: PSD2_DEVTEST_DB, PSD2_DEVICED, PSD2_DEV_TESTKEYS,
 * BENCH_DEVICES (50), BENCH_ROUNDS (10), BENCH_IDLE_SECONDS (10).
 */
#include <fcntl.h>
#include <poll.h>
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

int
main(void)
{
	struct usbemu	*emu;
	struct fw	*fws[BENCH_MAX];
	char		 serials[BENCH_MAX][32], ids[BENCH_MAX][40];
	int64_t		 pressed[BENCH_MAX], due[BENCH_MAX], t0;
	int64_t		 lat[BENCH_MAX * 64];
	int		 spread;
	EVP_PKEY	*mfr;
	char		*dir, conf[600], log[600], ca[600], cwd[512];
	PGresult	*res;
	PGnotify	*n;
	FILE		*fp;
	pid_t		 pid;
	int		 ndev, rounds, idle, i, r, k = 0, nlat = 0, done, status;
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
	PQclear(sql("LISTEN device_challenge_done", 0, NULL));
	usleep(500000);

	for (r = 0; r < rounds; r++) {
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
			snprintf(ids[i], sizeof(ids[i]), "%s",
			    PQgetvalue(res, 0, 0));
			PQclear(res);
		}
		for (end = devtest_now_ms() + 20000, k = 0; k < ndev &&
		    devtest_now_ms() < end; usleep(5000))
			for (k = 0, i = 0; i < ndev; i++)
				k += fw_pending(fws[i]);
		if (k < ndev)
			die("not all devices displayed the payment");
		/* Presses at random moments within the spread (0: everybody
		 * at once, the worst case), each timed on its own. */
		for (i = 0; i < ndev; i++)
			due[i] = spread > 0 ? random() % spread * 1000 : 0;
		t0 = now_us();
		for (i = 0; i < ndev; i++)
			pressed[i] = -1;
		for (done = 0, end = devtest_now_ms() + 20000 + spread;
		    done < ndev && devtest_now_ms() < end;) {
			struct pollfd	pfd = { PQsocket(db), POLLIN, 0 };
			int64_t		next = INT64_MAX, now;

			for (i = 0; i < ndev; i++) {
				if (pressed[i] == -1 && now_us() - t0 >= due[i]) {
					pressed[i] = now_us();
					if (devtest_approve(fws[i]) != 0)
						die("press");
				}
				if (pressed[i] == -1 && t0 + due[i] < next)
					next = t0 + due[i];
			}
			now = now_us();
			(void)poll(&pfd, 1, next == INT64_MAX ? 100 :
			    (int)((next - now) / 1000 > 0 ? (next - now) / 1000 : 0));
			now = now_us();
			PQconsumeInput(db);
			while ((n = PQnotifies(db)) != NULL) {
				for (i = 0; i < ndev; i++) {
					if (strcmp(ids[i], n->extra) != 0 ||
					    pressed[i] < 0)
						continue;
					lat[nlat++] = now - pressed[i];
					done++;
				}
				PQfreemem(n);
			}
		}
		if (done < ndev)
			die("not all outcomes committed");
		res = sql("SELECT count(*) FROM device_challenge WHERE "
		    "status = 'done' AND outcome = 'approved'", 0, NULL);
		if (atoi(PQgetvalue(res, 0, 0)) != (r + 1) * ndev)
			die("outcome count");
		PQclear(res);
	}
	qsort(lat, (size_t)nlat, sizeof(lat[0]), cmp_i64);
	printf("device bench: %d devices, %d presses spread over %d ms: "
	    "press -> committed p50 %.1f ms, p99 %.1f ms, max %.1f ms "
	    "(target p99 <= 50 ms)\n", ndev, nlat, spread, lat[nlat / 2] / 1000.0,
	    lat[(nlat * 99) / 100] / 1000.0,
	    lat[nlat - 1] / 1000.0);

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
