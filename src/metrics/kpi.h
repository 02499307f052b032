/*
 * The regulator's key performance indicators of this instance, per KPI
 * class (kpi_class.h) and per minute: requests, errors by cause, answers
 * slower than 30 s and a latency histogram. The parent maps the minutes
 * before the workers fork (like metrics_init); every worker adds to them
 * with atomic operations, and worker 1 writes the finished minutes to
 * the table kpi_minute (kpi_flush.c). src/db/README.md "kpi_minute"
 * describes the buckets and what a median read from them means.
 */
#ifndef PSD2_KPI_H
#define PSD2_KPI_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/kpi_class.h"

/* Upper bounds of the latency buckets in ms; one more counts the rest. */
#define KPI_BOUNDS		54
#define KPI_BUCKETS		(KPI_BOUNDS + 1)
/* GL 2.2: an answer later than this counts as not answered. */
#define KPI_SLOW_MS		30000
/* Minutes kept in memory (a day): the bound while the database is down. */
#define KPI_RING		1440

extern const uint32_t	kpi_bounds_ms[KPI_BOUNDS];

struct kpi_counts {
	uint64_t	requests;
	uint64_t	cause[KPI_CAUSES];	/* [KPI_CAUSE_NONE] unused */
	uint64_t	slow;			/* later than KPI_SLOW_MS */
	uint64_t	failed;			/* 5xx or later than 30 s */
	uint64_t	sum_ms;			/* for the mean (GL 2.3) */
	uint64_t	latency[KPI_BUCKETS];
};

/* In the parent, before the workers fork; off: nothing is recorded. */
void	kpi_init(int);
int	kpi_enabled(void);
/* One answer: the request's path, its status and milliseconds taken. */
void	kpi_record(const char *, int, uint64_t);
/* The latency bucket of ms. */
size_t	kpi_bucket(uint64_t);

/*
 * The flusher's view (worker 1): a copy of the finished minutes not yet
 * written, oldest first, into out (at most max); the minutes (since the
 * epoch) in minutes[]. Returns how many.
 */
size_t	kpi_finished(int64_t, int64_t *, struct kpi_counts (*)[KPI_CLASSES],
	    size_t);
/* The minute was written: its slot may be reused. */
void	kpi_written(int64_t);
/* Minutes overwritten before they could be written (the bound). */
uint64_t kpi_lost(void);

#endif
