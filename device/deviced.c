/*
 * psd2-deviced: drives the USB hardware authenticators plugged into this
 * host for psd2gate (device/PROTOCOL.md). Usage:
 *
 *	psd2-deviced [--foreground] [--conf FILE]
 *
 * The configuration file is the project's settings format; the keys are
 * listed in device/README.md.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "deviced_common.h"
#include "deviced_db.h"
#include "deviced_usb.h"
#include "common/settings.h"

#define DEVD_DEFAULT_CONF	"/etc/psd2gate/psd2-deviced.conf"
#define DEVD_STOP_TIMEOUT_S	10

static void
usage(void)
{
	fprintf(stderr, "usage: psd2-deviced [--foreground] [--conf FILE]\n");
	exit(2);
}

static int
load_conf(const char *path, struct devd_conf *c)
{
	char		 err[512];
	const char	*vidpid;
	unsigned int	 vid, pid;

	if (settings_load(path, NULL, err, sizeof(err)) != 0) {
		devd_log("configuration: %s", err);
		return (-1);
	}
	memset(c, 0, sizeof(*c));
	snprintf(c->db, sizeof(c->db), "%s", settings_get("db", ""));
	if (c->db[0] == '\0') {
		devd_log("configuration: psd2_db is not set");
		return (-1);
	}
	vidpid = settings_get("device_vidpid", "1209:0001");
	if (sscanf(vidpid, "%4x:%4x", &vid, &pid) != 2) {
		devd_log("configuration: bad psd2_device_vidpid %s", vidpid);
		return (-1);
	}
	c->vid = (uint16_t)vid;
	c->pid = (uint16_t)pid;
	if (settings_path("device_manufacturer_ca", "device-ca.pem",
	    c->ca_path, sizeof(c->ca_path)) != 0) {
		devd_log("configuration: bad psd2_device_manufacturer_ca");
		return (-1);
	}
	if (gethostname(c->host, sizeof(c->host)) != 0)
		snprintf(c->host, sizeof(c->host), "localhost");
	snprintf(c->host, sizeof(c->host), "%s",
	    settings_get("device_host", c->host));
	c->lease_seconds = (int)settings_int("device_lease_seconds", 30);
	c->rescan_ms = (int)settings_int("device_rescan_ms", 2000);
	c->hotplug = settings_bool("device_hotplug", 1);
	c->busy_retry_ms = (int)settings_int("device_busy_retry_ms", 2000);
	if (settings_get("device_metrics_file", NULL) != NULL &&
	    settings_path("device_metrics_file", NULL, c->metrics_path,
	    sizeof(c->metrics_path)) != 0) {
		devd_log("configuration: bad psd2_device_metrics_file");
		return (-1);
	}
	if (c->lease_seconds < 3 || c->lease_seconds > 3600 ||
	    c->rescan_ms < 100 || c->busy_retry_ms < 100) {
		devd_log("configuration: lease, rescan or retry out of range");
		return (-1);
	}
	return (0);
}

int
main(int argc, char **argv)
{
	struct devd_conf	 conf;
	struct dqueue		 to_main, to_usb;
	const char		*path = DEVD_DEFAULT_CONF;
	sigset_t		 mask;
	int			 i, foreground = 0, sigfd, rc;

	/* Signals go to the main thread's signalfd, not to handlers; blocked
	 * before any thread exists so that every thread inherits the mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
		return (1);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--foreground") == 0)
			foreground = 1;
		else if (strcmp(argv[i], "--conf") == 0 && i + 1 < argc)
			path = argv[++i];
		else
			usage();
	}
	if (load_conf(path, &conf) != 0)
		return (1);
	if (!foreground) {
		if (daemon(0, 0) != 0) {
			perror("daemon");
			return (1);
		}
		devd_log_to_syslog();
	}
	if ((sigfd = signalfd(-1, &mask, SFD_CLOEXEC)) == -1) {
		devd_log("signalfd failed");
		return (1);
	}
	signal(SIGPIPE, SIG_IGN);
	if (dqueue_init(&to_main, 1) != 0 || dqueue_init(&to_usb, 0) != 0) {
		devd_log("eventfd failed");
		return (1);
	}
	if (devd_usb_start(&conf, &to_main, &to_usb) != 0)
		return (1);
	rc = devd_db_run(&conf, &to_main, &to_usb, sigfd);
	/* Stopping must not hang on a stuck device: SIGALRM's default
	 * action ends the process if the USB thread does not return. */
	alarm(DEVD_STOP_TIMEOUT_S);
	devd_usb_stop();
	dqueue_free(&to_main);
	dqueue_free(&to_usb);
	settings_free();
	close(sigfd);
	devd_log("stopped");
	return (rc);
}
