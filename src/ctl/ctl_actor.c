/*
 * psd2ctl's audit rows name the operator by the system login running
 * psd2ctl ("operator:<login>"). Linked into psd2ctl and into the device
 * end-to-end tests (device/device.mk), so it uses libc only.
 */
#include <sys/types.h>

#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "ctl/ctl_db.h"

void
ctl_actor(char *out, size_t len)
{
	struct passwd	*pw;

	pw = getpwuid(getuid());
	snprintf(out, len, "operator:%s", pw != NULL ? pw->pw_name : "unknown");
}
