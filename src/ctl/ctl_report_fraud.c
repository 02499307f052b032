/*
 * psd2ctl report fraud --half YYYYH1|YYYYH2 [--csv]: the semi-annual
 * fraud statistics of EBA/GL/2018/05 for credit transfers initiated via
 * PISPs (every payment psd2gate executes came through a TPP), computed
 * by fraud_report in src/db/functions/64_pis_fraud.sql. --csv prints
 * fraud_report_csv, byte for byte the staff page's download; without it
 * a table for people.
 */
#include <stdio.h>
#include <string.h>

#include "common/settings.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

#define REPORT_COUNTRY_DEFAULT	"DE"

static int
report_fraud_table(PGconn *db, const char *half, const char *country)
{
	PGresult	*res;
	const char	*params[2] = { half, country };
	int		 i;

	res = ctl_exec(db, "SELECT code, area, coalesce(volume::text, '-'), "
	    "coalesce(fraud_eur(value_minor), '-'), fraud_volume, "
	    "fraud_eur(fraud_value_minor), item, fraud_country_tz($2) "
	    "FROM fraud_report($1, $2) ORDER BY ord", 2, params);
	printf("Fraud statistics (EBA/GL/2018/05), credit transfers "
	    "initiated via PISPs, %s\n", half);
	if (PQntuples(res) > 0)
		printf("half-year in %s (bank country %s); values in EUR; "
		    "executed payments only\n\n", PQgetvalue(res, 0, 7),
		    country);
	printf("%-10s %-20s %10s %16s %10s %16s  %s\n", "row", "geography",
	    "volume", "value", "fraud vol", "fraud value", "item");
	for (i = 0; i < PQntuples(res); i++)
		printf("%-10s %-20s %10s %16s %10s %16s  %s\n",
		    PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		    PQgetvalue(res, i, 2), PQgetvalue(res, i, 3),
		    PQgetvalue(res, i, 4), PQgetvalue(res, i, 5),
		    PQgetvalue(res, i, 6));
	PQclear(res);
	return (0);
}

static int
report_fraud_csv(PGconn *db, const char *half, const char *country)
{
	PGresult	*res;
	const char	*params[2] = { half, country };

	res = ctl_exec(db, "SELECT fraud_report_csv($1, $2)", 2, params);
	fputs(PQgetvalue(res, 0, 0), stdout);
	PQclear(res);
	return (0);
}

int
ctl_report_fraud(int argc, char **argv)
{
	PGconn		*db;
	const char	*half = NULL, *country;
	int		 csv = 0, i, rc;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--half") == 0 && i + 1 < argc)
			half = argv[++i];
		else if (strcmp(argv[i], "--csv") == 0)
			csv = 1;
		else
			return (2);
	}
	if (half == NULL)
		return (2);
	/* The database checks the form too; this gives the clearer error. */
	if (strlen(half) != 6 || strspn(half, "0123456789") != 4 ||
	    half[4] != 'H' || (half[5] != '1' && half[5] != '2')) {
		fprintf(stderr, "psd2ctl: --half %s: give YYYYH1 (January to "
		    "June) or YYYYH2 (July to December)\n", half);
		return (1);
	}
	country = settings_get("bank_country", REPORT_COUNTRY_DEFAULT);
	db = ctl_connect("report");
	if (csv)
		rc = report_fraud_csv(db, half, country);
	else
		rc = report_fraud_table(db, half, country);
	PQfinish(db);
	return (rc);
}
