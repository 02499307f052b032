/*
 * The payment id in an authorise page's path; see payment_path.h.
 */
#include <string.h>

#include "common/crypto.h"
#include "psu/payment_path.h"

#define PSU_PAYMENT_PREFIX	"/auth/payments/"
#define PSU_PAYMENT_SUFFIX	"/authorise"

int
psu_payment_path_id(const char *path, char id[PSU_PAYMENT_ID_LEN + 1])
{
	size_t	plen = sizeof(PSU_PAYMENT_PREFIX) - 1;

	if (strlen(path) != plen + PSU_PAYMENT_ID_LEN +
	    sizeof(PSU_PAYMENT_SUFFIX) - 1 ||
	    strncmp(path, PSU_PAYMENT_PREFIX, plen) != 0 ||
	    strcmp(path + plen + PSU_PAYMENT_ID_LEN, PSU_PAYMENT_SUFFIX) != 0)
		return (-1);
	memcpy(id, path + plen, PSU_PAYMENT_ID_LEN);
	id[PSU_PAYMENT_ID_LEN] = '\0';
	/* Lower case only: the id is part of the authentication code. */
	if (strspn(id, "0123456789abcdef-") != PSU_PAYMENT_ID_LEN)
		return (-1);
	return (crypto_is_uuid(id) ? 0 : -1);
}
