/* Periodic purge of expired codes, tokens, sessions and counters. */
#ifndef PSD2_HOUSEKEEPING_H
#define PSD2_HOUSEKEEPING_H

void	housekeeping_start(void);
/* The audit chain sealer timer (audit_sealer.c). */
void	audit_sealer_start(void);
/* Downtime events to kpi_incident (incidents.c), the probe (probe.c). */
void	incidents_start(void);
void	probe_start(void);

/* The KPI minutes' writer (kpi_flush.c); its rows' instance is
 * app_cfg.instance (common/config.h). */
void		 kpi_flush_start(void);

/*
 * At the worker's exit (kore_worker_teardown): a query of these timers
 * still running gives its connection back, so that Kore closes it; one
 * left bound to the timer was never closed (LeakSanitizer, downtime
 * suite, a stop while PostgreSQL was away).
 */
void	housekeeping_stop(void);
void	audit_sealer_stop(void);
void	incidents_stop(void);
void	kpi_flush_stop(void);

#endif
