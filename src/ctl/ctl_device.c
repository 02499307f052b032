/*
 * psd2ctl device: staff operations on hardware authenticators until the
 * staff pages exist. Enrolment does not trust psd2-deviced: it verifies
 * the manufacturer's attestation itself against the CA keys configured in
 * psd2_device_manufacturer_ca. The attestation encoding mirrors
 * devsig_attest_encode() in device/devsig.c (device/PROTOCOL.md,
 * "Attestation"); psd2ctl links only OpenSSL, so it is restated here and
 * the device end-to-end tests check that both agree.
 */
#include <sys/types.h>

#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "common/settings.h"
#include "ctl/ctl.h"
#include "ctl_device.h"

#define CTL_DEV_ATTEST_DOMAIN	"PSD2GATE-DEVICE-ATTEST-V1"
#define CTL_DEV_PUBKEY_LEN	65
#define CTL_DEV_SIG_MAX		72
#define CTL_DEV_FIELD_MAX	32
#define CTL_DEV_CA_MAX		8

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

static int
ctl_dev_unhex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t		n, i;
	unsigned int	v;

	if (strncmp(s, "\\x", 2) != 0)
		return (-1);
	s += 2;
	n = strlen(s);
	if (n % 2 != 0 || n / 2 > max)
		return (-1);
	for (i = 0; i < n / 2; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return (-1);
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return (0);
}

static void
ctl_dev_fingerprint(const uint8_t *pub, char out[40])
{
	uint8_t		md[SHA256_DIGEST_LENGTH];
	size_t		i, o = 0;

	SHA256(pub, CTL_DEV_PUBKEY_LEN, md);
	for (i = 0; i < 16; i++) {
		if (i > 0 && i % 2 == 0)
			out[o++] = ' ';
		o += (size_t)snprintf(out + o, 40 - o, "%02X", md[i]);
	}
	out[o] = '\0';
}

/* domain NUL | len serial | serial | len model | model | public key */
static size_t
ctl_dev_attest_encode(const char *serial, const char *model,
    const uint8_t *pub, uint8_t *out, size_t max)
{
	size_t	sl = strlen(serial), ml = strlen(model), o = 0;

	if (sl > CTL_DEV_FIELD_MAX || ml > CTL_DEV_FIELD_MAX ||
	    sizeof(CTL_DEV_ATTEST_DOMAIN) + 2 + sl + ml +
	    CTL_DEV_PUBKEY_LEN > max)
		return (0);
	memcpy(out, CTL_DEV_ATTEST_DOMAIN, sizeof(CTL_DEV_ATTEST_DOMAIN));
	o += sizeof(CTL_DEV_ATTEST_DOMAIN);
	out[o++] = (uint8_t)sl;
	memcpy(out + o, serial, sl);
	o += sl;
	out[o++] = (uint8_t)ml;
	memcpy(out + o, model, ml);
	o += ml;
	memcpy(out + o, pub, CTL_DEV_PUBKEY_LEN);
	return (o + CTL_DEV_PUBKEY_LEN);
}

static int
ctl_dev_verify(EVP_PKEY *ca, const uint8_t *msg, size_t len,
    const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX	*md;
	int		 ok;

	if ((md = EVP_MD_CTX_new()) == NULL)
		return (0);
	ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, ca) == 1 &&
	    EVP_DigestVerify(md, sig, siglen, msg, len) == 1;
	EVP_MD_CTX_free(md);
	return (ok);
}

/* 1 if a configured manufacturer CA key signed the attestation. */
static int
ctl_dev_attest_ok(const char *serial, const char *model, const uint8_t *pub,
    const uint8_t *sig, size_t siglen)
{
	char		 path[1024];
	uint8_t		 msg[256];
	size_t		 len;
	FILE		*fp;
	EVP_PKEY	*ca;
	int		 ok = 0, n = 0;

	if (settings_path("device_manufacturer_ca", NULL, path,
	    sizeof(path)) != 0 || path[0] == '\0') {
		fprintf(stderr, "psd2ctl device: psd2_device_manufacturer_ca "
		    "is not configured\n");
		return (0);
	}
	if ((len = ctl_dev_attest_encode(serial, model, pub, msg,
	    sizeof(msg))) == 0)
		return (0);
	if ((fp = fopen(path, "r")) == NULL) {
		fprintf(stderr, "psd2ctl device: cannot read %s\n", path);
		return (0);
	}
	while (!ok && n++ < CTL_DEV_CA_MAX &&
	    (ca = PEM_read_PUBKEY(fp, NULL, NULL, NULL)) != NULL) {
		ok = ctl_dev_verify(ca, msg, len, sig, siglen);
		EVP_PKEY_free(ca);
	}
	fclose(fp);
	return (ok);
}

static int
ctl_dev_list(PGconn *db)
{
	PGresult	*res;
	uint8_t		 pub[CTL_DEV_PUBKEY_LEN];
	size_t		 len;
	char		 fpr[40];
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
		if (ctl_dev_unhex(PQgetvalue(res, i, 8), pub, sizeof(pub),
		    &len) != 0 || len != sizeof(pub))
			snprintf(fpr, sizeof(fpr), "?");
		else
			ctl_dev_fingerprint(pub, fpr);
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

static int
ctl_dev_enrol(PGconn *db, const char *serial)
{
	const char	*p[1] = { serial };
	PGresult	*res;
	uint8_t		 pub[CTL_DEV_PUBKEY_LEN], sig[CTL_DEV_SIG_MAX];
	size_t		 publen, siglen;
	char		 model[CTL_DEV_FIELD_MAX + 1], status[16], fpr[40];
	int		 daemon_ok;

	res = PQexecParams(db, "SELECT model, public_key, attestation, "
	    "attestation_ok, status FROM device WHERE serial = $1", 1, NULL,
	    p, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	if (PQntuples(res) != 1) {
		fprintf(stderr, "psd2ctl device: no device %s (plug it into a "
		    "host running psd2-deviced first)\n", serial);
		PQclear(res);
		return (1);
	}
	snprintf(model, sizeof(model), "%s", PQgetvalue(res, 0, 0));
	snprintf(status, sizeof(status), "%s", PQgetvalue(res, 0, 4));
	daemon_ok = strcmp(PQgetvalue(res, 0, 3), "t") == 0;
	if (ctl_dev_unhex(PQgetvalue(res, 0, 1), pub, sizeof(pub), &publen) ||
	    publen != sizeof(pub) || ctl_dev_unhex(PQgetvalue(res, 0, 2), sig,
	    sizeof(sig), &siglen)) {
		PQclear(res);
		fprintf(stderr, "psd2ctl device: %s: unreadable key\n", serial);
		return (1);
	}
	PQclear(res);
	if (strcmp(status, "blocked") == 0) {
		fprintf(stderr, "psd2ctl device: %s is blocked; refused\n",
		    serial);
		return (1);
	}
	if (strcmp(status, "active") == 0) {
		ctl_dev_fingerprint(pub, fpr);
		printf("device %s is already enrolled (key fingerprint %s)\n",
		    serial, fpr);
		return (0);
	}
	if (!daemon_ok || !ctl_dev_attest_ok(serial, model, pub, sig,
	    siglen)) {
		fprintf(stderr, "psd2ctl device: %s: attestation does not "
		    "verify against the manufacturer CA keys; refused\n",
		    serial);
		return (1);
	}
	res = PQexecParams(db, "UPDATE device SET status = 'active', "
	    "enrolled_at = now() WHERE serial = $1 AND status = "
	    "'not_enrolled'", 1, NULL, p, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	PQclear(res);
	ctl_dev_fingerprint(pub, fpr);
	ctl_audit_write(db, "device.enrol", "serial", serial, "fingerprint",
	    fpr);
	printf("device %s enrolled (status active)\n"
	    "key fingerprint %s\n"
	    "compare it with the label and with the device display\n",
	    serial, fpr);
	return (0);
}

static int
ctl_dev_assign(PGconn *db, const char *serial, const char *username)
{
	char		 actor[128];
	const char	*p[3] = { serial, username, actor };
	PGresult	*res;

	ctl_actor(actor, sizeof(actor));
	res = PQexecParams(db, "WITH d AS (UPDATE device SET psu_id = p.id "
	    "FROM psu p WHERE device.serial = $1 AND p.username = $2 "
	    "AND device.status NOT IN ('blocked', 'retired') "
	    "RETURNING device.status), a AS (INSERT INTO audit_log (actor, "
	    "action, detail) SELECT $3, 'device.assign_direct', "
	    "jsonb_build_object('serial', $1::text, 'psu', $2::text) "
	    "FROM d) SELECT status FROM d", 3, NULL, p, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	if (PQntuples(res) != 1) {
		fprintf(stderr, "psd2ctl device: no such device or PSU, or "
		    "the device is blocked or retired\n");
		PQclear(res);
		return (1);
	}
	printf("device %s assigned to %s (status %s)\n", serial, username,
	    PQgetvalue(res, 0, 0));
	PQclear(res);
	return (0);
}

/* block, unassign, retire: staff_device_action (70_staff.sql). */
static int
ctl_dev_action(PGconn *db, const char *action, const char *serial)
{
	char		 actor[128];
	const char	*p[3] = { actor, action, serial };
	PGresult	*res;
	const char	*r;

	ctl_actor(actor, sizeof(actor));
	/* The function writes the audit row naming the failed challenges. */
	res = PQexecParams(db, "WITH r AS (SELECT staff_device_action($1, $2, "
	    "$3, NULL) AS r) SELECT r FROM r", 3, NULL, p, NULL, NULL, 0);
	if (ctl_dev_failed(db, res))
		return (1);
	r = PQgetvalue(res, 0, 0);
	if (strcmp(r, "ok") != 0) {
		fprintf(stderr, "psd2ctl device: %s %s refused: %s\n", action,
		    serial, strcmp(r, "no_device") == 0 ? "no such device" :
		    "not possible in the device's status");
		PQclear(res);
		return (1);
	}
	PQclear(res);
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
		return (ctl_dev_assign(db, argv[1], argv[2]));
	if ((strcmp(argv[0], "block") == 0 || strcmp(argv[0], "unassign") == 0 ||
	    strcmp(argv[0], "retire") == 0) && argc == 2)
		return (ctl_dev_action(db, argv[0], argv[1]));
	fprintf(stderr, "usage: psd2ctl device list | enrol SERIAL | "
	    "assign SERIAL PSU-USERNAME | block|unassign|retire SERIAL\n");
	return (2);
}
