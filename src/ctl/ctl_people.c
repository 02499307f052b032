/*
 * psd2ctl psu|staff|account|keys-init: registry commands. Secrets are
 * printed once and stored only hashed (passwords argon2id); TOTP seeds
 * are stored encrypted. Writes go through 74_operator.sql.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/crypto.h"
#include "common/encoding.h"
#include "common/keyring.h"
#include "common/passhash.h"
#include "common/secretbox.h"
#include "common/settings.h"
#include "common/textrule.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

#define OPT_MAX		16

struct opts {
	const char	*name[OPT_MAX];
	const char	*value[OPT_MAX];
	int		 count;
	const char	*positional[8];
	int		 npositional;
};

/* --flag VALUE pairs; flags in "bare" take no value. */
static int
opts_parse(struct opts *o, int argc, char **argv, const char *bare)
{
	int	i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0) {
			if (o->npositional == 8)
				return (-1);
			o->positional[o->npositional++] = argv[i];
			continue;
		}
		if (o->count == OPT_MAX)
			return (-1);
		o->name[o->count] = argv[i] + 2;
		if (strstr(bare, argv[i] + 2) != NULL) {
			o->value[o->count++] = "yes";
			continue;
		}
		if (i + 1 == argc)
			return (-1);
		o->value[o->count++] = argv[++i];
	}
	return (0);
}

static const char *
opts_get(const struct opts *o, const char *name)
{
	int	i;

	for (i = 0; i < o->count; i++) {
		if (strcmp(o->name[i], name) == 0)
			return (o->value[i]);
	}
	return (NULL);
}

static int
ctl_keyfile(const char *setting, const char *key_id)
{
	char		path[PATH_MAX], dir[PATH_MAX], err[256], *slash;
	struct stat	st;

	if (settings_path(setting, NULL, path, sizeof(path)) == -1) {
		fprintf(stderr, "psd2ctl: psd2_%s is not set\n", setting);
		return (1);
	}
	if (stat(path, &st) == 0)
		return (0);
	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
			fprintf(stderr, "psd2ctl: %s: %s\n", dir,
			    strerror(errno));
			return (1);
		}
	}
	if (keyring_generate_file(path, key_id, err, sizeof(err)) == -1) {
		fprintf(stderr, "psd2ctl: %s\n", err);
		return (1);
	}
	printf("created %s\n", path);
	return (0);
}

int
ctl_keys_init(void)
{
	if (ctl_keyfile("form_keys", "f1") != 0 ||
	    ctl_keyfile("totp_keys", "t1") != 0 ||
	    ctl_keyfile("client_keys", "c1") != 0)
		return (1);
	/* The audit checkpoint key (an optional setting). */
	if (settings_get("audit_keys", NULL) != NULL &&
	    ctl_keyfile("audit_keys", "a1") != 0)
		return (1);
	return (0);
}

static int
ctl_load_totp_keys(struct keyring *kr)
{
	char	path[PATH_MAX], err[256];

	if (settings_path("totp_keys", NULL, path, sizeof(path)) == -1 ||
	    keyring_load(kr, path, err, sizeof(err)) == -1) {
		fprintf(stderr, "psd2ctl: TOTP keys: %s\n", err);
		return (-1);
	}
	return (0);
}

static void
ctl_random_text(char *out, size_t bytes)
{
	uint8_t	raw[32];

	if (bytes > sizeof(raw) || crypto_random(raw, bytes) == -1) {
		fprintf(stderr, "psd2ctl: no randomness\n");
		exit(1);
	}
	base64url_encode(raw, bytes, out, BASE64URL_ENCODED_LEN(bytes) + 1);
}

/*
 * A name people read (TPP, person, account): the rule for such text
 * (src/common/textrule.h), its NFC form in out (2 * TEXTRULE_NAME_MAX + 1
 * bytes). -1, said on stderr, if it breaks the rule.
 */
int
ctl_name_ok(const char *what, const char *in, char *out, size_t len)
{
	char	why[TEXTRULE_ERROR_MAX];
	size_t	n;
	int	rc;

	if ((rc = textrule_check(in, strlen(in), TEXTRULE_NAME_MAX, out, len,
	    &n)) == 0)
		return (0);
	textrule_error(rc, TEXTRULE_NAME_MAX, why, sizeof(why));
	fprintf(stderr, "psd2ctl: %s %s\n", what, why);
	return (-1);
}

/* The row of a PSU or staff member (kind), role NULL for a PSU. */
static int
ctl_person_insert(PGconn *db, const char *kind, const char *username,
    const char *display, const char *hash, const char *box,
    const char *role)
{
	PGresult	*res;
	char		 actor[128];
	const char	*params[6] = { actor, username, display, hash, box, role };
	int		 added;

	ctl_actor(actor, sizeof(actor));
	res = ctl_exec(db, role != NULL ?
	    "SELECT operator_staff_add($1, $2, $3, $4, $5, $6)" :
	    "SELECT operator_psu_add($1, $2, $3, $4, $5)", role != NULL ? 6 : 5,
	    params);
	added = !PQgetisnull(res, 0, 0);
	if (added)
		printf("%s: %s (id %s)\n", kind, username,
		    PQgetvalue(res, 0, 0));
	else
		fprintf(stderr, "psd2ctl: %s %s exists\n", kind, username);
	PQclear(res);
	return (added ? 0 : 1);
}

int
ctl_person_add(PGconn *db, const char *kind, const char *username,
    const char *display, const char *password, const char *totp_b32,
    const char *role)
{
	struct keyring	 kr;
	uint8_t		 seed[64];
	char		 b32[128], pw[64], hash[PASSHASH_ENCODED_MAX];
	char		 box[512], aad[256];
	char		 nfc[2 * TEXTRULE_NAME_MAX + 1];
	int		 seedlen;

	if (ctl_name_ok("the name", display ? display : username, nfc,
	    sizeof(nfc)) == -1)
		return (1);
	if (password == NULL) {
		ctl_random_text(pw, 12);
		password = pw;
		printf("password: %s\n", pw);
	}
	if (totp_b32 == NULL) {
		if (crypto_random(seed, 20) == -1)
			return (1);
		base32_encode(seed, 20, b32, sizeof(b32));
		seedlen = 20;
	} else {
		snprintf(b32, sizeof(b32), "%s", totp_b32);
		seedlen = base32_decode(b32, strlen(b32), seed, sizeof(seed));
		if (seedlen < 10) {
			fprintf(stderr, "psd2ctl: TOTP secret must be base32 "
			    "of at least 80 bits\n");
			return (1);
		}
	}
	if (ctl_load_totp_keys(&kr) == -1)
		return (1);
	snprintf(aad, sizeof(aad), "totp:%s:%s", kind, username);
	if (secretbox_seal(&kr, seed, (size_t)seedlen, aad, box,
	    sizeof(box)) < 0 || passhash_make(password, hash,
	    sizeof(hash)) == -1) {
		fprintf(stderr, "psd2ctl: cannot protect the secrets\n");
		return (1);
	}
	OPENSSL_cleanse(seed, sizeof(seed));
	keyring_clear(&kr);
	if (ctl_person_insert(db, kind, username, nfc, hash, box,
	    strcmp(kind, "staff") == 0 ? role : NULL) != 0)
		return (1);
	printf("otpauth: otpauth://totp/psd2gate:%s?secret=%s&issuer=psd2gate"
	    "&algorithm=SHA1&digits=6&period=30\n", username, b32);
	if (role != NULL)
		printf("role: %s\n", role);
	return (0);
}

/* A staff member with a role: operator unless --role admin. */
static int
ctl_staff_add(PGconn *db, struct opts *o)
{
	const char	*role;

	role = opts_get(o, "role");
	if (role == NULL)
		role = "operator";
	if (strcmp(role, "operator") != 0 && strcmp(role, "admin") != 0) {
		fprintf(stderr, "psd2ctl: --role is operator or admin\n");
		return (2);
	}
	return (ctl_person_add(db, "staff", o->positional[0],
	    opts_get(o, "name"), opts_get(o, "password"),
	    opts_get(o, "totp-secret"), role));
}

static int
ctl_psu_unlock(PGconn *db, const char *username)
{
	PGresult	*res;
	char		 actor[128];
	const char	*params[2] = { actor, username };

	ctl_actor(actor, sizeof(actor));
	res = ctl_exec(db, "SELECT operator_psu_unlock($1, $2)", 2, params);
	printf("%s unlocked: %s\n", username,
	    strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? "yes" : "no such PSU");
	PQclear(res);
	return (0);
}

static int
ctl_people(PGconn *db, const char *kind, int argc, char **argv)
{
	struct opts	 o;

	if (argc < 2 || opts_parse(&o, argc - 1, argv + 1, "") == -1 ||
	    o.npositional != 1)
		return (2);
	if (strcmp(argv[0], "add") == 0 && strcmp(kind, "staff") == 0)
		return (ctl_staff_add(db, &o));
	if (strcmp(argv[0], "add") == 0)
		return (ctl_person_add(db, kind, o.positional[0],
		    opts_get(&o, "name"), opts_get(&o, "password"),
		    opts_get(&o, "totp-secret"), NULL));
	if (strcmp(argv[0], "unlock") == 0 && strcmp(kind, "psu") == 0)
		return (ctl_psu_unlock(db, o.positional[0]));
	return (2);
}

int
ctl_psu(PGconn *db, int argc, char **argv)
{
	return (ctl_people(db, "psu", argc, argv));
}

int
ctl_staff(PGconn *db, int argc, char **argv)
{
	return (ctl_people(db, "staff", argc, argv));
}

int
ctl_account_add(PGconn *db, const char *username, const char *iban,
    const char *currency, const char *name, const char *resource_id)
{
	PGresult	*res;
	char		 rid[37], actor[128];
	char		 nfc[2 * TEXTRULE_NAME_MAX + 1];
	const char	*params[6];

	if (name != NULL && ctl_name_ok("the account name", name, nfc,
	    sizeof(nfc)) == -1)
		return (1);
	if (resource_id == NULL) {
		if (crypto_uuid(rid) == -1)
			return (1);
		resource_id = rid;
	}
	ctl_actor(actor, sizeof(actor));
	params[0] = actor;
	params[1] = resource_id;
	params[2] = username;
	params[3] = iban;
	params[4] = name != NULL ? nfc : NULL;
	params[5] = currency;
	res = ctl_exec(db, "SELECT operator_account_add($1, $2, $3, $4, $5, "
	    "$6)", 6, params);
	if (PQgetisnull(res, 0, 0)) {
		fprintf(stderr, "psd2ctl: no PSU %s\n", username);
		PQclear(res);
		return (1);
	}
	printf("resourceId: %s\n", PQgetvalue(res, 0, 0));
	PQclear(res);
	return (0);
}

int
ctl_account(PGconn *db, int argc, char **argv)
{
	struct opts	o;

	if (argc < 1 || strcmp(argv[0], "add") != 0 ||
	    opts_parse(&o, argc - 1, argv + 1, "") == -1 ||
	    o.npositional != 4)
		return (2);
	return (ctl_account_add(db, o.positional[0], o.positional[1],
	    o.positional[2], o.positional[3], opts_get(&o, "resource-id")));
}
