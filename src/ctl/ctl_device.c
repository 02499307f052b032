/*
 * psd2ctl device: staff operations on hardware authenticators for
 * scripting (the staff pages offer the same, under the same rules:
 * assigning takes a second person, or the named break-glass command).
 * Enrolment does not trust psd2-deviced: the manufacturer's attestation
 * is verified against the CA keys configured in
 * psd2_device_manufacturer_ca by devenrol_check() (src/common/devenrol.c),
 * the check the staff pages make too, and device_enrol
 * (72_staff_devices.sql) writes the same audit row.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/settings.h"
#include "ctl/ctl_db.h"
#include "ctl_device.h"
#include "common/devenrol.h"

static int
ctl_dev_failed(PGconn *db, PGresult *res)
{
	ExecStatusType	st = PQresultStatus(res);

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return (0);
	fprintf(stderr, "psd2ctl device: %s", PQerrorMessage(db));
	PQclear(res);
	return (1);
}

/*
 * 1 if a configured manufacturer CA key signed the recorded attestation,
 * 0 if none did (or the record is unreadable), -1 if the CA keys cannot
 * be read (nothing was checked).
 */
static int
ctl_dev_attest_ok(PGresult *res, const char *serial, char *fpr)
{
	EVP_PKEY		*cas[DEVSIG_CA_MAX];
	char			 path[1024];
	size_t			 n;
	enum devenrol_result	 r;

	if (settings_path("device_manufacturer_ca", NULL, path,
	    sizeof(path)) != 0 || path[0] == '\0') {
		fprintf(stderr, "psd2ctl device: psd2_device_manufacturer_ca "
		    "is not configured\n");
		return (-1);
	}
	if (devsig_load_cas(path, cas, DEVSIG_CA_MAX, &n) == -1) {
		fprintf(stderr, "psd2ctl device: cannot read the CA keys of "
		    "%s\n", path);
		return (-1);
	}
	r = devenrol_check(cas, n, serial, PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), fpr);
	devsig_free_cas(cas, n);
	if (r == DEVENROL_UNREADABLE)
		fprintf(stderr, "psd2ctl device: %s: unreadable key\n", serial);
	return (r == DEVENROL_OK);
}

static int
ctl_dev_list(PGconn *db)
{
	PGresult	*res;
	char		 fpr[DEVSIG_FPR_LEN + 1];
	int		 i;

	res = PQexecParams(db, "SELECT d.serial, d.status, d.model, "
	    "d.firmware, d.attestation_ok, d.host, coalesce(p.username, '-'), "
	    "to_char(d.last_seen, 'YYYY-MM-DD HH24:MI:SS'), d.public_key "
	    "FROM device d LEFT JOIN psu p ON p.id = d.psu_id "
	    "ORDER BY d.serial", 0, NULL, NULL, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	printf("%-16s %-12s %-14s %-8s %-11s %-12s %-16s %-19s %s\n",
	    "SERIAL", "STATUS", "MODEL", "FIRMWARE", "ATTESTATION", "PSU",
	    "HOST", "LAST SEEN", "KEY FINGERPRINT");
	for (i = 0; i < PQntuples(res); i++) {
		if (devenrol_fingerprint(PQgetvalue(res, i, 8), fpr) == -1)
			snprintf(fpr, sizeof(fpr), "?");
		printf("%-16s %-12s %-14s %-8s %-11s %-12s %-16s %-19s %s\n",
		    PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		    PQgetvalue(res, i, 2), PQgetvalue(res, i, 3),
		    strcmp(PQgetvalue(res, i, 4), "t") == 0 ? "valid" :
		    "INVALID", PQgetvalue(res, i, 6), PQgetvalue(res, i, 5),
		    PQgetvalue(res, i, 7), fpr);
	}
	PQclear(res);
	return (0);
}

/* The refused attempt's audit row, as the staff pages write it. */
static void
ctl_dev_enrol_refused(PGconn *db, const char *serial, const char *fpr)
{
	char		 actor[128];
	const char	*p[3] = { actor, serial, fpr[0] ? fpr : NULL };
	PGresult	*res;

	ctl_actor(actor, sizeof(actor));
	res = PQexecParams(db, "SELECT device_enrol_refused($1, $2, $3)", 3,
	    NULL, p, NULL, NULL, 0);
	if (!ctl_dev_failed(db, res))
		PQclear(res);
}

static int
ctl_dev_enrol(PGconn *db, const char *serial)
{
	char		 actor[128], fpr[DEVSIG_FPR_LEN + 1], key[160];
	const char	*p[4] = { actor, serial, key, fpr };
	const char	*status, *r;
	PGresult	*res;
	int		 ok;

	res = PQexecParams(db, "SELECT model, public_key, attestation, "
	    "attestation_ok, status FROM device WHERE serial = $1", 1, NULL,
	    &serial, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	if (PQntuples(res) != 1) {
		fprintf(stderr, "psd2ctl device: no device %s (plug it into a "
		    "host running psd2-deviced first)\n", serial);
		PQclear(res);
		return (1);
	}
	status = PQgetvalue(res, 0, 4);
	if (strcmp(status, "active") == 0 &&
	    devenrol_fingerprint(PQgetvalue(res, 0, 1), fpr) == 0) {
		printf("device %s is already enrolled (key fingerprint %s)\n",
		    serial, fpr);
		PQclear(res);
		return (0);
	}
	if (strcmp(status, "not_enrolled") != 0) {
		fprintf(stderr, "psd2ctl device: %s is %s; refused\n", serial,
		    status);
		PQclear(res);
		return (1);
	}
	if ((ok = ctl_dev_attest_ok(res, serial, fpr)) == -1) {
		PQclear(res);
		return (1);
	}
	if (ok == 0 || strcmp(PQgetvalue(res, 0, 3), "t") != 0) {
		fprintf(stderr, "psd2ctl device: %s: attestation does not "
		    "verify against the manufacturer CA keys; refused\n",
		    serial);
		if (devenrol_fingerprint(PQgetvalue(res, 0, 1), fpr) == -1)
			fpr[0] = '\0';
		PQclear(res);
		ctl_dev_enrol_refused(db, serial, fpr);
		return (1);
	}
	snprintf(key, sizeof(key), "%s", PQgetvalue(res, 0, 1));
	PQclear(res);
	ctl_actor(actor, sizeof(actor));
	res = PQexecParams(db, "SELECT device_enrol($1, $2, $3, $4)", 4, NULL,
	    p, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	r = PQgetvalue(res, 0, 0);
	if (strcmp(r, "ok") != 0) {
		fprintf(stderr, "psd2ctl device: %s: enrolment refused (%s)\n",
		    serial, r);
		PQclear(res);
		return (1);
	}
	PQclear(res);
	printf("device %s enrolled (status active)\n"
	    "key fingerprint %s\n"
	    "compare it with the label and with the device display\n",
	    serial, fpr);
	return (0);
}

/* What staff_device_action and device_assign_break_glass refuse. */
static const char *
ctl_dev_refusal(const char *r)
{
	static const struct {
		const char	*result, *text;
	} texts[] = {
		{ "no_device", "no such device" },
		{ "no_psu", "no such PSU" },
		{ "bad_status", "not possible in the device's status" },
		{ "psu_has_device", "the PSU already has an active device" },
		{ "pending_exists", "an assignment of the device is already "
		    "waiting for approval" },
		{ "no_request", "no assignment of the device is waiting for "
		    "approval" },
		{ "same_person", "the request is yours: another operator or "
		    "staff member decides it" },
		{ "no_reason", "a break-glass assignment needs a reason" },
	};
	size_t	i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (strcmp(texts[i].result, r) == 0)
			return (texts[i].text);
	}
	return (r);
}

/*
 * One call of a device function that answers ok or a named refusal
 * (staff_device_action, device_assign_break_glass: each writes its audit
 * row); what names the operation in the refusal. Returns 0 or 1.
 */
static int
ctl_dev_exec(PGconn *db, const char *sql, const char *const p[4],
    const char *what)
{
	PGresult	*res;
	const char	*r;

	res = PQexecParams(db, sql, 4, NULL, p, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	r = PQgetvalue(res, 0, 0);
	if (strcmp(r, "ok") != 0) {
		fprintf(stderr, "psd2ctl device: %s refused: %s\n", what,
		    ctl_dev_refusal(r));
		PQclear(res);
		return (1);
	}
	PQclear(res);
	return (0);
}

/* One staff_device_action of the operator. Returns 0 or 1. */
static int
ctl_dev_call(PGconn *db, const char *action, const char *serial,
    const char *username)
{
	char		 actor[128], what[128];
	const char	*p[4] = { actor, action, serial, username };

	ctl_actor(actor, sizeof(actor));
	(void)snprintf(what, sizeof(what), "%s %s", action, serial);
	return (ctl_dev_exec(db, "SELECT staff_device_action($1, $2, $3, $4)",
	    p, what));
}

/*
 * Four eyes, as on the staff pages: assign requests, and another
 * operator (psd2ctl device approve|reject) or staff member decides.
 */
static int
ctl_dev_assign(PGconn *db, const char *action, const char *serial,
    const char *username)
{
	if (ctl_dev_call(db, action, serial, username) != 0)
		return (1);
	if (strcmp(action, "assign_request") == 0)
		printf("device %s: assignment to %s requested; another operator "
		    "approves it (psd2ctl device approve %s, or the staff "
		    "pages)\n", serial, username, serial);
	else
		printf("device %s: assignment %s\n", serial,
		    strcmp(action, "assign_approve") == 0 ? "approved" :
		    "rejected");
	return (0);
}

/*
 * The named exception to four eyes (device_assign_break_glass): one
 * operator assigns at once, giving a reason; the audit row is its own
 * (device.assign_break_glass).
 */
static int
ctl_dev_break_glass(PGconn *db, const char *serial, const char *username,
    const char *reason)
{
	char		 actor[128], what[128];
	const char	*p[4] = { actor, serial, username, reason };

	ctl_actor(actor, sizeof(actor));
	(void)snprintf(what, sizeof(what), "break-glass assignment of %s",
	    serial);
	if (ctl_dev_exec(db, "SELECT device_assign_break_glass($1, $2, $3, "
	    "$4)", p, what) != 0)
		return (1);
	printf("device %s assigned to %s (break-glass, audit row "
	    "device.assign_break_glass)\n", serial, username);
	return (0);
}

/* block, unassign, retire: staff_device_action (72_staff_devices.sql). */
static int
ctl_dev_action(PGconn *db, const char *action, const char *serial)
{
	char		 actor[128];
	const char	*p[3] = { actor, action, serial };
	PGresult	*res;

	/* The function writes the audit row naming the failed challenges. */
	if (ctl_dev_call(db, action, serial, NULL) != 0)
		return (1);
	ctl_actor(actor, sizeof(actor));
	res = PQexecParams(db, "SELECT coalesce(detail->>'failed_challenges', "
	    "'0') FROM audit_log WHERE actor = $1 AND action = 'device.' || $2 "
	    "AND detail->>'serial' = $3 ORDER BY id DESC LIMIT 1", 3, NULL, p,
	    NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	printf("device %s: %s done; %s open challenge(s) failed\n", serial,
	    action, PQntuples(res) ? PQgetvalue(res, 0, 0) : "0");
	PQclear(res);
	return (0);
}

int
ctl_device(PGconn *db, int argc, char **argv)
{
	if (argc < 1)
		return (2);
	if (strcmp(argv[0], "list") == 0 && argc == 1)
		return (ctl_dev_list(db));
	if (strcmp(argv[0], "enrol") == 0 && argc == 2)
		return (ctl_dev_enrol(db, argv[1]));
	if (strcmp(argv[0], "assign") == 0 && argc == 3)
		return (ctl_dev_assign(db, "assign_request", argv[1], argv[2]));
	if (strcmp(argv[0], "approve") == 0 && argc == 2)
		return (ctl_dev_assign(db, "assign_approve", argv[1], NULL));
	if (strcmp(argv[0], "reject") == 0 && argc == 2)
		return (ctl_dev_assign(db, "assign_reject", argv[1], NULL));
	if (strcmp(argv[0], "break-glass-assign") == 0 && argc == 5 &&
	    strcmp(argv[3], "--reason") == 0)
		return (ctl_dev_break_glass(db, argv[1], argv[2], argv[4]));
	if ((strcmp(argv[0], "block") == 0 || strcmp(argv[0], "unassign") == 0 ||
	    strcmp(argv[0], "retire") == 0) && argc == 2)
		return (ctl_dev_action(db, argv[0], argv[1]));
	fprintf(stderr, "usage: psd2ctl device list | enrol SERIAL | "
	    "assign SERIAL PSU-USERNAME | approve|reject SERIAL |\n"
	    "    break-glass-assign SERIAL PSU-USERNAME --reason TEXT | "
	    "block|unassign|retire SERIAL\n");
	return (2);
}
