/*
 * Downtime of an interface by EBA GL/2018/07, GL 2.2: five consecutive
 * requests of one KPI class (kpi_class.h) not answered within 30 s (a
 * 5xx answer, or one that took 30 s or more) start a downtime, whose
 * start is the first of the five; the first good answer ends it. One
 * detector per class and source ("service": the requests the instance
 * answered; "probe": the requests it sends itself, src/app/probe.c),
 * in memory that the parent maps before the workers fork, so that every
 * worker and the probe's thread feed the same one with atomic
 * operations. Starts and ends queue as events that worker 1 writes to
 * kpi_incident (src/app/incidents.c), with the times kept here: a
 * database outage is written when the database answers again.
 */
#ifndef PSD2_DOWNTIME_H
#define PSD2_DOWNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/kpi_class.h"

#define DOWNTIME_RUN		5	/* consecutive requests not answered */
#define DOWNTIME_SLOW_MS	30000	/* answered too late */
#define DOWNTIME_DETAIL_MAX	64

enum downtime_source {
	DOWNTIME_SERVICE,
	DOWNTIME_PROBE,
	DOWNTIME_SOURCES
};

enum downtime_kind {
	DOWNTIME_START,
	DOWNTIME_END,
	DOWNTIME_RESTART	/* the instance started: no class, no source */
};

struct downtime_event {
	enum kpi_class		 class;
	enum downtime_source	 source;
	enum downtime_kind	 kind;
	int64_t			 at_ms;		/* Unix time, milliseconds */
	char			 detail[DOWNTIME_DETAIL_MAX];
};

/* The header the probe sends, with the instance's secret as its value. */
#define DOWNTIME_PROBE_HEADER	"x-psd2gate-probe"

struct http_request;

/* In the parent, before the workers fork. */
void	downtime_init(void);

/*
 * One answer of a class: status 0 for none at all (connection failed or
 * timed out); started_ms and answered_ms in Unix milliseconds.
 */
void	downtime_feed(enum kpi_class, enum downtime_source, int, int64_t,
	    int64_t);
/* The answer of a request, from its path, status and arrival time. */
void	downtime_request(struct http_request *, int);

/* The request is the instance's own probe (a secret header). */
int	downtime_is_probe(struct http_request *);
/* The probe header's value (hex of the secret). */
const char	*downtime_probe_secret(void);

/* The oldest event not yet written: 1 and *ev, or 0 when none. */
int	downtime_event_peek(struct downtime_event *);
/* The oldest event was written. */
void	downtime_event_done(void);

const char	*downtime_source_name(enum downtime_source);
const char	*downtime_kind_name(enum downtime_kind);
int64_t		 downtime_now_ms(void);

#endif
