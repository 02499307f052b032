/*
 * The helpers of passkey.h.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "common/crypto.h"
#include "common/encoding.h"
#include "common/settings.h"
#include "db/db.h"
#include "psu/passkey.h"
#include "web/forms.h"

static const char sql_key_read[] =
    "SELECT k.id, k.alg, encode(k.public_key, 'hex'), psu_key_ids($1) "
    "FROM (SELECT 1) one LEFT JOIN psu_key k ON k.psu_id = $1 "
    "AND k.credential_id = $2 AND k.removed_at IS NULL";

int
passkey_origin_for(const char *who, const char **origin, char *rp_id,
    size_t len)
{
	*origin = settings_get(strcmp(who, PASSKEY_STAFF) == 0 ?
	    "staff_webauthn_origin" : "webauthn_origin", NULL);
	if (*origin == NULL)
		return (-1);
	return (webauthn_rp_id(*origin, rp_id, len));
}

int
passkey_origin(const char **origin, char *rp_id, size_t len)
{
	return (passkey_origin_for("psu", origin, rp_id, len));
}

json_t *
passkey_login_offer(const char *who, json_t *key_ids, const char *step)
{
	const char	*origin;
	char		 rp_id[PASSKEY_RP_MAX], *ids, nonce[PASSKEY_NONCE_MAX];
	char		 challenge[WEBAUTHN_CHALLENGE_LEN * 2];
	json_t		*keys;

	if (json_array_size(key_ids) == 0 || step == NULL ||
	    passkey_origin_for(who, &origin, rp_id, sizeof(rp_id)) == -1 ||
	    passkey_nonce(nonce) == -1 || passkey_challenge_text(
	    PASSKEY_LOGIN, step, nonce, challenge, sizeof(challenge)) == -1 ||
	    (ids = json_dumps(key_ids, JSON_COMPACT)) == NULL)
		return (NULL);
	keys = json_pack("{s:s, s:s, s:s, s:s, s:s}", "challenge", challenge,
	    "nonce", nonce, "rp_id", rp_id, "origin", origin, "ids", ids);
	free(ids);
	return (keys);
}

int
passkey_nonce(char out[PASSKEY_NONCE_MAX])
{
	uint8_t	raw[PASSKEY_NONCE_BYTES];

	if (crypto_random(raw, sizeof(raw)) == -1)
		return (-1);
	return (base64url_encode(raw, sizeof(raw), out, PASSKEY_NONCE_MAX) <
	    0 ? -1 : 0);
}

int
passkey_challenge(const char *purpose, const char *token, const char *nonce,
    uint8_t out[WEBAUTHN_CHALLENGE_LEN])
{
	size_t		 plen, tlen, nlen, i;
	uint8_t		*buf;

	if (token == NULL || nonce == NULL ||
	    (nlen = strlen(nonce)) == 0 || nlen >= PASSKEY_NONCE_MAX)
		return (-1);
	for (i = 0; i < nlen; i++) {
		if (!isalnum((unsigned char)nonce[i]) && nonce[i] != '-' &&
		    nonce[i] != '_')
			return (-1);
	}
	/* Each part with its NUL: separators that no part contains. */
	plen = strlen(purpose) + 1;
	tlen = strlen(token) + 1;
	buf = kore_malloc(plen + tlen + nlen);
	memcpy(buf, purpose, plen);
	memcpy(buf + plen, token, tlen);
	memcpy(buf + plen + tlen, nonce, nlen);
	crypto_sha256(buf, plen + tlen + nlen, out);
	kore_free(buf);
	return (0);
}

int
passkey_payment_challenge(const uint8_t *mac, size_t mac_len,
    const char *token, const char *nonce,
    uint8_t out[WEBAUTHN_CHALLENGE_LEN])
{
	char	*both;
	size_t	 len;
	int	 rc;

	if (token == NULL)
		return (-1);
	len = mac_len * 2 + 1 + strlen(token) + 1;
	both = kore_malloc(len);
	if (hex_encode(mac, mac_len, both, len) < 0)
		fatal("passkey_payment_challenge: hex");
	both[mac_len * 2] = ':';
	memcpy(both + mac_len * 2 + 1, token, strlen(token) + 1);
	rc = passkey_challenge(PASSKEY_PAYMENT, both, nonce, out);
	kore_free(both);
	return (rc);
}

int
passkey_challenge_b64(const uint8_t challenge[WEBAUTHN_CHALLENGE_LEN],
    char *out, size_t len)
{
	return (base64url_encode(challenge, WEBAUTHN_CHALLENGE_LEN, out,
	    len) < 0 ? -1 : 0);
}

int
passkey_challenge_text(const char *purpose, const char *token,
    const char *nonce, char *out, size_t len)
{
	uint8_t	challenge[WEBAUTHN_CHALLENGE_LEN];

	if (passkey_challenge(purpose, token, nonce, challenge) == -1)
		return (-1);
	return (passkey_challenge_b64(challenge, out, len));
}

int
passkey_name(const char *in, char *out, size_t len)
{
	size_t	n;

	if (in == NULL)
		return (-1);
	while (*in == ' ')
		in++;
	n = strlen(in);
	while (n > 0 && in[n - 1] == ' ')
		n--;
	if (n == 0 || n > PASSKEY_NAME_MAX || n >= len)
		return (-1);
	memcpy(out, in, n);
	out[n] = '\0';
	return (0);
}

int
passkey_field(struct http_request *req, const char *name, uint8_t *out,
    size_t max)
{
	const char	*v;

	if ((v = forms_arg(req, name)) == NULL || *v == '\0')
		return (-1);
	return (base64url_decode(v, strlen(v), out, max));
}

void
passkey_key_read_sql(struct db_query *q, struct http_request *req,
    const char *sql, long long subject_id)
{
	uint8_t	id[WEBAUTHN_ID_MAX];
	int	len;

	if ((len = passkey_field(req, "credential_id", id, sizeof(id))) <= 0)
		len = 0;
	db_query_begin(q, req, sql);
	db_param_int(q, subject_id);
	db_param_bin(q, id, (size_t)len);
}

void
passkey_key_read(struct db_query *q, struct http_request *req,
    long long psu_id)
{
	passkey_key_read_sql(q, req, sql_key_read, psu_id);
}

long long
passkey_key_id(struct db_query *q)
{
	if (db_rows(q) != 1 || db_is_null(q, 0, 0))
		return (0);
	return (db_int(q, 0, 0));
}

int
passkey_assertion(struct http_request *req, struct db_query *q,
    const uint8_t challenge[WEBAUTHN_CHALLENGE_LEN], uint32_t *count,
    const char *who)
{
	uint8_t		 cd[2048], ad[1024], sig[1024], pk[WEBAUTHN_PK_MAX];
	uint8_t		 cd_hash[32];
	char		 rp_id[PASSKEY_RP_MAX];
	const char	*origin, *why, *pk_hex;
	int		 cd_len, ad_len, sig_len, pk_len;

	if (passkey_key_id(q) == 0)
		return (0);
	pk_hex = db_value(q, 0, 2);
	pk_len = hex_decode(pk_hex, strlen(pk_hex), pk, sizeof(pk));
	cd_len = passkey_field(req, "client_data", cd, sizeof(cd));
	ad_len = passkey_field(req, "authenticator_data", ad, sizeof(ad));
	sig_len = passkey_field(req, "signature", sig, sizeof(sig));
	if (passkey_origin_for(who, &origin, rp_id, sizeof(rp_id)) == -1)
		why = "keys are not configured";
	else if (pk_len <= 0 || cd_len <= 0 || ad_len <= 0 || sig_len <= 0)
		why = "form fields";
	else if ((why = webauthn_client_data(cd, (size_t)cd_len,
	    "webauthn.get", challenge, origin, cd_hash)) == NULL)
		why = webauthn_assertion((int)db_int(q, 0, 1), pk,
		    (size_t)pk_len, ad, (size_t)ad_len, cd_hash, sig,
		    (size_t)sig_len, rp_id, count);
	if (why != NULL)
		kore_log(LOG_NOTICE, "%s key refused: %s", who, why);
	return (why == NULL);
}

json_t *
passkey_create_offer(const char *who, const char *purpose, const char *csrf,
    const char *handle_uuid, const char *username, json_t *keys,
    const char *attestation)
{
	const char	*origin;
	char		 rp_id[PASSKEY_RP_MAX], challenge[64], handle[32];
	char		 nonce[PASSKEY_NONCE_MAX];
	uint8_t		 uuid[16];
	json_t		*exclude, *key;
	size_t		 i;

	if (passkey_origin_for(who, &origin, rp_id, sizeof(rp_id)) == -1 ||
	    passkey_nonce(nonce) == -1 || passkey_challenge_text(purpose, csrf,
	    nonce, challenge, sizeof(challenge)) == -1 ||
	    uuid_decode(handle_uuid, uuid) == -1 ||
	    base64url_encode(uuid, sizeof(uuid), handle, sizeof(handle)) < 0)
		return (NULL);
	exclude = json_array();
	json_array_foreach(keys, i, key)
		json_array_append(exclude, json_object_get(key,
		    "credential_id"));
	return (json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s*}",
	    "challenge", challenge, "nonce", nonce, "rp_id", rp_id, "origin",
	    origin, "user", handle, "username", username, "exclude", exclude,
	    "attestation", attestation));
}

const char *
passkey_new_key(struct http_request *req, const char *who,
    const char *purpose, struct webauthn_credential *cred,
    uint8_t challenge_hash[32])
{
	uint8_t		 cd[2048], att[WEBAUTHN_X5C_BYTES], cd_hash[32];
	uint8_t		 challenge[WEBAUTHN_CHALLENGE_LEN];
	char		 rp_id[PASSKEY_RP_MAX];
	const char	*origin, *why;
	int		 cd_len, att_len;

	if (passkey_challenge(purpose, forms_arg(req, "csrf"), forms_arg(req,
	    "key_nonce"), challenge) == -1)
		return ("key_nonce");
	crypto_sha256(challenge, sizeof(challenge), challenge_hash);
	cd_len = passkey_field(req, "client_data", cd, sizeof(cd));
	att_len = passkey_field(req, "attestation", att, sizeof(att));
	if (passkey_origin_for(who, &origin, rp_id, sizeof(rp_id)) == -1)
		return ("keys are not configured");
	if (cd_len <= 0 || att_len <= 0)
		return ("form fields");
	if ((why = webauthn_client_data(cd, (size_t)cd_len, "webauthn.create",
	    challenge, origin, cd_hash)) != NULL)
		return (why);
	return (webauthn_attestation(att, (size_t)att_len, cd_hash, rp_id,
	    cred));
}
