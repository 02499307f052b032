/*
 * libFuzzer: the certificate header (base64 / PEM text), then the DER as
 * a certificate: organizationIdentifier, QCStatement, key usage.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpp/cert.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_fields(const uint8_t *der, size_t len)
{
	struct tpp_qc	 qc;
	X509		*x;
	char		 org[128];

	if ((x = tpp_cert_parse(der, len)) == NULL)
		return;
	(void)tpp_cert_org_id(x, org, sizeof(org));
	(void)tpp_cert_qc(x, &qc);
	(void)tpp_cert_can_sign(x);
	X509_free(x);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static uint8_t	 der[TPP_CERT_DER_MAX];
	char		*s;
	int		 n;

	fuzz_fields(data, len);
	if ((s = malloc(len + 1)) == NULL)
		return (0);
	memcpy(s, data, len);
	s[len] = '\0';
	if ((n = tpp_cert_decode(s, der, sizeof(der))) > 0)
		fuzz_fields(der, n);
	(void)tpp_org_id_valid(s);
	free(s);
	return (0);
}
