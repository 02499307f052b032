/*
 * psd2ctl: operator CLI for psd2gate. Reads the same configuration file
 * as the service: -c FILE, else $PSD2_CONF, else PSD2CTL_DEFAULT_CONF.
 * This file only reads the arguments and dispatches to the commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/settings.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"
#include "ctl/ctl_device.h"

/* Where the operator guide (conf/README.md) installs it. */
#define PSD2CTL_DEFAULT_CONF	"/etc/psd2gate/psd2gate.conf"

static void
usage(void)
{
	fprintf(stderr,
	    "usage: psd2ctl [-c FILE] command ...\n"
	    "  (without -c: $PSD2_CONF, else " PSD2CTL_DEFAULT_CONF ")\n"
	    "  check-settings            check the file's psd2_ settings\n"
	    "  keys-init                 create missing key files\n"
	    "  migrate                   apply schema migrations\n"
	    "  sandbox-seed              load the sandbox demo data\n"
	    "  tpp add --name N --org-id ID --redirect-uri URI [...]\n"
	    "          [--client-id ID] [--secret S] [--pkce-required]\n"
	    "          [--access-ttl SECONDS]\n"
	    "  tpp list | tpp suspend ORG-ID | tpp activate ORG-ID\n"
	    "  tpp rehash                keyed, salted form for old secret rows\n"
	    "  tpp refresh-rotation CLIENT-ID on|off\n"
	    "                            rotate refresh tokens (default on)\n"
	    "  tpp par-required CLIENT-ID on|off\n"
	    "                            pushed authorisation requests only\n"
	    "                            (default off)\n"
	    "  tpp auth-method CLIENT-ID client_secret_basic|tls_client_auth|\n"
	    "          private_key_jwt   how the client authenticates\n"
	    "  tpp jwks CLIENT-ID FILE   the client's public keys (a JWK Set;\n"
	    "                            - reads standard input)\n"
	    "  psu add USER [--password P] [--totp-secret B32] [--name N]\n"
	    "  psu unlock USER\n"
	    "  account add USER IBAN CURRENCY NAME [--resource-id ID]\n"
	    "  staff add USER [--password P] [--totp-secret B32] [--name N]\n"
	    "      [--role operator|admin]\n"
	    "  device list|enrol SERIAL|assign SERIAL USER\n"
	    "  device approve|reject SERIAL   (another operator's request)\n"
	    "  device break-glass-assign SERIAL USER --reason TEXT\n"
	    "  device block|unassign|retire SERIAL\n"
	    "  audit seal | audit verify [--checkpoint FILE]\n"
	    "  audit checkpoint FILE     seal, then write the signed head\n"
	    "  audit list [--actor A] [--action X] [--limit N]\n"
	    "  risk show                 monitoring rules, levels, block list\n"
	    "  risk set RULE [--enable|--disable] [--score N]\n"
	    "      [--param NAME=VALUE ...]\n"
	    "  risk level LEVEL [--min-score N] [--action proceed|hold|reject]\n"
	    "  risk block IBAN --reason TEXT | risk unblock IBAN\n"
	    "  purge                     delete expired codes, tokens, ...\n"
	    "  report fraud --half YYYYH1|YYYYH2 [--csv]\n"
	    "                            EBA fraud statistics of a half-year\n"
	    "  report kpi [--quarter YYYYQn] [--csv]\n"
	    "                            the published KPI statistics\n");
	exit(2);
}

/*
 * The configuration file: -c FILE, else $PSD2_CONF, else the default.
 * A missing file is named with where the name came from, so that an
 * operator who forgot -c is not left with the bare usage text.
 */
static const char *
ctl_conf_path(int *argc, char ***argv)
{
	const char	*conf, *from;

	if (*argc >= 3 && strcmp((*argv)[1], "-c") == 0) {
		conf = (*argv)[2];
		from = "-c";
		*argc -= 3;
		*argv += 3;
	} else {
		if (*argc >= 2 && strcmp((*argv)[1], "-c") == 0)
			usage();
		conf = getenv("PSD2_CONF");
		from = "PSD2_CONF";
		if (conf == NULL || *conf == '\0') {
			conf = PSD2CTL_DEFAULT_CONF;
			from = "the default path";
		}
		*argc -= 1;
		*argv += 1;
	}
	if (*argc < 1)
		usage();
	if (access(conf, R_OK) == -1) {
		fprintf(stderr, "psd2ctl: configuration %s (from %s): %s; "
		    "give -c FILE or set PSD2_CONF\n", conf, from,
		    strerror(errno));
		exit(2);
	}
	return (conf);
}

int
main(int argc, char **argv)
{
	PGconn		*db;
	const char	*conf;
	char		 err[512], *kore_text;
	int		 rc;

	conf = ctl_conf_path(&argc, &argv);
	if (settings_load(conf, &kore_text, err, sizeof(err)) == -1) {
		fprintf(stderr, "psd2ctl: %s\n", err);
		return (1);
	}
	ctl_kore_root_set(kore_text);
	free(kore_text);
	/* The same check as psd2gate's at startup (settings_check.c). */
	if (settings_validate(err, sizeof(err)) == -1) {
		fprintf(stderr, "psd2ctl: %s: %s\n", conf, err);
		return (1);
	}
	if (strcmp(argv[0], "check-settings") == 0) {
		printf("%s: settings valid\n", conf);
		return (0);
	}
	if (strcmp(argv[0], "keys-init") == 0)
		return (ctl_keys_init());

	/* A report that makes its own connection (ctl_report.c). */
	if (strcmp(argv[0], "report") == 0 &&
	    ctl_report_alone(argc - 1, argv + 1, &rc)) {
		if (rc == 2)
			usage();
		return (rc);
	}
	db = ctl_connect(argv[0]);
	if (strcmp(argv[0], "migrate") == 0)
		rc = ctl_migrate(db);
	else if (strcmp(argv[0], "sandbox-seed") == 0)
		rc = ctl_sandbox_seed(db);
	else if (strcmp(argv[0], "tpp") == 0)
		rc = ctl_tpp(db, argc - 1, argv + 1);
	else if (strcmp(argv[0], "psu") == 0)
		rc = ctl_psu(db, argc - 1, argv + 1);
	else if (strcmp(argv[0], "staff") == 0)
		rc = ctl_staff(db, argc - 1, argv + 1);
	else if (strcmp(argv[0], "account") == 0)
		rc = ctl_account(db, argc - 1, argv + 1);
	else if (strcmp(argv[0], "device") == 0)
		rc = argc > 1 ? ctl_device(db, argc - 1, argv + 1) : 2;
	else if (strcmp(argv[0], "audit") == 0)
		rc = ctl_audit(db, argc - 1, argv + 1);
	else if (strcmp(argv[0], "purge") == 0)
		rc = ctl_purge(db);
	else if (strcmp(argv[0], "risk") == 0)
		rc = ctl_risk(db, argc - 1, argv + 1);
	else if (strcmp(argv[0], "report") == 0)
		rc = ctl_report(db, argc - 1, argv + 1);
	else
		usage();
	PQfinish(db);
	if (rc == 2)
		usage();
	return (rc);
}
