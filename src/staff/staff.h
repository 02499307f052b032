/*
 * The bank staff pages, served only on the staff listener
 * (conf/staff.conf): the PSU's login state machine with the staff table
 * (src/psu/login_machine.h: password in a Kore task, then TOTP; the PSU
 * lockout rules), a session cookie scoped to /staff, roles operator and
 * admin, and CSRF tokens bound to the session.
 */
#ifndef PSD2_STAFF_H
#define PSD2_STAFF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct http_request;
struct db_query;

#define STAFF_COOKIE		"psd2_staff"
#define STAFF_PATH		"/staff"
#define STAFF_USERNAME_MAX	128

struct staff_who {
	long long	id;
	char		username[STAFF_USERNAME_MAX];
	char		name[256];
	int		admin;
	uint8_t		session_digest[32];
};

/* SHA-256 of the request's staff cookie; -1 when it has none. */
int	staff_cookie_digest(struct http_request *, uint8_t [32]);

/* Starts the session look-up of the request's cookie digest. */
void	staff_session_query(struct db_query *, struct http_request *,
	    const uint8_t [32]);
/* Reads its result into who: 0, or -1 when no live session. */
int	staff_session_read(struct db_query *, struct staff_who *);

/* A CSRF token bound to the session; checks the posted "csrf" field. */
int	staff_csrf_issue(const struct staff_who *, char *, size_t);
int	staff_csrf_valid(struct http_request *, const struct staff_who *);

/* No (live) session: back to the login page. */
void	staff_to_login(struct http_request *);

/*
 * Renders a staff template with ctx (stolen) plus "staff" (the member:
 * username, name, role, admin) and a session "csrf" token (unless ctx
 * has one: a page that derived a key's challenge from it).
 */
void	staff_render(struct http_request *, int, const char *, json_t *,
	    const struct staff_who *);
/* A message page (translation keys) for a signed-in member. */
void	staff_message(struct http_request *, int, const char *,
	    const char *, const struct staff_who *);

/*
 * Loads the attestation roots and models of staff security keys
 * (psd2_staff_key_roots, psd2_staff_key_aaguids; unset: no staff keys):
 * 0, or -1 with a message in err.
 */
int	staff_keys_init(char *, size_t);

/* The login page (the first factor), with an error key or NULL. */
void	staff_login_form(struct http_request *, int, const char *);

#endif
