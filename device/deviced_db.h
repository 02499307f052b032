/*
 * psd2-deviced's main thread (deviced_db.c): the only thread that calls
 * libpq.
 */
#ifndef PSD2_DEVICED_DB_H
#define PSD2_DEVICED_DB_H

#include "deviced_common.h"

/* Runs until a signal arrives on sigfd; returns the process exit code. */
int	devd_db_run(const struct devd_conf *, struct dqueue *from_usb,
	    struct dqueue *to_usb, int sigfd);

#endif
