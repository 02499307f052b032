/*
 * psd2gate entry points for Kore: configuration in the parent, database
 * registration and housekeeping timers in the workers.
 */
#include <sys/types.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kore.h>
#include <http.h>
#include <pgsql.h>

#include "ais/ais.h"
#include "api/respond.h"
#include "app/housekeeping.h"
#include "common/config.h"
#include "common/settings.h"
#include "metrics/downtime.h"
#include "metrics/kpi.h"
#include "metrics/metrics.h"
#include "tpp/tpp.h"
#include "web/pages.h"
#include "oauth/oauth.h"
#include "psu/login.h"
#include "psu/password_task.h"
#include "pis/pis.h"
#include "staff/staff.h"
#include "staff/staff_enrol.h"

/*
 * In single-binary mode Kore parses this built-in configuration after
 * kore_parent_configure(); ours comes from the file given with -c.
 */
u_int8_t	asset_builtin_kore_conf[] = "# configuration is read from -c FILE\n";
u_int32_t	asset_len_builtin_kore_conf = sizeof(asset_builtin_kore_conf) - 1;

void	kore_parent_configure(int, char **);
void	kore_worker_configure(void);
void	kore_worker_teardown(void);
int	page_health(struct http_request *);

static const char *
app_take_config_arg(int *argc, char **argv)
{
	const char	*path;
	int		 i, j;

	path = NULL;
	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < *argc) {
			path = argv[i + 1];
			for (j = i; j + 2 <= *argc; j++)
				argv[j] = argv[j + 2];
			*argc -= 2;
			break;
		}
	}
	return (path);
}

/*
 * glibc loads libgcc_s on demand to unwind a thread in pthread_exit()
 * (Kore's task threads, at shutdown). Inside the chroot of "root" the
 * file is not there and the worker aborts ("libgcc_s.so.1 must be
 * installed for pthread_exit to work"): load it before the workers are
 * forked, so that glibc finds it already mapped.
 */
static void
app_preload_unwinder(void)
{
	if (dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NODELETE) == NULL)
		fatal("dlopen(libgcc_s.so.1): %s", dlerror());
}

void
kore_parent_configure(int argc, char **argv)
{
	FILE		*fp;
	const char	*path;
	char		*text, err[512];

	/* Kore logs with printf in the foreground: one line, one write. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((path = app_take_config_arg(&argc, argv)) == NULL) {
		fprintf(stderr, "usage: psd2gate -c FILE [-fnqr]\n");
		exit(2);
	}
	kore_default_getopt(argc, argv);

	if (settings_load(path, &text, err, sizeof(err)) == -1)
		fatal("%s", err);
	/* Every psd2_ value, before anything uses one (and before a worker
	 * could meet it at its first request). */
	if (settings_validate(err, sizeof(err)) == -1)
		fatal("%s: %s", path, err);
	if (settings_get("db", NULL) == NULL)
		fatal("%s: psd2_db is not set", path);

	if ((fp = fmemopen(text, strlen(text), "r")) == NULL)
		fatal("fmemopen: %s", errno_s);
	kore_parse_config_file(fp);
	fclose(fp);
	free(text);

	config_load();
	ais_settings_load();
	pis_settings_load();
	metrics_init();
	downtime_init();
	kpi_init(settings_bool("kpi_recording", 1));
	if (config_load_keys(err, sizeof(err)) == -1)
		fatal("%s", err);
	if (pages_init() == -1)
		fatal("templates or translations failed to load");
	psu_login_set_oauth_page(consent_page);
	if (password_tasks_init() == -1)
		fatal("argon2 self-check failed");
	if (tpp_init() == -1)
		fatal("TPP verification settings are invalid");
	if (staff_enrol_init() == -1)
		fatal("psd2_device_manufacturer_ca: no readable P-256 public "
		    "keys");
	if (staff_keys_init(err, sizeof(err)) == -1)
		fatal("%s", err);
	app_preload_unwinder();
}

void
kore_worker_configure(void)
{
	kore_pgsql_register(APP_DB, settings_get("db", NULL));
	respond_install_hooks();
	housekeeping_start();
	audit_sealer_start();
	incidents_start();
	probe_start();
	kpi_flush_start();
	pis_decider_start();
}

/*
 * Kore calls this as the worker exits, before it frees the requests and
 * closes the pooled connections: the timers' queries give theirs back.
 */
void
kore_worker_teardown(void)
{
	housekeeping_stop();
	audit_sealer_stop();
	incidents_stop();
	kpi_flush_stop();
}

int
page_health(struct http_request *req)
{
	static const char	body[] = "{\"status\":\"ok\"}";

	respond_raw(req, 200, "application/json", body, sizeof(body) - 1);
	return (KORE_RESULT_OK);
}
