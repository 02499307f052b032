/*
 * The attestation trust check (src/common/webauthn_trust.c) against
 * certificates made by Python's cryptography (webauthn_trust_vectors.h,
 * from webauthn_trust_vectors.py): a leaf of a trusted root, directly or
 * through an intermediate, and the batch certificate whose name and key
 * a root has, pass; every other attestation is refused with its reason;
 * the roots file and the AAGUID list are read strictly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "webauthn_trust.h"
#include "webauthn_trust_vectors.h"

#define CHECK1(st, g, a)	check(st, g, a, sizeof(a), NULL, 0)
#define CHECK2(st, g, a, b)	check(st, g, a, sizeof(a), b, sizeof(b))

static void
pem_file(const char *pem, char path[64])
{
	size_t	len;
	int	fd;

	(void)snprintf(path, 64, "/tmp/test_webauthn_trust.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd != -1);
	len = strlen(pem);
	assert_int_equal(write(fd, pem, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static struct webauthn_trust *
load(const char *pem, const char *aaguids, char *err, size_t errlen)
{
	struct webauthn_trust	*t;
	char			 path[64];

	pem_file(pem, path);
	err[0] = '\0';
	t = webauthn_trust_load(path, aaguids, err, errlen);
	assert_int_equal(unlink(path), 0);
	return (t);
}

static void
cred_fill(struct webauthn_credential *c, const uint8_t *aaguid,
    const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	memset(c, 0, sizeof(*c));
	c->attested = WEBAUTHN_ATT_X5C;
	memcpy(c->aaguid, aaguid, sizeof(c->aaguid));
	memcpy(c->x5c, a, alen);
	c->x5c_len[0] = alen;
	c->x5c_count = 1;
	if (b != NULL) {
		memcpy(c->x5c + alen, b, blen);
		c->x5c_len[1] = blen;
		c->x5c_count = 2;
	}
}

static const char *
check(void **state, const uint8_t *aaguid, const uint8_t *a, size_t alen,
    const uint8_t *b, size_t blen)
{
	struct webauthn_credential	c;

	cred_fill(&c, aaguid, a, alen, b, blen);
	return (webauthn_trust_check(*state, &c));
}

/* The roots trusted (the CA's and the batch maker's), our one AAGUID. */
static int
setup(void **state)
{
	char	err[256];

	*state = load(WT_ROOTS_PEM, WT_AAGUID_TEXT, err, sizeof(err));
	if (*state == NULL)
		fprintf(stderr, "setup: %s\n", err);
	return (*state == NULL ? -1 : 0);
}

static int
teardown(void **state)
{
	webauthn_trust_free(*state);
	return (0);
}

static void
test_root_leaf(void **state)
{
	uint8_t		bad[sizeof(wt_leaf)];

	assert_null(CHECK1(state, wt_aaguid, wt_leaf));
	memcpy(bad, wt_leaf, sizeof(bad));
	bad[sizeof(bad) - 1] ^= 1;
	assert_string_equal(CHECK1(state, wt_aaguid, bad),
	    "attestation chain: not to a root");
	/* The AAGUID extension is optional. */
	assert_null(CHECK1(state, wt_aaguid, wt_leaf_no_aaguid));
}

static void
test_intermediate(void **state)
{
	assert_null(CHECK2(state, wt_aaguid, wt_leaf_inter, wt_inter));
	/* Without the intermediate there is no path to the root. */
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_inter),
	    "attestation chain: not to a root");
}

static void
test_other_root(void **state)
{
	struct webauthn_trust	*t;
	char			 err[256];
	void			*other;

	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_other),
	    "attestation chain: not to a root");
	/* Trusting only the other maker turns both answers round. */
	t = load(WT_OTHER_ROOT_PEM, WT_AAGUID_TEXT, err, sizeof(err));
	assert_non_null(t);
	other = t;
	assert_null(CHECK1(&other, wt_aaguid, wt_leaf_other));
	assert_string_equal(CHECK1(&other, wt_aaguid, wt_leaf),
	    "attestation chain: not to a root");
	webauthn_trust_free(t);
}

static void
test_aaguid(void **state)
{
	assert_string_equal(CHECK1(state, wt_aaguid_other, wt_leaf_aaguid),
	    "AAGUID not allowed");
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_aaguid),
	    "attestation certificate: AAGUID extension differs");
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_critical),
	    "attestation certificate: AAGUID extension critical");
}

static void
test_leaf_requirements(void **state)
{
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_ca),
	    "attestation certificate: a CA");
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_ou),
	    "attestation certificate: subject OU");
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_no_ou),
	    "attestation certificate: subject OU");
	/* A CA's certificate as the leaf. */
	assert_non_null(CHECK1(state, wt_aaguid, wt_inter));
	assert_string_equal(CHECK1(state, wt_aaguid, wt_leaf_expired),
	    "attestation chain: a certificate not valid now");
}

static void
test_not_x5c(void **state)
{
	struct webauthn_credential	c;

	cred_fill(&c, wt_aaguid, wt_leaf, sizeof(wt_leaf), NULL, 0);
	assert_null(webauthn_trust_check(*state, &c));
	c.attested = WEBAUTHN_ATT_SELF;
	assert_string_equal(webauthn_trust_check(*state, &c),
	    "self attestation: no maker proven");
	c.attested = WEBAUTHN_ATT_NONE;
	assert_string_equal(webauthn_trust_check(*state, &c),
	    "attestation none: no maker proven");
}

static void
test_x5c_malformed(void **state)
{
	struct webauthn_credential	c;

	/* A byte after the certificate, one short, none at all. */
	cred_fill(&c, wt_aaguid, wt_leaf, sizeof(wt_leaf), NULL, 0);
	c.x5c[c.x5c_len[0]++] = 0;
	assert_string_equal(webauthn_trust_check(*state, &c),
	    "x5c: a certificate is not DER");
	c.x5c_len[0] = sizeof(wt_leaf) - 1;
	assert_string_equal(webauthn_trust_check(*state, &c),
	    "x5c: a certificate is not DER");
	c.x5c_count = 0;
	assert_string_equal(webauthn_trust_check(*state, &c), "x5c count");
	cred_fill(&c, wt_aaguid, wt_leaf, sizeof(wt_leaf), NULL, 0);
	c.x5c_len[0] = sizeof(c.x5c) + 1;
	assert_string_equal(webauthn_trust_check(*state, &c), "x5c lengths");
}

static void
test_batch(void **state)
{
	uint8_t		bad[sizeof(wt_batch)];

	/* Chromium's virtual authenticator: its name and key are a root's. */
	assert_null(CHECK1(state, wt_aaguid, wt_batch));
	/* The last byte is the signature's. */
	memcpy(bad, wt_batch, sizeof(bad));
	bad[sizeof(bad) - 1] ^= 1;
	assert_string_equal(CHECK1(state, wt_aaguid, bad),
	    "self-signed attestation certificate: signature");
	assert_string_equal(CHECK1(state, wt_aaguid, wt_batch_other_key),
	    "self-signed attestation certificate: no root of its name and "
	    "key");
	assert_string_equal(CHECK1(state, wt_aaguid, wt_batch_expired),
	    "self-signed attestation certificate: not valid now");
	/* Not alone: a chain, and a self-signed leaf is no root's child. */
	assert_string_equal(CHECK2(state, wt_aaguid, wt_batch, wt_inter),
	    "attestation chain: not to a root");
}

static void
test_load_errors(void **state)
{
	struct webauthn_trust	*t;
	char			 err[256], path[64];
	const char		*bad;

	(void)state;
	t = webauthn_trust_load("/nonexistent/roots.pem", WT_AAGUID_TEXT,
	    err, sizeof(err));
	assert_null(t);
	assert_non_null(strstr(err, "/nonexistent/roots.pem: "));
	assert_null(load("no certificate here\n", WT_AAGUID_TEXT, err,
	    sizeof(err)));
	assert_non_null(strstr(err, ": no certificate"));
	/* The third certificate is broken. */
	assert_null(load(WT_ROOTS_PEM "-----BEGIN CERTIFICATE-----\nAAAA\n"
	    "-----END CERTIFICATE-----\n", WT_AAGUID_TEXT, err, sizeof(err)));
	assert_non_null(strstr(err, "certificate 3 is not"));
	assert_null(load(WT_ROOTS_PEM, WT_AAGUID_TEXT ", 1011121314151617"
	    "18191a1b1c1d1e1f", err, sizeof(err)));
	assert_non_null(strstr(err, "AAGUID 2 \"1011121314151617"));
	bad = "10111213-1415-1617-1819-1a1b1c1d1e1g";
	assert_null(load(WT_ROOTS_PEM, bad, err, sizeof(err)));
	assert_non_null(strstr(err, "AAGUID 1 \"10111213-1415-1617-1819-"
	    "1a1b1c1d1e1g\" is not a UUID"));
	assert_null(load(WT_ROOTS_PEM, "", err, sizeof(err)));
	assert_string_equal(err, "AAGUIDs: none listed");
	assert_null(load(WT_ROOTS_PEM, " ,, ", err, sizeof(err)));
	assert_string_equal(err, "AAGUIDs: none listed");
	/* The AAGUIDs are read first: a good list reaches the file. */
	pem_file(WT_ROOTS_PEM, path);
	assert_int_equal(unlink(path), 0);
	assert_null(webauthn_trust_load(path, WT_AAGUID_TEXT, err,
	    sizeof(err)));
	assert_non_null(strstr(err, path));
}

static void
test_load_list(void **state)
{
	struct webauthn_trust	*t;
	char			 err[256], list[65 * 38 + 1];
	void			*both;
	size_t			 i;

	(void)state;
	t = load(WT_ROOTS_PEM, " " WT_AAGUID_TEXT ",\t" WT_AAGUID_OTHER_UPPER
	    " ,", err, sizeof(err));
	assert_non_null(t);
	both = t;
	assert_null(CHECK1(&both, wt_aaguid, wt_leaf));
	assert_null(CHECK1(&both, wt_aaguid_other, wt_leaf_aaguid));
	/* Listed, but the certificate names another model. */
	assert_string_equal(CHECK1(&both, wt_aaguid_other, wt_leaf),
	    "attestation certificate: AAGUID extension differs");
	webauthn_trust_free(t);
	/* 64 at most. */
	list[0] = '\0';
	for (i = 0; i < 64; i++)
		strcat(list, WT_AAGUID_TEXT " ");
	t = load(WT_ROOTS_PEM, list, err, sizeof(err));
	assert_non_null(t);
	webauthn_trust_free(t);
	strcat(list, WT_AAGUID_TEXT);
	assert_null(load(WT_ROOTS_PEM, list, err, sizeof(err)));
	assert_string_equal(err, "AAGUIDs: more than 64");
}

static void
test_aaguid_text(void **state)
{
	const uint8_t	zero[16] = { 0 };
	char		text[37];

	(void)state;
	webauthn_aaguid_text(wt_aaguid, text);
	assert_string_equal(text, WT_AAGUID_TEXT);
	webauthn_aaguid_text(wt_aaguid_other, text);
	assert_string_equal(text, "20212223-2425-2627-2829-2a2b2c2d2e2f");
	webauthn_aaguid_text(zero, text);
	assert_string_equal(text, "00000000-0000-0000-0000-000000000000");
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_root_leaf),
		cmocka_unit_test(test_intermediate),
		cmocka_unit_test(test_other_root),
		cmocka_unit_test(test_aaguid),
		cmocka_unit_test(test_leaf_requirements),
		cmocka_unit_test(test_not_x5c),
		cmocka_unit_test(test_x5c_malformed),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_list),
		cmocka_unit_test(test_aaguid_text),
	};

	return (cmocka_run_group_tests_name("webauthn_trust", tests, setup,
	    teardown));
}
