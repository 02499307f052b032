/*
 * The draft-cavage keyId of the Berlin Group guidelines:
 *	SN=<certificate serial number, hex>,CA=<issuer distinguished name>
 * The issuer DN is parsed (RFC 4514 syntax: escapes, quoted values,
 * multi-valued RDNs) and compared attribute by attribute with the
 * certificate's issuer, in either order (RFC 4514 writes the most
 * specific RDN first, OpenSSL's one-line form the least specific), with
 * case-insensitive values and collapsed spaces, never as raw strings.
 */
#ifndef PSD2_TPP_KEYID_H
#define PSD2_TPP_KEYID_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

#define TPP_KEYID_MAX		2048
#define TPP_KEYID_ATTRS_MAX	24
#define TPP_SERIAL_MAX		32	/* RFC 5280: 20, with room for odd CAs */

struct tpp_dn_attr {
	const char	*type;		/* as written: "CN", "2.5.4.97" */
	const char	*value;		/* unescaped, trimmed, NUL-free */
};

struct tpp_keyid {
	uint8_t			serial[TPP_SERIAL_MAX];	/* no leading zeros */
	size_t			serial_len;
	struct tpp_dn_attr	attrs[TPP_KEYID_ATTRS_MAX];
	size_t			nattrs;
	char			buf[TPP_KEYID_MAX];
};

/* Returns 0, or -1 with a reason in err. */
int	tpp_keyid_parse(const char *, struct tpp_keyid *, char *, size_t);

/* 1 when the keyId names cert (serial and issuer), else 0. */
int	tpp_keyid_matches(const struct tpp_keyid *, X509 *);

#endif
