/*
 * What the PSU's key pages and the login's key step share: the
 * configured origin and relying party id, and the challenge a sealed
 * form token stands for.
 *
 * A challenge is never stored before use: it is the SHA-256 of its
 * purpose, of the sealed token the page carries (the login's step, the
 * keys page's or the payment page's CSRF token; each bound to the PSU
 * and valid FORMS_STEP_TTL seconds) and of a random nonce of the page,
 * so it is unpredictable, new on every page, bound to that PSU and form,
 * and short-lived. Its use is single: the SQL function that accepts it
 * records its hash (webauthn_challenge) in the same transaction.
 */
#ifndef PSD2_PASSKEY_H
#define PSD2_PASSKEY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/webauthn.h"

struct db_query;
struct http_request;

#define PASSKEY_LOGIN		"psd2gate passkey login"
#define PASSKEY_REGISTER	"psd2gate passkey register"
#define PASSKEY_PAYMENT		"psd2gate passkey payment"
#define PASSKEY_RP_MAX		256
/* Live keys a PSU may hold. */
#define PASSKEY_MAX		10

#define PASSKEY_STAFF_REGISTER	"psd2gate staff key register"
/* The subject of the staff pages' keys (login_kind.subject). */
#define PASSKEY_STAFF		"staff"

/* psd2_webauthn_origin and its rp id: 0, or -1 when keys are off. */
int	passkey_origin(const char **, char *, size_t);
/* The same for a subject: "staff" reads psd2_staff_webauthn_origin. */
int	passkey_origin_for(const char *, const char **, char *, size_t);
/*
 * A fresh nonce for a page's challenge (base64url, the form's field
 * "key_nonce"): the sealed tokens are the same for a second within one
 * session, the nonce makes every page's challenge a new one.
 */
#define PASSKEY_NONCE_BYTES	16
#define PASSKEY_NONCE_MAX	32
int	passkey_nonce(char [PASSKEY_NONCE_MAX]);
/*
 * What the login's key form hands to navigator.credentials.get (WebAuthn
 * 5.5): challenge (of the sealed step and a new nonce), nonce, rp_id,
 * origin and the ids of the subject's keys (key_ids, JSON text); NULL
 * when who has no keys or keys are off.
 */
json_t	*passkey_login_offer(const char *, json_t *, const char *);
/* The challenge of purpose, token and nonce: 0, or -1 (a bad nonce). */
int	passkey_challenge(const char *, const char *, const char *,
	    uint8_t [WEBAUTHN_CHALLENGE_LEN]);
/*
 * The challenge of a payment's page: also over the payment's
 * authentication code (sca_code.h, bound to amount and payee), so the
 * key signs for exactly that payment (RTS Art. 5). 0 or -1.
 */
int	passkey_payment_challenge(const uint8_t *, size_t, const char *,
	    const char *, uint8_t [WEBAUTHN_CHALLENGE_LEN]);
/* A challenge as a page hands it to the browser (base64url). */
int	passkey_challenge_b64(const uint8_t [WEBAUTHN_CHALLENGE_LEN], char *,
	    size_t);
/* passkey_challenge, then as a page hands it to the browser. */
int	passkey_challenge_text(const char *, const char *, const char *,
	    char *, size_t);
/* A key's name: 1 to PASSKEY_NAME_MAX characters, spaces trimmed. */
#define PASSKEY_NAME_MAX	64
int	passkey_name(const char *, char *, size_t);
/* A base64url form field decoded: its length, or -1. */
int	passkey_field(struct http_request *, const char *, uint8_t *,
	    size_t);
/*
 * Starts the read of the posted credential_id's key among the live keys
 * of a PSU: one row of key id, COSE algorithm, public key in hex (NULLs:
 * no such key) and the PSU's key ids (psu_key_ids).
 */
void	passkey_key_read(struct db_query *, struct http_request *, long long);
/*
 * The same read by another query of the same columns taking (subject,
 * credential id): the staff login's keys.
 */
void	passkey_key_read_sql(struct db_query *, struct http_request *,
	    const char *, long long);
/*
 * What navigator.credentials.create needs for a new key of who (WebAuthn
 * 5.4): its challenge derived from purpose, the page's CSRF token and a
 * new nonce; the user handle (a UUID's text) in base64url; the ids of
 * keys (objects with "credential_id") excluded; attestation, or none
 * asked when NULL. NULL when keys are off.
 */
json_t	*passkey_create_offer(const char *, const char *, const char *,
	    const char *, const char *, json_t *, const char *);
/*
 * The posted new key (client_data, attestation) of who, for the
 * challenge of purpose, the posted csrf and key_nonce: NULL when its
 * client data and attestation pass (cred filled, challenge_hash the
 * SHA-256 of its challenge), else why not, for the log.
 */
const char	*passkey_new_key(struct http_request *, const char *,
		    const char *, struct webauthn_credential *, uint8_t [32]);
/* The key id of that row, or 0. */
long long	passkey_key_id(struct db_query *);
/*
 * The posted assertion (client_data, authenticator_data, signature) by
 * that row's key for challenge, on the origin of who ("psu", "staff"):
 * 1, with the key's counter in *count, or 0 (no key, or refused: the
 * reason is logged for who).
 */
int	passkey_assertion(struct http_request *, struct db_query *,
	    const uint8_t [WEBAUTHN_CHALLENGE_LEN], uint32_t *, const char *);

#endif
