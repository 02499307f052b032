/*
 * psd2ctl report: the reports the bank owes its authority, one command
 * of the group per row of ctl_reports.
 *	report fraud --half 2026H2 [--csv]	(ctl_report_fraud.c)
 *	report kpi [--quarter 2026Q4] [--csv]
 * The quarter's KPIs (RTS Art. 32, EBA GL/2018/07 GL 2.4) as a table,
 * or as the CSV of the public /psd2/statistics.csv, byte for byte (both
 * are kpi_report_csv in src/db/functions/80_kpi.sql). Without
 * --quarter, the current one (UTC).
 */
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

/* One of run (psd2ctl's connection) and run_alone (its own). */
struct ctl_report {
	const char	*name;
	int		(*run)(PGconn *, int, char **);
	int		(*run_alone)(int, char **);
};

static int	ctl_report_kpi(PGconn *, int, char **);

static const struct ctl_report	ctl_reports[] = {
	{ "fraud", NULL, ctl_report_fraud },
	{ "kpi", ctl_report_kpi, NULL },
};

static const struct ctl_report *
ctl_report_find(int argc, char **argv)
{
	size_t	i;

	if (argc < 1)
		return (NULL);
	for (i = 0; i < sizeof(ctl_reports) / sizeof(ctl_reports[0]); i++) {
		if (strcmp(argv[0], ctl_reports[i].name) == 0)
			return (&ctl_reports[i]);
	}
	return (NULL);
}

static const char *
ctl_cell(PGresult *res, int row, int col)
{
	return (PQgetisnull(res, row, col) ? "-" : PQgetvalue(res, row, col));
}

static void
ctl_report_kpi_text(PGresult *res)
{
	int	i;

	printf("%-10s %-9s %-9s %9s %8s %10s %8s %7s %7s %7s %7s %7s %7s "
	    "%5s\n", "date", "interface", "service", "requests", "uptime%",
	    "downtime_s", "avail%", "mean", "median", "p95", "bank%", "tpp%",
	    "psu%", "slow");
	for (i = 0; i < PQntuples(res); i++) {
		printf("%-10s %-9s %-9s %9s %8s %10s %8s %7s %7s %7s %7s %7s "
		    "%7s %5s\n", PQgetisnull(res, i, 0) ? "quarter" :
		    PQgetvalue(res, i, 0), ctl_cell(res, i, 1),
		    ctl_cell(res, i, 2), ctl_cell(res, i, 3),
		    ctl_cell(res, i, 4), ctl_cell(res, i, 5),
		    ctl_cell(res, i, 6), ctl_cell(res, i, 7),
		    ctl_cell(res, i, 8), ctl_cell(res, i, 9),
		    ctl_cell(res, i, 10), ctl_cell(res, i, 11),
		    ctl_cell(res, i, 12), ctl_cell(res, i, 13));
	}
}

static int
ctl_report_kpi(PGconn *db, int argc, char **argv)
{
	PGresult	*res;
	const char	*params[1] = { NULL };
	char		*csv;
	int		 i, as_csv = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--csv") == 0)
			as_csv = 1;
		else if (strcmp(argv[i], "--quarter") == 0 && i + 1 < argc)
			params[0] = argv[++i];
		else
			return (2);
	}
	if (as_csv) {
		res = ctl_exec(db, "SELECT kpi_report_csv(coalesce($1, "
		    "kpi_current_quarter()))", 1, params);
		csv = PQgetvalue(res, 0, 0);
		fwrite(csv, 1, strlen(csv), stdout);
		PQclear(res);
		return (0);
	}
	res = ctl_exec(db, "SELECT q.q, d.first_day, d.last_day FROM "
	    "coalesce($1, kpi_current_quarter()) AS q(q), "
	    "kpi_quarter_days(q.q) AS d", 1, params);
	printf("KPIs of %s, %s to %s (UTC); mean, median and p95 in ms\n",
	    PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
	    PQgetvalue(res, 0, 2));
	PQclear(res);
	res = ctl_exec(db, "SELECT k.day, k.interface, k.class, k.requests, "
	    "k.uptime_pct, k.downtime_s, k.availability_pct, k.mean_ms, "
	    "k.median_ms, k.p95_ms, k.err_bank_pct, k.err_tpp_pct, "
	    "k.err_psu_pct, k.slow "
	    "FROM coalesce($1, kpi_current_quarter()) AS q(q), "
	    "kpi_quarter_days(q.q) AS d, "
	    "kpi_report(d.first_day, d.last_day) AS k", 1, params);
	ctl_report_kpi_text(res);
	PQclear(res);
	return (0);
}

int
ctl_report_alone(int argc, char **argv, int *rc)
{
	const struct ctl_report	*r;

	if ((r = ctl_report_find(argc, argv)) == NULL || r->run_alone == NULL)
		return (0);
	*rc = r->run_alone(argc - 1, argv + 1);
	return (1);
}

int
ctl_report(PGconn *db, int argc, char **argv)
{
	const struct ctl_report	*r;

	if ((r = ctl_report_find(argc, argv)) == NULL || r->run == NULL)
		return (2);
	return (r->run(db, argc - 1, argv + 1));
}
