#include <string.h>

#include <argon2.h>

#include "common/crypto.h"
#include "common/passhash.h"

int
passhash_make(const char *password, char *out, size_t outlen)
{
	unsigned char	salt[16];

	if (crypto_random(salt, sizeof(salt)) == -1)
		return (-1);
	if (argon2id_hash_encoded(PASSHASH_T_COST, PASSHASH_M_COST,
	    PASSHASH_PARALLELISM, password, strlen(password), salt,
	    sizeof(salt), 32, out, outlen) != ARGON2_OK)
		return (-1);
	return (0);
}

int
passhash_verify(const char *encoded, const char *password)
{
	return (argon2id_verify(encoded, password, strlen(password)) ==
	    ARGON2_OK);
}
