/*
 * Enrolment on the staff pages: POST /staff/devices/action
 * with action=enrol, after the confirmation page showed the key
 * fingerprint for staff to compare with the device's display and label.
 * The service does not trust psd2-deviced's attestation_ok: it verifies
 * the manufacturer's signature itself with devenrol_check()
 * (src/common/devenrol.c, the check psd2ctl device enrol makes), against the
 * CA keys of psd2_device_manufacturer_ca loaded at startup, and then
 * device_enrol (72_staff_devices.sql) activates the device with its
 * audit row.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "common/settings.h"
#include "db/db.h"
#include "common/devenrol.h"
#include "staff/staff.h"
#include "staff/staff_enrol.h"
#include "staff/staff_page.h"
#include "web/forms.h"

static EVP_PKEY	*staff_enrol_cas[DEVSIG_CA_MAX];
static size_t	 staff_enrol_ncas;

/*
 * In the parent, before the workers' chroot: the CA keys, if configured
 * (without them the pages refuse every enrolment). A file named but
 * unreadable stops the start.
 */
int
staff_enrol_init(void)
{
	char	path[PATH_MAX];

	if (settings_path("device_manufacturer_ca", NULL, path,
	    sizeof(path)) != 0 || path[0] == '\0')
		return (0);
	return (devsig_load_cas(path, staff_enrol_cas, DEVSIG_CA_MAX,
	    &staff_enrol_ncas));
}

static void
staff_enrol_refuse(struct http_request *req, struct staff_page *p,
    int status, const char *key)
{
	staff_message(req, status, "staff_devices_title", key, &p->who);
}

/* After the device's row: verify, then device_enrol. */
static int
staff_enrol_then(struct http_request *req, struct staff_page *p)
{
	char			 actor[STAFF_USERNAME_MAX + 8], key[160];
	char			 fpr[DEVSIG_FPR_LEN + 1];
	const char		*serial;
	enum devenrol_result	 r;

	if (db_rows(&p->q) != 1 || (serial = forms_arg(req,
	    "serial")) == NULL) {
		staff_enrol_refuse(req, p, 404, "staff_result_no_device");
		return (-1);
	}
	if (strcmp(db_value(&p->q, 0, 4), "not_enrolled") != 0) {
		staff_enrol_refuse(req, p, 409, "staff_result_bad_status");
		return (-1);
	}
	if (staff_enrol_ncas == 0) {
		staff_enrol_refuse(req, p, 409, "staff_enrol_no_ca");
		return (-1);
	}
	r = devenrol_check(staff_enrol_cas, staff_enrol_ncas, serial,
	    db_value(&p->q, 0, 0), db_value(&p->q, 0, 1),
	    db_value(&p->q, 0, 2), fpr);
	staff_page_actor(p, actor, sizeof(actor));
	if (r != DEVENROL_OK || !db_bool(&p->q, 0, 3)) {
		kore_log(LOG_NOTICE, "staff %s: enrolment of %s refused: "
		    "attestation does not verify", p->who.username, serial);
		/* Refused, and recorded: the answer is the function's. */
		db_query_begin(&p->q, req,
		    "SELECT device_enrol_refused($1, $2, $3)");
		db_param(&p->q, actor);
		db_param(&p->q, serial);
		db_param(&p->q, r != DEVENROL_UNREADABLE ? fpr : NULL);
		return (0);
	}
	snprintf(key, sizeof(key), "%s", db_value(&p->q, 0, 1));
	db_query_begin(&p->q, req, "SELECT device_enrol($1, $2, $3, $4)");
	db_param(&p->q, actor);
	db_param(&p->q, serial);
	db_param(&p->q, key);
	db_param(&p->q, fpr);
	return (0);
}

/* The first query of an enrolment: the row psd2-deviced recorded. */
void
staff_enrol_query(struct http_request *req, struct staff_page *p,
    const char *serial)
{
	db_query_begin(&p->q, req, "SELECT model, public_key, attestation, "
	    "attestation_ok, status FROM device WHERE serial = $1");
	db_param(&p->q, serial);
	p->then = staff_enrol_then;
}
