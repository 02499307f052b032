/*
 * psd2ctl risk: the configuration of transaction monitoring (rules,
 * levels, the block list; src/db/functions/63_pis_risk.sql). Every change
 * goes through a function that writes its audit row in the same
 * transaction; psd2ctl's role may only read the tables.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

static void
ctl_risk_print(PGconn *db, const char *query)
{
	PGresult	*res;
	int		 i, j;

	res = ctl_exec(db, query, 0, NULL);
	for (i = 0; i < PQntuples(res); i++) {
		for (j = 0; j < PQnfields(res); j++)
			printf("%s%s", j ? "\t" : "", PQgetvalue(res, i, j));
		printf("\n");
	}
	PQclear(res);
}

static int
ctl_risk_show(PGconn *db)
{
	printf("# rule\tenabled\tscore\tparameters\n");
	ctl_risk_print(db, "SELECT rule, CASE WHEN enabled THEN 'on' "
	    "ELSE 'off' END, score, params::text FROM risk_rule ORDER BY rule");
	printf("# level\tmin_score\taction\n");
	ctl_risk_print(db, "SELECT level, min_score, action FROM risk_level "
	    "ORDER BY min_score");
	printf("# blocked IBAN\treason\tadded by\n");
	ctl_risk_print(db, "SELECT iban, reason, added_by FROM risk_blocklist "
	    "ORDER BY iban");
	return (0);
}

/* The result of one of the writers: 0 for ok, else a message and 1. */
static int
ctl_risk_result(PGresult *res, const char *what)
{
	const char	*r = PQgetvalue(res, 0, 0);
	int		 rc;

	rc = strcmp(r, "ok") == 0 ? 0 : 1;
	if (rc == 0)
		printf("%s: ok\n", what);
	else
		fprintf(stderr, "psd2ctl: %s: %s, nothing changed\n", what, r);
	PQclear(res);
	return (rc);
}

/* "NAME=VALUE" into obj: digits only as a number, else a string. */
static int
ctl_risk_param(json_t *obj, char *arg)
{
	char	*eq = strchr(arg, '=');
	char	*v, *end;
	long long n;

	if (eq == NULL || eq == arg || eq[1] == '\0')
		return (-1);
	*eq = '\0';
	v = eq + 1;
	if (isdigit((unsigned char)*v)) {
		n = strtoll(v, &end, 10);
		if (*end == '\0')
			return (json_object_set_new(obj, arg, json_integer(n)));
	}
	return (json_object_set_new(obj, arg, json_string(v)));
}

static int
ctl_risk_set(PGconn *db, int argc, char **argv)
{
	const char	*params[5];
	char		 actor[128];
	const char	*enabled = NULL, *score = NULL;
	char		*json = NULL;
	json_t		*obj;
	int		 i, rc;

	if (argc < 2)
		return (2);
	obj = json_object();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--enable") == 0)
			enabled = "true";
		else if (strcmp(argv[i], "--disable") == 0)
			enabled = "false";
		else if (strcmp(argv[i], "--score") == 0 && i + 1 < argc)
			score = argv[++i];
		else if (strcmp(argv[i], "--param") == 0 && i + 1 < argc &&
		    ctl_risk_param(obj, argv[++i]) == 0)
			continue;
		else {
			json_decref(obj);
			return (2);
		}
	}
	if (json_object_size(obj) > 0)
		json = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	ctl_actor(actor, sizeof(actor));
	params[0] = actor;
	params[1] = argv[0];
	params[2] = enabled;
	params[3] = score;
	params[4] = json;
	rc = ctl_risk_result(ctl_exec(db, "SELECT risk_rule_set($1, $2, "
	    "$3::boolean, $4::integer, $5::jsonb)", 5, params), argv[0]);
	free(json);
	return (rc);
}

static int
ctl_risk_level(PGconn *db, int argc, char **argv)
{
	const char	*params[4];
	char		 actor[128];
	const char	*min = NULL, *action = NULL;
	int		 i;

	if (argc < 2)
		return (2);
	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--min-score") == 0)
			min = argv[i + 1];
		else if (strcmp(argv[i], "--action") == 0)
			action = argv[i + 1];
		else
			return (2);
	}
	if (i != argc)
		return (2);
	ctl_actor(actor, sizeof(actor));
	params[0] = actor;
	params[1] = argv[0];
	params[2] = min;
	params[3] = action;
	return (ctl_risk_result(ctl_exec(db, "SELECT risk_level_set($1, $2, "
	    "$3::integer, $4)", 4, params), argv[0]));
}

static int
ctl_risk_block(PGconn *db, int argc, char **argv, int add)
{
	const char	*params[4];
	char		 actor[128];

	if (add ? (argc != 3 || strcmp(argv[1], "--reason") != 0) :
	    argc != 1)
		return (2);
	ctl_actor(actor, sizeof(actor));
	params[0] = actor;
	params[1] = argv[0];
	params[2] = add ? "true" : "false";
	params[3] = add ? argv[2] : NULL;
	return (ctl_risk_result(ctl_exec(db, "SELECT risk_block_set($1, $2, "
	    "$3::boolean, $4)", 4, params), argv[0]));
}

int
ctl_risk(PGconn *db, int argc, char **argv)
{
	if (argc < 1)
		return (2);
	if (strcmp(argv[0], "show") == 0 && argc == 1)
		return (ctl_risk_show(db));
	if (strcmp(argv[0], "set") == 0)
		return (ctl_risk_set(db, argc - 1, argv + 1));
	if (strcmp(argv[0], "level") == 0)
		return (ctl_risk_level(db, argc - 1, argv + 1));
	if (strcmp(argv[0], "block") == 0)
		return (ctl_risk_block(db, argc - 1, argv + 1, 1));
	if (strcmp(argv[0], "unblock") == 0)
		return (ctl_risk_block(db, argc - 1, argv + 1, 0));
	return (2);
}
