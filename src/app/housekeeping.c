/*
 * One worker runs psd2_purge() every psd2_purge_interval seconds through
 * an async query bound to a callback (no request). Several instances may
 * each run it: the purge is idempotent.
 */
#include <sys/types.h>

#include <kore.h>
#include <pgsql.h>

#include "common/config.h"
#include "app/housekeeping.h"

static struct kore_pgsql	housekeeping_pg;
static int			housekeeping_busy;

static void
housekeeping_done(struct kore_pgsql *pg, void *arg)
{
	(void)arg;
	switch (pg->state) {
	case KORE_PGSQL_STATE_WAIT:
		break;
	case KORE_PGSQL_STATE_COMPLETE:
		kore_pgsql_cleanup(pg);
		housekeeping_busy = 0;
		break;
	case KORE_PGSQL_STATE_ERROR:
		kore_pgsql_logerror(pg);
		kore_pgsql_continue(pg);
		break;
	case KORE_PGSQL_STATE_RESULT:
	default:
		kore_pgsql_continue(pg);
		break;
	}
}

static void
housekeeping_run(void *arg, u_int64_t now)
{
	(void)arg;
	(void)now;
	if (housekeeping_busy)
		return;
	kore_pgsql_init(&housekeeping_pg);
	kore_pgsql_bind_callback(&housekeeping_pg, housekeeping_done, NULL);
	if (!kore_pgsql_setup(&housekeeping_pg, APP_DB, KORE_PGSQL_ASYNC)) {
		if (housekeeping_pg.state != KORE_PGSQL_STATE_INIT)
			kore_pgsql_logerror(&housekeeping_pg);
		kore_pgsql_cleanup(&housekeeping_pg);
		return;
	}
	housekeeping_busy = 1;
	if (!kore_pgsql_query(&housekeeping_pg, "SELECT psd2_purge()")) {
		kore_pgsql_logerror(&housekeeping_pg);
		kore_pgsql_cleanup(&housekeeping_pg);
		housekeeping_busy = 0;
	}
}

void
housekeeping_start(void)
{
	if (worker == NULL || worker->id != 1 || app_cfg.purge_interval <= 0)
		return;
	kore_timer_add(housekeeping_run,
	    (u_int64_t)app_cfg.purge_interval * 1000, NULL, 0);
}

void
housekeeping_stop(void)
{
	if (!housekeeping_busy)
		return;
	kore_pgsql_cleanup(&housekeeping_pg);
	housekeeping_busy = 0;
}
