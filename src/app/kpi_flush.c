/*
 * Worker 1 writes the KPI minutes of this instance (src/metrics/kpi.h)
 * every psd2_kpi_flush_seconds through kpi_minute_record(), keyed by
 * psd2_instance: the running minute too (a row is replaced, never added
 * to, so writing it again with the newer counts is harmless), and the
 * finished ones until the database has taken them. While the database
 * does not answer the minutes stay in memory, a day of them at most
 * (KPI_RING); they are written, oldest first, when it answers again.
 * Each round also sums the days past into kpi_day (kpi_rollup).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <kore.h>
#include <pgsql.h>

#include "app/housekeeping.h"
#include "common/config.h"
#include "common/settings.h"
#include "metrics/kpi.h"

/* Minutes in one statement: a backlog goes out over several rounds. */
#define KPI_FLUSH_BATCH		60
/* A minute is finished this long after its end: late answers land. */
#define KPI_FLUSH_GRACE		5

static struct kore_pgsql	kpi_pg;
static int			kpi_busy;
static int			kpi_failed;
static int64_t			kpi_sent[KPI_FLUSH_BATCH];
static size_t			kpi_nsent;
static int64_t			kpi_cutoff;
static uint64_t			kpi_lost_logged;

static void
kpi_flush_done(struct kore_pgsql *pg, void *arg)
{
	size_t	i;

	(void)arg;
	switch (pg->state) {
	case KORE_PGSQL_STATE_WAIT:
		break;
	case KORE_PGSQL_STATE_COMPLETE:
		if (!kpi_failed) {
			for (i = 0; i < kpi_nsent; i++) {
				if (kpi_sent[i] < kpi_cutoff)
					kpi_written(kpi_sent[i]);
			}
		}
		kore_pgsql_cleanup(pg);
		kpi_busy = 0;
		break;
	case KORE_PGSQL_STATE_ERROR:
		kpi_failed = 1;
		kore_pgsql_logerror(pg);
		kore_pgsql_continue(pg);
		break;
	case KORE_PGSQL_STATE_RESULT:
	default:
		kore_pgsql_continue(pg);
		break;
	}
}

static json_t *
kpi_row(int64_t minute, enum kpi_class class, const struct kpi_counts *c)
{
	json_t	*lat;
	size_t	 i;

	lat = json_array();
	for (i = 0; i < KPI_BUCKETS; i++)
		json_array_append_new(lat, json_integer((json_int_t)
		    c->latency[i]));
	return (json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:o}",
	    "minute", (json_int_t)minute * 60, "class", kpi_class_name(class),
	    "requests", (json_int_t)c->requests,
	    "bank", (json_int_t)c->cause[KPI_CAUSE_BANK],
	    "tpp", (json_int_t)c->cause[KPI_CAUSE_TPP],
	    "psu", (json_int_t)c->cause[KPI_CAUSE_PSU],
	    "slow", (json_int_t)c->slow, "failed", (json_int_t)c->failed,
	    "sum_ms", (json_int_t)c->sum_ms, "latency", lat));
}

/* The minutes to send as one JSON array, NULL when there is nothing. */
static char *
kpi_batch(int64_t now_min)
{
	static struct kpi_counts	counts[KPI_FLUSH_BATCH][KPI_CLASSES];
	json_t				*rows;
	char				*text;
	size_t				 i, k;

	kpi_nsent = kpi_finished(now_min, kpi_sent, counts, KPI_FLUSH_BATCH);
	if (kpi_nsent == 0)
		return (NULL);
	rows = json_array();
	for (i = 0; i < kpi_nsent; i++) {
		for (k = 0; k < KPI_CLASSES; k++) {
			if (counts[i][k].requests == 0)
				continue;
			json_array_append_new(rows, kpi_row(kpi_sent[i], k,
			    &counts[i][k]));
		}
	}
	text = json_dumps(rows, JSON_COMPACT);
	json_decref(rows);
	return (text);
}

static void
kpi_flush_run(void *arg, u_int64_t msec)
{
	char	*text;
	time_t	 now;

	(void)arg;
	(void)msec;
	if (kpi_busy)
		return;
	if (kpi_lost() != kpi_lost_logged) {
		kpi_lost_logged = kpi_lost();
		kore_log(LOG_WARNING, "kpi: %llu minutes lost, not written "
		    "within a day", (unsigned long long)kpi_lost_logged);
	}
	now = time(NULL);
	kpi_cutoff = (int64_t)(now - KPI_FLUSH_GRACE) / 60;
	if ((text = kpi_batch((int64_t)now / 60)) == NULL)
		return;
	kore_pgsql_init(&kpi_pg);
	kore_pgsql_bind_callback(&kpi_pg, kpi_flush_done, NULL);
	if (!kore_pgsql_setup(&kpi_pg, APP_DB, KORE_PGSQL_ASYNC)) {
		if (kpi_pg.state != KORE_PGSQL_STATE_INIT)
			kore_pgsql_logerror(&kpi_pg);
		kore_pgsql_cleanup(&kpi_pg);
		free(text);
		return;
	}
	kpi_busy = 1;
	kpi_failed = 0;
	if (!kore_pgsql_query_params(&kpi_pg,
	    "SELECT kpi_minute_record($1, $2::jsonb), kpi_rollup()", 0, 2,
	    app_cfg.instance, (int)strlen(app_cfg.instance), 0, text,
	    (int)strlen(text),
	    0)) {
		kore_pgsql_logerror(&kpi_pg);
		kore_pgsql_cleanup(&kpi_pg);
		kpi_busy = 0;
	}
	free(text);
}

void
kpi_flush_start(void)
{
	int64_t	secs;

	if (worker == NULL || worker->id != 1 || !kpi_enabled())
		return;
	secs = settings_int("kpi_flush_seconds", 10);
	kore_timer_add(kpi_flush_run, (u_int64_t)secs * 1000, NULL, 0);
}

void
kpi_flush_stop(void)
{
	if (!kpi_busy)
		return;
	kore_pgsql_cleanup(&kpi_pg);
	kpi_busy = 0;
}
