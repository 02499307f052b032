/*
 * keyId parsing and structural comparison with a certificate.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "common/encoding.h"
#include "tpp/keyid.h"

/* Attribute names seen in DNs that OpenSSL does not spell the same way. */
static const struct {
	const char	*alias;
	int		 nid;
} dn_aliases[] = {
	{ "CN", NID_commonName },
	{ "C", NID_countryName },
	{ "O", NID_organizationName },
	{ "OU", NID_organizationalUnitName },
	{ "L", NID_localityName },
	{ "ST", NID_stateOrProvinceName },
	{ "S", NID_stateOrProvinceName },
	{ "STREET", NID_streetAddress },
	{ "DC", NID_domainComponent },
	{ "UID", NID_userId },
	{ "E", NID_pkcs9_emailAddress },
	{ "EMAIL", NID_pkcs9_emailAddress },
	{ "EMAILADDRESS", NID_pkcs9_emailAddress },
	{ "SERIALNUMBER", NID_serialNumber },
	{ "ORGANIZATIONIDENTIFIER", NID_organizationIdentifier },
	{ "GIVENNAME", NID_givenName },
	{ "SURNAME", NID_surname },
	{ "TITLE", NID_title },
};

static int
keyid_serial(const char *p, size_t len, struct tpp_keyid *k)
{
	size_t		i, n;

	/* Leading zeros carry no value: "0A" and "a" are the same serial. */
	while (len > 1 && *p == '0')
		p++, len--;
	if (len == 0 || (len + 1) / 2 > sizeof(k->serial))
		return (-1);
	for (i = 0; i < len; i++)
		if (hex_digit((unsigned char)p[i]) < 0)
			return (-1);
	n = (len + 1) / 2;
	k->serial_len = n;
	for (i = 0; i < n; i++) {
		size_t	hi = len - 2 * (n - i);

		/* Right-aligned: an odd length has one lone leading nibble. */
		k->serial[i] = (len % 2 && i == 0) ? hex_digit((unsigned char)p[0]) :
		    hex_digit((unsigned char)p[hi]) << 4 |
		    hex_digit((unsigned char)p[hi + 1]);
	}
	return (0);
}

/*
 * One attribute value up to an unescaped ',', ';' or '+': RFC 4514
 * escapes (\, \+ \" \\ \< \> \; \= \# \space, \XX hex) and RFC 1779
 * quoted values. Leading and trailing unescaped spaces are dropped.
 */
static const char *
dn_value(const char *p, char **o, char *end)
{
	char	*keep = *o;
	int	 quoted = 0, closed = 0, h, l;

	while (*p == ' ')
		p++;
	if (*p == '"') {
		quoted = 1;
		p++;
	}
	for (; *p != '\0'; p++) {
		if (quoted && *p == '"') {
			closed = 1;
			p++;
			while (*p == ' ')
				p++;
			break;
		}
		if (!quoted && (*p == ',' || *p == ';' || *p == '+'))
			break;
		if (*o + 1 >= end)
			return (NULL);
		if (*p == '\\') {
			if (p[1] == '\0')
				return (NULL);
			if ((h = hex_digit((unsigned char)p[1])) >= 0 &&
			    (l = hex_digit((unsigned char)p[2])) >= 0) {
				if (h == 0 && l == 0)
					return (NULL);	/* no NUL in values */
				*(*o)++ = h << 4 | l;
				p += 2;
			} else
				*(*o)++ = *++p;
			keep = *o;
			continue;
		}
		*(*o)++ = *p;
		if (*p != ' ' || quoted)
			keep = *o;
	}
	if (quoted && !closed)
		return (NULL);	/* an unterminated quote */
	*o = keep;	/* trailing unescaped spaces go */
	*(*o)++ = '\0';
	return (p);
}

static int
keyid_dn(const char *p, struct tpp_keyid *k, char *o, char *end)
{
	const char	*type;
	size_t		 tlen;

	k->nattrs = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		for (type = p; isalnum((unsigned char)*p) || *p == '.' ||
		    *p == '-'; p++)
			;
		tlen = p - type;
		while (*p == ' ')
			p++;
		if (tlen == 0 || *p != '=' || o + tlen + 1 >= end ||
		    k->nattrs == TPP_KEYID_ATTRS_MAX)
			return (-1);
		memcpy(o, type, tlen);
		o[tlen] = '\0';
		k->attrs[k->nattrs].type = o;
		o += tlen + 1;
		if (p[1] == '#')
			return (-1);	/* BER-encoded values: not supported */
		k->attrs[k->nattrs].value = o;
		if ((p = dn_value(p + 1, &o, end)) == NULL)
			return (-1);
		if (*k->attrs[k->nattrs].value == '\0')
			return (-1);
		k->nattrs++;
		if (*p == '\0')
			return (0);
		if (*p != ',' && *p != ';' && *p != '+')
			return (-1);
		p++;
	}
}

int
tpp_keyid_parse(const char *s, struct tpp_keyid *k, char *err, size_t errlen)
{
	const char	*comma;

	memset(k, 0, sizeof(*k));
	if (strlen(s) >= sizeof(k->buf)) {
		snprintf(err, errlen, "keyId is too long");
		return (-1);
	}
	while (*s == ' ')
		s++;
	if (strncasecmp(s, "SN=", 3) != 0 ||
	    (comma = strchr(s + 3, ',')) == NULL) {
		snprintf(err, errlen, "keyId must be SN=<serial hex>,CA=<issuer "
		    "DN>");
		return (-1);
	}
	if (keyid_serial(s + 3, comma - (s + 3), k) == -1) {
		snprintf(err, errlen, "keyId SN must be the certificate's "
		    "serial number in hex");
		return (-1);
	}
	for (s = comma + 1; *s == ' '; s++)
		;
	if (strncasecmp(s, "CA=", 3) != 0 ||
	    keyid_dn(s + 3, k, k->buf, k->buf + sizeof(k->buf)) == -1) {
		snprintf(err, errlen, "keyId CA must be the issuer's "
		    "distinguished name");
		return (-1);
	}
	return (0);
}

static int
dn_nid(const char *type)
{
	size_t	i;

	for (i = 0; i < sizeof(dn_aliases) / sizeof(dn_aliases[0]); i++)
		if (strcasecmp(type, dn_aliases[i].alias) == 0)
			return (dn_aliases[i].nid);
	return (OBJ_txt2nid(type));	/* other names and dotted OIDs */
}

/* caseIgnoreMatch, roughly: ASCII case folded, runs of spaces as one. */
static int
dn_value_equal(const char *a, const unsigned char *b, size_t blen)
{
	size_t	i = 0;

	while (*a != '\0' && i < blen) {
		if (*a == ' ' && b[i] == ' ') {
			while (*a == ' ')
				a++;
			while (i < blen && b[i] == ' ')
				i++;
			continue;
		}
		if (tolower((unsigned char)*a) != tolower(b[i]))
			return (0);
		a++, i++;
	}
	return (*a == '\0' && i == blen);
}

static int
dn_attr_equal(const struct tpp_dn_attr *a, const X509_NAME_ENTRY *e)
{
	unsigned char	*utf8;
	int		 len, nid, ok;

	nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
	if (nid == NID_undef || nid != dn_nid(a->type))
		return (0);
	if ((len = ASN1_STRING_to_UTF8(&utf8,
	    X509_NAME_ENTRY_get_data(e))) < 0)
		return (0);
	ok = dn_value_equal(a->value, utf8, len);
	OPENSSL_free(utf8);
	return (ok);
}

static int
keyid_issuer_matches(const struct tpp_keyid *k, const X509_NAME *issuer)
{
	size_t	i, n;
	int	fwd = 1, rev = 1;

	n = X509_NAME_entry_count(issuer);
	if (n != k->nattrs)
		return (0);
	for (i = 0; i < n; i++) {
		if (fwd && !dn_attr_equal(&k->attrs[i],
		    X509_NAME_get_entry(issuer, i)))
			fwd = 0;
		if (rev && !dn_attr_equal(&k->attrs[n - 1 - i],
		    X509_NAME_get_entry(issuer, i)))
			rev = 0;
	}
	return (fwd || rev);
}

int
tpp_keyid_matches(const struct tpp_keyid *k, X509 *cert)
{
	const ASN1_INTEGER	*sn;
	const unsigned char	*d;
	int			 len;

	sn = X509_get0_serialNumber(cert);
	if (ASN1_STRING_type(sn) != V_ASN1_INTEGER)
		return (0);
	d = ASN1_STRING_get0_data(sn);
	len = ASN1_STRING_length(sn);
	while (len > 1 && *d == 0)
		d++, len--;
	if ((size_t)len != k->serial_len || memcmp(d, k->serial, len) != 0)
		return (0);
	return (keyid_issuer_matches(k, X509_get_issuer_name(cert)));
}
