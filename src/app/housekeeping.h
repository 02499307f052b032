/* Periodic purge of expired codes, tokens, sessions and counters. */
#ifndef PSD2_HOUSEKEEPING_H
#define PSD2_HOUSEKEEPING_H

void	housekeeping_start(void);
/* The audit chain sealer timer (audit_sealer.c). */
void	audit_sealer_start(void);

/* The KPI minutes' writer (kpi_flush.c) and this instance's name
 * (psd2_instance, else the host name), the key of its rows. */
void		 kpi_flush_start(void);
const char	*kpi_instance_name(void);

#endif
