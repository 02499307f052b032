/*
 * draft-cavage Signature header parser. The header is hostile input:
 * every read is bounded, values are copied into the fixed buffer of the
 * result, and nothing is allocated.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/encoding.h"
#include "tpp/sighdr.h"

struct sig_param {
	const char	*name;
	const char	**slot;
};

static int
is_b64url(int c)
{
	return (isalnum(c) || c == '-' || c == '_');
}

int
tpp_sighdr_is_jws(const char *hdr)
{
	const char	*p;
	size_t		 n;

	for (p = hdr, n = 0; is_b64url((unsigned char)*p); p++)
		n++;
	if (n == 0 || p[0] != '.' || p[1] != '.')
		return (0);
	for (p += 2, n = 0; is_b64url((unsigned char)*p); p++)
		n++;
	return (n > 0 && *p == '\0');
}

static int
is_name_char(int c)
{
	return (isalnum(c) || c == '-' || c == '_');
}

int
tpp_sig_names(char *list, const char **names, size_t *nnames, char *err,
    size_t errlen)
{
	char	*p, *name;

	*nnames = 0;
	p = list;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		name = p;
		while (*p != '\0' && *p != ' ') {
			*p = tolower((unsigned char)*p);
			p++;
		}
		if (*p == ' ')
			*p++ = '\0';
		if (strcmp(name, "(request-target)") != 0) {
			const char *q;

			for (q = name; *q != '\0'; q++) {
				if (!is_name_char((unsigned char)*q)) {
					snprintf(err, errlen, "signed header "
					    "names must be header field names");
					return (-1);
				}
			}
		}
		if (*nnames == TPP_SIG_NAMES_MAX) {
			snprintf(err, errlen, "at most %d signed headers",
			    TPP_SIG_NAMES_MAX);
			return (-1);
		}
		names[(*nnames)++] = name;
	}
	if (*nnames == 0) {
		snprintf(err, errlen, "the list of signed headers is empty");
		return (-1);
	}
	return (0);
}

/*
 * One value: a quoted string (\" and \\ are the only escapes, so that a
 * DN's own backslash escapes reach the keyId parser intact) or a token
 * (draft-cavage 12 sends created=<integer> unquoted). Copies into *out.
 */
static const char *
sig_value(const char *p, char **out, char *end)
{
	char	*o = *out;

	if (*p == '"') {
		for (p++; *p != '"'; p++) {
			if (*p == '\0' || o + 1 >= end)
				return (NULL);
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			*o++ = *p;
		}
		p++;
	} else {
		while (*p != '\0' && *p != ',' && *p != ' ' && *p != '\t') {
			if (*p == '"' || o + 1 >= end)
				return (NULL);
			*o++ = *p++;
		}
	}
	*o++ = '\0';
	*out = o;
	return (p);
}

static int
sig_params(const char *hdr, struct tpp_sighdr *out, const char **headers,
    const char **sig, char *err, size_t errlen)
{
	struct sig_param	 params[] = {
		{ "keyid", &out->key_id },
		{ "algorithm", &out->algorithm },
		{ "headers", headers },
		{ "signature", sig },
	};
	const char		*p, *name, *val;
	char			*o, *end, pname[16];
	size_t			 i, nlen;

	o = out->buf;
	end = out->buf + sizeof(out->buf);
	p = hdr;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		for (name = p; isalpha((unsigned char)*p); p++)
			;
		nlen = p - name;
		if (nlen == 0 || nlen >= sizeof(pname) || *p != '=') {
			snprintf(err, errlen, "signature must be a list of "
			    "name=\"value\" parameters");
			return (-1);
		}
		for (i = 0; i < nlen; i++)
			pname[i] = tolower((unsigned char)name[i]);
		pname[nlen] = '\0';
		val = o;
		if ((p = sig_value(p + 1, &o, end)) == NULL) {
			snprintf(err, errlen, "signature parameter %s has a "
			    "malformed value", pname);
			return (-1);
		}
		if (*p != '\0' && *p != ',' && *p != ' ' && *p != '\t') {
			snprintf(err, errlen, "signature parameters must be "
			    "separated by commas");
			return (-1);
		}
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			if (strcmp(pname, params[i].name) != 0)
				continue;
			if (*params[i].slot != NULL) {
				snprintf(err, errlen, "signature parameter %s "
				    "is repeated", params[i].name);
				return (-1);
			}
			*params[i].slot = val;
		}
	}
	return (0);
}

int
tpp_sighdr_parse(const char *hdr, struct tpp_sighdr *out, char *err,
    size_t errlen)
{
	const char	*headers, *sig;
	char		*list;
	int		 n;

	out->key_id = out->algorithm = NULL;
	out->nnames = out->siglen = 0;
	headers = sig = NULL;
	if (strlen(hdr) >= sizeof(out->buf)) {
		snprintf(err, errlen, "signature header is too long");
		return (-1);
	}
	if (sig_params(hdr, out, &headers, &sig, err, errlen) == -1)
		return (-1);
	if (out->key_id == NULL || *out->key_id == '\0') {
		snprintf(err, errlen, "signature has no keyId");
		return (-1);
	}
	if (sig == NULL || *sig == '\0') {
		snprintf(err, errlen, "signature has no signature parameter");
		return (-1);
	}
	n = base64_decode(sig, strlen(sig), out->sig, sizeof(out->sig));
	if (n <= 0) {
		snprintf(err, errlen, "the signature parameter is not base64");
		return (-1);
	}
	out->siglen = n;
	/*
	 * draft-cavage: without headers, only date is signed. The list is
	 * split in place, so it must live in our buffer: the signature's
	 * text (at least "AAA=" plus NUL) is no longer needed and holds it.
	 */
	if (headers != NULL)
		list = (char *)headers;
	else {
		list = (char *)sig;
		memcpy(list, "date", 5);
	}
	return (tpp_sig_names(list, out->names, &out->nnames, err, errlen));
}
