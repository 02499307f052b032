/*
 * psd2-deviced's metrics: a Prometheus text file (the node exporter's
 * textfile collector reads it), written whole to a temporary name and
 * renamed, so a reader never sees half of it. The daemon has no listener
 * of its own: one file per host, no port to secure.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "deviced_common.h"

/* The host label's value, escaped as the exposition format asks. */
static void
label_escape(const char *in, char *out, size_t len)
{
	size_t	o = 0;

	for (; *in != '\0' && o + 3 < len; in++) {
		if (*in == '\\' || *in == '"')
			out[o++] = '\\';
		if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
			continue;
		}
		out[o++] = *in;
	}
	out[o] = '\0';
}

static void
metric(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int
devd_metrics_write(const char *path, const char *host,
    const struct devd_stats *st)
{
	static const char *const	names[DEVD_OUT_KINDS] = {
		"approved", "declined", "timed_out", "failed", "released"
	};
	static const char *const	nw_names[DEVD_NW_KINDS] = {
		"refused", "given_up"
	};
	char				 tmp[1100], h[260];
	FILE				*f;
	int				 i;

	if (path[0] == '\0')
		return (0);
	label_escape(host, h, sizeof(h));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL)
		return (-1);
	metric(f, "psd2_deviced_devices_present", "gauge",
	    "Authenticators plugged into this daemon's host now.");
	fprintf(f, "psd2_deviced_devices_present{host=\"%s\"} %d\n", h,
	    st->present);
	metric(f, "psd2_deviced_devices_seen", "gauge",
	    "Distinct authenticators this daemon has seen since it started.");
	fprintf(f, "psd2_deviced_devices_seen{host=\"%s\"} %d\n", h, st->seen);
	metric(f, "psd2_deviced_challenge_ends_total", "counter",
	    "Challenge ends this daemon wrote to the database, by outcome.");
	for (i = 0; i < DEVD_OUT_KINDS; i++)
		fprintf(f, "psd2_deviced_challenge_ends_total{host=\"%s\","
		    "outcome=\"%s\"} %llu\n", h, names[i],
		    (unsigned long long)st->ends[i]);
	metric(f, "psd2_deviced_challenge_ends_not_written_total", "counter",
	    "Challenge ends this daemon did not write, by reason: refused "
	    "(no longer its claim: cancelled by the service, lease lost) or "
	    "given_up (the database refused the write until too late).");
	for (i = 0; i < DEVD_NW_KINDS; i++)
		fprintf(f, "psd2_deviced_challenge_ends_not_written_total{"
		    "host=\"%s\",reason=\"%s\"} %llu\n", h, nw_names[i],
		    (unsigned long long)st->not_written[i]);
	metric(f, "psd2_deviced_write_retries_total", "counter",
	    "Writes of a challenge end tried again after a database error "
	    "that can pass (lock or statement timeout, serialisation "
	    "failure, deadlock).");
	fprintf(f, "psd2_deviced_write_retries_total{host=\"%s\"} %llu\n",
	    h, (unsigned long long)st->write_retries);
	metric(f, "psd2_deviced_database_connected", "gauge",
	    "Whether the daemon holds a database connection now.");
	fprintf(f, "psd2_deviced_database_connected{host=\"%s\"} %d\n", h,
	    st->connected);
	metric(f, "psd2_deviced_database_connects_total", "counter",
	    "Database connections made (the first and every reconnect).");
	fprintf(f, "psd2_deviced_database_connects_total{host=\"%s\"} %llu\n",
	    h, (unsigned long long)st->connects);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		(void)unlink(tmp);
		return (-1);
	}
	return (0);
}
