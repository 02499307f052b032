/*
 * The audit chain's sealer in the service (README "Audit log"): one
 * worker calls audit_seal() every psd2_audit_seal_interval seconds
 * through an async query bound to a callback, and logs the head after
 * each round that sealed rows (the exported head hash; psd2ctl audit
 * checkpoint writes the signed file). Several instances may each run it:
 * audit_seal takes an advisory lock, a second caller seals nothing.
 */
#include <sys/types.h>

#include <stdlib.h>

#include <kore.h>
#include <pgsql.h>

#include "common/config.h"
#include "app/housekeeping.h"

static struct kore_pgsql	sealer_pg;
static int			sealer_busy;

static void
sealer_result(struct kore_pgsql *pg)
{
	if (kore_pgsql_ntuples(pg) != 1 ||
	    atoi(kore_pgsql_getvalue(pg, 0, 0)) == 0)
		return;
	kore_log(LOG_NOTICE, "audit head seq=%s hash=%s sealed=%s",
	    kore_pgsql_getvalue(pg, 0, 1), kore_pgsql_getvalue(pg, 0, 2),
	    kore_pgsql_getvalue(pg, 0, 0));
}

static void
sealer_done(struct kore_pgsql *pg, void *arg)
{
	(void)arg;
	switch (pg->state) {
	case KORE_PGSQL_STATE_WAIT:
		break;
	case KORE_PGSQL_STATE_COMPLETE:
		kore_pgsql_cleanup(pg);
		sealer_busy = 0;
		break;
	case KORE_PGSQL_STATE_ERROR:
		kore_pgsql_logerror(pg);
		kore_pgsql_continue(pg);
		break;
	case KORE_PGSQL_STATE_RESULT:
		sealer_result(pg);
		kore_pgsql_continue(pg);
		break;
	default:
		kore_pgsql_continue(pg);
		break;
	}
}

static void
sealer_run(void *arg, u_int64_t now)
{
	(void)arg;
	(void)now;
	if (sealer_busy)
		return;
	kore_pgsql_init(&sealer_pg);
	kore_pgsql_bind_callback(&sealer_pg, sealer_done, NULL);
	if (!kore_pgsql_setup(&sealer_pg, APP_DB, KORE_PGSQL_ASYNC)) {
		if (sealer_pg.state != KORE_PGSQL_STATE_INIT)
			kore_pgsql_logerror(&sealer_pg);
		kore_pgsql_cleanup(&sealer_pg);
		return;
	}
	sealer_busy = 1;
	if (!kore_pgsql_query(&sealer_pg, "SELECT sealed, head_seq, "
	    "encode(head_hash, 'hex') FROM audit_seal(10000)")) {
		kore_pgsql_logerror(&sealer_pg);
		kore_pgsql_cleanup(&sealer_pg);
		sealer_busy = 0;
	}
}

void
audit_sealer_start(void)
{
	if (worker == NULL || worker->id != 1 ||
	    app_cfg.audit_seal_interval <= 0)
		return;
	kore_timer_add(sealer_run,
	    (u_int64_t)app_cfg.audit_seal_interval * 1000, NULL, 0);
}

void
audit_sealer_stop(void)
{
	if (!sealer_busy)
		return;
	kore_pgsql_cleanup(&sealer_pg);
	sealer_busy = 0;
}
