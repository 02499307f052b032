/*
 * Detached compact JWS parsing. The protected header is hostile JSON:
 * bounded size, duplicate keys refused, every member type-checked.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/encoding.h"
#include "common/httpdate.h"
#include "tpp/jws.h"

#define JWS_PROTECTED_MAX	4096

/* Members of crit we understand; any other one must make us refuse. */
static const char *const jws_crit_known[] = {
	"b64", "sigD", "sigT", "x5t#S256"
};

static int
digits(const char *s, int n, int *out)
{
	int	i, v = 0;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return (0);
}

int
tpp_jws_time(const char *s, int64_t *epoch)
{
	static const int	mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31,
				    30, 31, 30, 31 };
	int			y, mo, d, h, mi, se;
	const char		*p;

	if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' ||
	    digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
	    s[10] != 'T' || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &se))
		return (-1);
	p = s + 19;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++)
			;
		if (p == s + 20)
			return (-1);
	}
	if (strcmp(p, "Z") != 0 || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
		return (-1);
	if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return (-1);
	*epoch = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	return (0);
}

static int
jws_crit(json_t *crit, char *err, size_t errlen)
{
	size_t		 i, k;
	json_t		*e;
	int		 b64 = 0, sigd = 0, known;

	if (!json_is_array(crit)) {
		snprintf(err, errlen, "JWS crit must list b64 and sigD");
		return (-1);
	}
	json_array_foreach(crit, i, e) {
		if (!json_is_string(e)) {
			snprintf(err, errlen, "JWS crit entries must be "
			    "strings");
			return (-1);
		}
		known = 0;
		for (k = 0; k < sizeof(jws_crit_known) /
		    sizeof(jws_crit_known[0]); k++)
			if (strcmp(json_string_value(e), jws_crit_known[k]) == 0)
				known = 1;
		if (!known) {
			snprintf(err, errlen, "JWS crit names an unsupported "
			    "header parameter");
			return (-1);
		}
		b64 |= strcmp(json_string_value(e), "b64") == 0;
		sigd |= strcmp(json_string_value(e), "sigD") == 0;
	}
	if (!b64 || !sigd) {
		snprintf(err, errlen, "JWS crit must list b64 and sigD");
		return (-1);
	}
	return (0);
}

static int
jws_sigd(json_t *sigd, struct tpp_jws *out, char *err, size_t errlen)
{
	json_t		*mid, *pars, *e;
	size_t		 i, off, len;

	mid = json_object_get(sigd, "mId");
	pars = json_object_get(sigd, "pars");
	if (!json_is_object(sigd) || !json_is_string(mid) ||
	    strcmp(json_string_value(mid), TPP_JWS_MID) != 0) {
		snprintf(err, errlen, "JWS sigD must have mId \"%s\"",
		    TPP_JWS_MID);
		return (-1);
	}
	if (!json_is_array(pars) || json_array_size(pars) == 0) {
		snprintf(err, errlen, "JWS sigD pars must list the signed "
		    "headers");
		return (-1);
	}
	/* Joined with spaces, then split like the draft-cavage list. */
	off = 0;
	json_array_foreach(pars, i, e) {
		if (!json_is_string(e) ||
		    (len = json_string_length(e)) == 0 ||
		    memchr(json_string_value(e), ' ', len) != NULL ||
		    off + len + 1 >= sizeof(out->namebuf)) {
			snprintf(err, errlen, "JWS sigD pars must be header "
			    "names");
			return (-1);
		}
		memcpy(out->namebuf + off, json_string_value(e), len);
		off += len;
		out->namebuf[off++] = ' ';
	}
	out->namebuf[off - 1] = '\0';
	return (tpp_sig_names(out->namebuf, out->names, &out->nnames, err,
	    errlen));
}

static int
jws_header(json_t *h, struct tpp_jws *out, char *err, size_t errlen)
{
	json_t		*alg, *b64, *x5t, *sigt;
	int		 n;

	alg = json_object_get(h, "alg");
	if (!json_is_string(alg) || json_string_length(alg) == 0 ||
	    json_string_length(alg) >= sizeof(out->alg)) {
		snprintf(err, errlen, "JWS protected header has no valid alg");
		return (-1);
	}
	memcpy(out->alg, json_string_value(alg), json_string_length(alg) + 1);
	b64 = json_object_get(h, "b64");
	if (!json_is_false(b64)) {
		snprintf(err, errlen, "JWS protected header must have "
		    "b64: false");
		return (-1);
	}
	if (jws_crit(json_object_get(h, "crit"), err, errlen) == -1)
		return (-1);
	x5t = json_object_get(h, "x5t#S256");
	if (!json_is_string(x5t) ||
	    (n = base64url_decode(json_string_value(x5t),
	    json_string_length(x5t), out->x5t, sizeof(out->x5t))) != 32) {
		snprintf(err, errlen, "JWS protected header must have "
		    "x5t#S256, the base64url SHA-256 of the certificate");
		return (-1);
	}
	sigt = json_object_get(h, "sigT");
	if (!json_is_string(sigt) ||
	    tpp_jws_time(json_string_value(sigt), &out->sig_t) == -1) {
		snprintf(err, errlen, "JWS protected header must have sigT "
		    "(YYYY-MM-DDThh:mm:ssZ)");
		return (-1);
	}
	return (jws_sigd(json_object_get(h, "sigD"), out, err, errlen));
}

int
tpp_jws_parse(const char *hdr, struct tpp_jws *out, char *err, size_t errlen)
{
	uint8_t		 prot[JWS_PROTECTED_MAX];
	const char	*dots, *sig;
	json_error_t	 jerr;
	json_t		*h;
	int		 n, rc;

	memset(out, 0, sizeof(*out));
	if (!tpp_sighdr_is_jws(hdr)) {
		snprintf(err, errlen, "signature is not a detached compact JWS");
		return (-1);
	}
	dots = strstr(hdr, "..");
	sig = dots + 2;
	out->protected_b64 = hdr;
	out->protected_len = dots - hdr;
	n = base64url_decode(hdr, out->protected_len, prot, sizeof(prot));
	if (n <= 0) {
		snprintf(err, errlen, "JWS protected header is not base64url");
		return (-1);
	}
	h = json_loadb((const char *)prot, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(h)) {
		json_decref(h);
		snprintf(err, errlen, "JWS protected header is not a JSON "
		    "object");
		return (-1);
	}
	rc = jws_header(h, out, err, errlen);
	json_decref(h);
	if (rc == -1)
		return (-1);
	n = base64url_decode(sig, strlen(sig), out->sig, sizeof(out->sig));
	if (n <= 0) {
		snprintf(err, errlen, "JWS signature is not base64url");
		return (-1);
	}
	out->siglen = n;
	return (0);
}
