/* libFuzzer: keyId parsing and comparison with a certificate. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/x509.h>

#include "tpp/keyid.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static X509 *
fuzz_cert(void)
{
	static X509	*x;
	X509_NAME	*n;

	if (x != NULL)
		return (x);
	x = X509_new();
	ASN1_INTEGER_set(X509_get_serialNumber(x), 0x1a2b);
	n = X509_get_issuer_name(x);
	X509_NAME_add_entry_by_txt(n, "C", MBSTRING_ASC,
	    (const unsigned char *)"DE", -1, -1, 0);
	X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8,
	    (const unsigned char *)"Trust, \"Services\" GmbH", -1, -1, 0);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)"Test CA", -1, -1, 0);
	return (x);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct tpp_keyid	 k;
	char			*s, err[160];

	if ((s = malloc(len + 1)) == NULL)
		return (0);
	memcpy(s, data, len);
	s[len] = '\0';
	if (tpp_keyid_parse(s, &k, err, sizeof(err)) == 0)
		(void)tpp_keyid_matches(&k, fuzz_cert());
	free(s);
	return (0);
}
