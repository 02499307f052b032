/*
 * Prometheus metrics of one psd2gate instance. The parent maps one shared
 * anonymous region before the workers fork; every worker adds to it with
 * atomic operations, so one scrape of any worker covers all of them.
 * Served on a listener of its own (conf/metrics.conf), never on the
 * public one.
 */
#ifndef PSD2_METRICS_H
#define PSD2_METRICS_H

#include <stddef.h>
#include <stdint.h>

enum metrics_family {
	METRICS_HTTP,		/* histogram: route, method, status */
	METRICS_DB_QUERY,	/* histogram: query time on the connection */
	METRICS_DB_POOL_WAIT,	/* histogram: queued for a free connection */
	METRICS_DB_UNAVAILABLE,	/* counter: not run, database unreachable */
	METRICS_DB_ERRORS,	/* counter: failed on the server */
	METRICS_TOKEN_GRANTS,	/* counter: grant_type, outcome */
	METRICS_SCA,		/* counter: kind, outcome */
	METRICS_TPP_REVOCATION,	/* counter: reason (src/tpp/trust.h) */
	METRICS_INTERFACE_DOWN,	/* gauge: class, source (downtime.h) */
	METRICS_INCIDENTS,	/* counter: class, source */
	METRICS_PROBE,		/* counter: class, outcome (src/app/probe.c) */
	METRICS_FAMILIES
};

/* In the parent, before the workers fork. */
void	metrics_init(void);

/* Observations; labels are written as name, value pairs. */
void	metrics_http(const char *, const char *, int, uint64_t);
void	metrics_observe_us(enum metrics_family, uint64_t);
void	metrics_count(enum metrics_family, const char *, const char *,
	    const char *, const char *);
void	metrics_count_n(enum metrics_family, const char *, const char *,
	    const char *, const char *, uint64_t);
/* A gauge's value (stored in its slot's count). */
void	metrics_gauge_set(enum metrics_family, const char *, const char *,
	    const char *, const char *, uint64_t);
void	metrics_sca(const char *, const char *);
void	metrics_token_grant(const char *, const char *);

/* The text exposition of every family (a malloc'ed string). */
char	*metrics_render(size_t *);
uint64_t metrics_now_us(void);

#endif
