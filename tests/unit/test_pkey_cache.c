/*
 * Unit tests for src/common/pkey_cache.c: a key comes back for the same
 * type and bytes only, the split of a key's parts counts, a slot takes
 * the last key, and references stay balanced (AddressSanitizer's leak
 * check runs these too).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "pkey_cache.h"

static EVP_PKEY *
raw_key(uint8_t fill)
{
	uint8_t	x[32];

	memset(x, fill, sizeof(x));
	return (EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x,
	    sizeof(x)));
}

static void
test_same_bytes_same_key(void **state)
{
	uint8_t		 x[32], id[32], id2[32];
	EVP_PKEY	*k, *got;
	(void)state;

	memset(x, 0x11, sizeof(x));
	assert_null(pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0,
	    id));
	assert_non_null(k = raw_key(0x11));
	pkey_cache_put(id, k);
	got = pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0, id2);
	assert_ptr_equal(got, k);
	assert_memory_equal(id, id2, sizeof(id));
	EVP_PKEY_free(got);
	/* The cache's own reference outlives the caller's. */
	EVP_PKEY_free(k);
	got = pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0, id2);
	assert_ptr_equal(got, k);
	EVP_PKEY_free(got);
}

static void
test_type_and_split_count(void **state)
{
	uint8_t		 x[32], id[32];
	EVP_PKEY	*k;
	(void)state;

	memset(x, 0x22, sizeof(x));
	assert_null(pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0,
	    id));
	assert_non_null(k = raw_key(0x22));
	pkey_cache_put(id, k);
	EVP_PKEY_free(k);
	/* The same bytes of another type, or parted otherwise: not it. */
	assert_null(pkey_cache_get(EVP_PKEY_EC, x, sizeof(x), NULL, 0, id));
	assert_null(pkey_cache_get(EVP_PKEY_ED25519, x, 16, x + 16, 16, id));
	assert_null(pkey_cache_get(EVP_PKEY_ED25519, x, 31, NULL, 0, id));
}

static void
test_slots_take_the_last(void **state)
{
	uint8_t		 x[32], id[32];
	EVP_PKEY	*k, *got;
	int		 i;
	(void)state;

	/* Four times as many keys as slots: every slot is replaced. */
	for (i = 0; i < 4 * PKEY_CACHE_SLOTS; i++) {
		memset(x, 0, sizeof(x));
		x[0] = (uint8_t)i;
		x[1] = (uint8_t)(i >> 8);
		x[2] = 0x33;
		(void)pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0,
		    id);
		assert_non_null(k = EVP_PKEY_new_raw_public_key(
		    EVP_PKEY_ED25519, NULL, x, sizeof(x)));
		pkey_cache_put(id, k);
		EVP_PKEY_free(k);
		got = pkey_cache_get(EVP_PKEY_ED25519, x, sizeof(x), NULL, 0,
		    id);
		assert_ptr_equal(got, k);
		EVP_PKEY_free(got);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes_same_key),
		cmocka_unit_test(test_type_and_split_count),
		cmocka_unit_test(test_slots_take_the_last),
	};

	return (cmocka_run_group_tests_name("pkey_cache", tests, NULL, NULL));
}
