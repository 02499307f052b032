/*
 * Worker 1 writes the downtime starts and ends the detector queued
 * (src/metrics/downtime.h) to kpi_incident, oldest first, one statement
 * each (kpi_incident_event() also writes the audit row). While the
 * database does not answer the events stay queued with their times and
 * are written when it answers again: a downtime of the database itself
 * is recorded as it happened. An event the database refuses for good
 * (not a connection failure) is logged and dropped, so that it cannot
 * hold up the ones after it.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <pgsql.h>

#include "app/housekeeping.h"
#include "common/config.h"
#include "metrics/downtime.h"

#define INCIDENTS_TICK_MS	1000

static struct kore_pgsql	incidents_pg;
static int			incidents_busy;
static int			incidents_failed;
static int			incidents_permanent;
static struct downtime_event	incidents_ev;
static char			incidents_at[24];

static void	incidents_next(void);

/*
 * A failure of the connection (SQLSTATE class 08), a server shutting
 * down (57) or no answer at all is retried; anything else would fail
 * again.
 */
static int
incidents_error_is_permanent(struct kore_pgsql *pg)
{
	const char	*state;

	if (pg->result == NULL)
		return (0);
	state = PQresultErrorField(pg->result, PG_DIAG_SQLSTATE);
	if (state == NULL)
		return (0);
	return (strncmp(state, "08", 2) != 0 && strncmp(state, "57", 2) != 0);
}

static void
incidents_done(struct kore_pgsql *pg, void *arg)
{
	(void)arg;
	switch (pg->state) {
	case KORE_PGSQL_STATE_WAIT:
		break;
	case KORE_PGSQL_STATE_COMPLETE:
		kore_pgsql_cleanup(pg);
		incidents_busy = 0;
		if (incidents_failed && !incidents_permanent)
			return;
		if (incidents_permanent)
			kore_log(LOG_ERR, "downtime: event %s %s at %s "
			    "dropped", kpi_class_name(incidents_ev.class),
			    downtime_kind_name(incidents_ev.kind),
			    incidents_at);
		downtime_event_done();
		incidents_next();
		break;
	case KORE_PGSQL_STATE_ERROR:
		kore_pgsql_logerror(pg);
		incidents_failed = 1;
		incidents_permanent = incidents_error_is_permanent(pg);
		kore_pgsql_continue(pg);
		break;
	case KORE_PGSQL_STATE_RESULT:
	default:
		kore_pgsql_continue(pg);
		break;
	}
}

static void
incidents_next(void)
{
	const char	*kind, *class, *source;
	int		 restart;

	if (incidents_busy || !downtime_event_peek(&incidents_ev))
		return;
	snprintf(incidents_at, sizeof(incidents_at), "%lld",
	    (long long)incidents_ev.at_ms);
	kind = downtime_kind_name(incidents_ev.kind);
	restart = incidents_ev.kind == DOWNTIME_RESTART;
	/* A restart concerns the instance: no class, no source (NULL). */
	class = restart ? NULL : kpi_class_name(incidents_ev.class);
	source = restart ? NULL : downtime_source_name(incidents_ev.source);
	kore_pgsql_init(&incidents_pg);
	kore_pgsql_bind_callback(&incidents_pg, incidents_done, NULL);
	if (!kore_pgsql_setup(&incidents_pg, APP_DB, KORE_PGSQL_ASYNC)) {
		if (incidents_pg.state != KORE_PGSQL_STATE_INIT)
			kore_pgsql_logerror(&incidents_pg);
		kore_pgsql_cleanup(&incidents_pg);
		return;
	}
	incidents_busy = 1;
	incidents_failed = 0;
	incidents_permanent = 0;
	if (!kore_pgsql_query_params(&incidents_pg,
	    "SELECT kpi_incident_event($1, $2, $3, $4, "
	    "'epoch'::timestamptz + $5::bigint * interval '1 millisecond', $6)",
	    0, 6,
	    class, class ? strlen(class) : 0, 0,
	    source, source ? strlen(source) : 0, 0,
	    app_cfg.instance, strlen(app_cfg.instance), 0,
	    kind, strlen(kind), 0,
	    incidents_at, strlen(incidents_at), 0,
	    incidents_ev.detail, strlen(incidents_ev.detail), 0)) {
		kore_pgsql_logerror(&incidents_pg);
		kore_pgsql_cleanup(&incidents_pg);
		incidents_busy = 0;
	}
}

static void
incidents_tick(void *arg, u_int64_t now)
{
	(void)arg;
	(void)now;
	incidents_next();
}

void
incidents_start(void)
{
	if (worker == NULL || worker->id != 1)
		return;
	kore_timer_add(incidents_tick, INCIDENTS_TICK_MS, NULL, 0);
}

void
incidents_stop(void)
{
	if (!incidents_busy)
		return;
	kore_pgsql_cleanup(&incidents_pg);
	incidents_busy = 0;
}
