/*
 * The one login of PSUs and bank staff: a password, checked in a Kore
 * task, then a TOTP code, with the same lockout, single-use and session
 * rules. What differs between the two (tables, SQL functions, pages, the
 * cookie) is a struct login_kind; the steps are the same:
 *
 *	state		its result		next
 *	LOGIN_LOOKUP	too many logins from	429
 *			the address
 *			else (unknown users	the task: LOGIN_PASSWORD
 *			too)
 *	LOGIN_PASSWORD	the task's verdict	LOGIN_FACTOR
 *	LOGIN_FACTOR	ok			the TOTP page (a sealed
 *						step); or, when the
 *						kind opens a session
 *						with the password alone,
 *						as ok of LOGIN_TOTP
 *			failed			the login page, 401
 *			locked			403
 *	LOGIN_SEED	the sealed seed		LOGIN_TOTP
 *	LOGIN_TOTP	ok			session cookie, the
 *						kind's next page (a
 *						query first: LOGIN_AFTER)
 *			repeat (this form's	the browser holding that
 *			login opened the	session: the next page,
 *			session before)		no cookie; others: as
 *						used
 *			used (a code used	the TOTP page, 401; no
 *			already)		failure counted (a
 *						password session: its
 *						page, without a cookie:
 *						it asks for a login)
 *			failed			the TOTP page, 401
 *			locked			403
 *			expired (a repeat	the kind's expired page
 *			whose session ended)
 *			key_required (the	the TOTP page, 401; no
 *			subject must use a	failure counted
 *			key: a staff admin
 *			holding one)
 *	LOGIN_AFTER	the kind's query	the kind's page
 *
 * A kind with keys (passkeys, security keys: WebAuthn) offers one of them
 * on the TOTP page instead of the code; the key's form enters here:
 *
 *	LOGIN_KEY_READ	the posted key's row	verified in C (client
 *						data, signature), then
 *						LOGIN_KEY
 *	LOGIN_KEY	as LOGIN_TOTP		as LOGIN_TOTP
 *
 * A session id is derived from the login form's flow and the subject
 * (forms_flow_secret), so a repeated post names the session the first
 * one opened; it is sent as a cookie only by the post that opened it.
 */
#ifndef PSD2_LOGIN_MACHINE_H
#define PSD2_LOGIN_MACHINE_H

#include <stdint.h>

#include <jansson.h>

#include "api/peer.h"
#include "db/db.h"
#include "psu/password_task.h"
#include "web/forms.h"

struct http_request;

enum login_state {
	LOGIN_LOOKUP,
	LOGIN_PASSWORD,
	LOGIN_FACTOR,
	LOGIN_SEED,
	LOGIN_TOTP,
	LOGIN_KEY_READ,
	LOGIN_KEY,
	LOGIN_AFTER
};

/* What a kind's page hook did after a session: answered, or queried. */
enum login_after {
	LOGIN_ANSWERED,
	LOGIN_QUERIED
};

/* One login request in progress (the handler's http_state). */
struct login {
	const struct login_kind	*kind;
	enum login_state	 state;
	struct form_state	 fs;
	struct db_query		 q;
	struct password_job	 pw;
	long long		 subject_id;	/* 0: unknown user */
	int			 password_ok;
	int			 password_session;
	char			 addr[PEER_ADDR_MAX];
	/* What a password session is for (a payment id). */
	char			 scope[40];
	char			 session[37];
	uint8_t			 session_digest[32];
	uint8_t			 flow_digest[32];
	/* The subject's key ids (base64url) for the TOTP page, or NULL. */
	json_t			*key_ids;
};

struct login_kind {
	/* "psu", "staff": the TOTP seal context. */
	const char	*subject;
	const char	*step_name;	/* the sealed "password passed" step */
	const char	*session_name;	/* forms_flow_secret purpose */
	const char	*cookie;
	const char	*cookie_path;
	const char	*csrf_error;	/* text key of a refused form */
	const char	*metrics;	/* metrics_sca kind of TOTP outcomes,
					   or NULL */
	const char	*sql_lookup;	/* username, address, rate: rate_ok,
					   id, password hash */
	int		(*cookie_age)(void);
	/*
	 * Starts the password outcome query (ok, failed, locked; with
	 * lg->password_session set, repeat and expired too and a session).
	 */
	void		(*factor)(struct http_request *, struct login *);
	/* Starts the seed query: name, sealed seed, the flow's step or NULL. */
	void		(*seed)(struct http_request *, struct login *);
	/* Starts the TOTP outcome query for a time step (-1: none). */
	void		(*totp)(struct http_request *, struct login *,
			    long long);
	void		(*login_page)(struct http_request *, struct login *,
			    int, const char *);
	void		(*otp_page)(struct http_request *, struct login *,
			    int, const char *, const char *);
	void		(*expired)(struct http_request *, struct login *);
	/* The page after a session opened; LOGIN_QUERIED goes on in after. */
	enum login_after (*done)(struct http_request *, struct login *);
	void		(*after)(struct http_request *, struct login *);
	/*
	 * Keys (NULL: the kind has none). With keys, the factor query's
	 * column 1 and the seed query's column 3 hold the subject's key
	 * ids (a JSON array). key_read starts the read of the posted
	 * credential id's key: one row of key id, COSE algorithm, public
	 * key in hex (NULLs: no such live key of the subject) and the key
	 * ids (passkey_key_read); key_outcome the outcome query (results
	 * as the TOTP's) for that key id (0: none), the verdict, the
	 * signature counter and the SHA-256 of the challenge.
	 */
	void		(*key_read)(struct http_request *, struct login *);
	void		(*key_outcome)(struct http_request *, struct login *,
			    long long, int, uint32_t, const uint8_t [32]);
};

/* The handlers of the password form and of the TOTP form (Kore results). */
int	login_password(struct http_request *, const struct login_kind *);
int	login_totp(struct http_request *, const struct login_kind *);
/* The handler of the key form (a kind with keys). */
int	login_key(struct http_request *, const struct login_kind *);

#endif
