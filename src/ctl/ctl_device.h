/*
 * psd2ctl device list|enrol|assign|approve|reject|break-glass-assign|
 * block|unassign|retire. argv[0] is the subcommand. Returns 0 ok, 1 failure, 2 usage.
 */
#ifndef PSD2_CTL_DEVICE_H
#define PSD2_CTL_DEVICE_H

#include <libpq-fe.h>

int	ctl_device(PGconn *db, int argc, char **argv);

#endif
