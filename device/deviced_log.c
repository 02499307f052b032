/*
 * psd2-deviced's log: one line per event, on stderr in the foreground
 * (journald adds time and unit), to syslog once the daemon detached.
 * Shared by both threads; syslog(3) and stdio are thread-safe.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "deviced_common.h"

static int	log_syslog;

void
devd_log_to_syslog(void)
{
	openlog("psd2-deviced", LOG_PID, LOG_DAEMON);
	log_syslog = 1;
}

void
devd_log(const char *fmt, ...)
{
	va_list	ap;
	char	line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_syslog) {
		syslog(LOG_INFO, "%s", line);
		return;
	}
	fprintf(stderr, "psd2-deviced: %s\n", line);
}
