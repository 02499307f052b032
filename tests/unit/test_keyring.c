/*
 * Unit tests for src/common/keyring.c: file format, permission checks,
 * error messages, generation and wiping.
 */
#include <sys/stat.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "keyring.h"

#define HEX_A	"000102030405060708090a0b0c0d0e0f" \
		"101112131415161718191a1b1c1d1e1f"
#define HEX_B	"FFEEDDCCBBAA99887766554433221100" \
		"ffeeddccbbaa99887766554433221100"

struct fixture {
	char	dir[64];
	char	path[128];
};

static int
setup(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (-1);
	strcpy(f->dir, "/tmp/psd2-keyring-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return (-1);
	snprintf(f->path, sizeof(f->path), "%s/keys", f->dir);
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return (0);
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE	*fp;

	unlink(path);
	assert_non_null(fp = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int
load_text(struct fixture *f, const char *text, struct keyring *kr,
    char *err, size_t errlen)
{
	write_file(f->path, text, 0600);
	return (keyring_load(kr, f->path, err, errlen));
}

static void
test_load_valid(void **state)
{
	struct fixture			*f = *state;
	struct keyring			 kr;
	const struct keyring_key	*k;
	char				 err[256];
	(void)state;

	assert_int_equal(load_text(f,
	    "# rotation: newest first\n"
	    "\n"
	    "  new-2024_B\t " HEX_B "  \r\n"
	    "   # indented comment\n"
	    "old " HEX_A "\n", &kr, err, sizeof(err)), 0);
	assert_int_equal(kr.count, 2);
	assert_non_null(k = keyring_current(&kr));
	assert_string_equal(k->id, "new-2024_B");
	assert_memory_equal(k->key, "\xff\xee\xdd\xcc\xbb\xaa\x99\x88"
	    "\x77\x66\x55\x44\x33\x22\x11\x00", 16);
	assert_non_null(k = keyring_find(&kr, "old", 3));
	assert_int_equal(k->key[0], 0x00);
	assert_int_equal(k->key[31], 0x1f);
	assert_null(keyring_find(&kr, "ol", 2));
	assert_null(keyring_find(&kr, "oldx", 4));
	/* Found by length, so a longer unterminated buffer works. */
	assert_non_null(keyring_find(&kr, "old.rest", 3));
	keyring_clear(&kr);

	/* No final newline, single key. */
	assert_int_equal(load_text(f, "k " HEX_A, &kr, err, sizeof(err)), 0);
	assert_int_equal(kr.count, 1);
	keyring_clear(&kr);
}

static void
test_permissions(void **state)
{
	struct fixture	*f = *state;
	struct keyring	 kr;
	char		 err[256];
	static const mode_t bad[] = { 0644, 0640, 0604, 0660, 0610, 0601,
	    0666, 0700 | 0004 };
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(f->path, "k " HEX_A "\n", bad[i]);
		err[0] = '\0';
		assert_int_equal(keyring_load(&kr, f->path, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "too open"));
		assert_non_null(strstr(err, f->path));
		assert_int_equal(kr.count, 0);
	}
	write_file(f->path, "k " HEX_A "\n", 0400);
	assert_int_equal(keyring_load(&kr, f->path, err, sizeof(err)), 0);
	write_file(f->path, "k " HEX_A "\n", 0600);
	assert_int_equal(keyring_load(&kr, f->path, err, sizeof(err)), 0);
	keyring_clear(&kr);

	/* A directory, and a missing file. */
	assert_int_equal(chmod(f->dir, 0700), 0);
	assert_int_equal(keyring_load(&kr, f->dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(keyring_load(&kr, "/nonexistent/keys", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/keys"));
}

static void
test_malformed(void **state)
{
	struct fixture	*f = *state;
	struct keyring	 kr;
	char		 err[256], big[2048];
	int		 i, off;
	static const char *bad[] = {
		"",
		"# only a comment\n\n",
		"k\n",
		"k " HEX_A " extra\n",
		"k " HEX_A "0\n",
		"k 0" HEX_A "\n",
		"k 000102030405060708090a0b0c0d0e0f\n",
		"k 000102030405060708090a0b0c0d0e0f"
		    "101112131415161718191a1b1c1d1e1g\n",
		"bad.id " HEX_A "\n",
		"bad/id " HEX_A "\n",
		"ke\xc3\xbf " HEX_A "\n",
		"aaaaaaaaaaaaaaaaa " HEX_A "\n",	/* 17 chars */
		"dup " HEX_A "\ndup " HEX_B "\n",
		HEX_A "\n",
		"k\t\n",
	};
	size_t		 n;

	for (n = 0; n < sizeof(bad) / sizeof(bad[0]); n++) {
		err[0] = '\0';
		assert_int_equal(load_text(f, bad[n], &kr, err, sizeof(err)),
		    -1);
		assert_true(strlen(err) > 0);
		assert_int_equal(kr.count, 0);
	}

	assert_int_equal(load_text(f, "ok " HEX_A "\nbad! " HEX_B "\n", &kr,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 2"));
	assert_int_equal(load_text(f, "dup " HEX_A "\ndup " HEX_B "\n", &kr,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "duplicate"));

	/* 16 characters is the longest id. */
	assert_int_equal(load_text(f, "aaaaaaaaaaaaaaaa " HEX_A "\n", &kr,
	    err, sizeof(err)), 0);
	keyring_clear(&kr);

	/* KEYRING_MAX keys load, one more does not. */
	for (i = 0, off = 0; i < KEYRING_MAX + 1; i++)
		off += snprintf(big + off, sizeof(big) - off, "k%d %s\n", i,
		    HEX_A);
	assert_int_equal(load_text(f, big, &kr, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than"));
	*strrchr(big, 'k') = '\0';
	assert_int_equal(load_text(f, big, &kr, err, sizeof(err)), 0);
	assert_int_equal(kr.count, KEYRING_MAX);
	keyring_clear(&kr);

	/* An embedded NUL. */
	{
		FILE	*fp;

		unlink(f->path);
		assert_non_null(fp = fopen(f->path, "w"));
		fwrite("k " HEX_A "\n\0x", 1, 2 + 64 + 3, fp);
		fclose(fp);
		chmod(f->path, 0600);
		assert_int_equal(keyring_load(&kr, f->path, err, sizeof(err)),
		    -1);
	}
	/* NULL err is allowed. */
	assert_int_equal(load_text(f, "", &kr, NULL, 0), -1);
}

static void
test_clear(void **state)
{
	struct fixture	*f = *state;
	struct keyring	 kr;
	uint8_t		 zero[KEYRING_KEY_LEN];
	char		 err[256];

	assert_int_equal(load_text(f, "k " HEX_B "\n", &kr, err,
	    sizeof(err)), 0);
	keyring_clear(&kr);
	memset(zero, 0, sizeof(zero));
	assert_int_equal(kr.count, 0);
	assert_memory_equal(kr.keys[0].key, zero, sizeof(zero));
	assert_null(keyring_current(&kr));
	assert_null(keyring_find(&kr, "k", 1));
	keyring_clear(NULL);
}

static void
test_generate(void **state)
{
	struct fixture	*f = *state;
	struct keyring	 kr, kr2;
	struct stat	 st;
	char		 err[256], other[160];
	uint8_t		 zero[KEYRING_KEY_LEN];
	FILE		*fp;
	char		 line[256];

	unlink(f->path);
	assert_int_equal(keyring_generate_file(f->path, "k2025", err,
	    sizeof(err)), 0);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(keyring_load(&kr, f->path, err, sizeof(err)), 0);
	assert_int_equal(kr.count, 1);
	assert_string_equal(keyring_current(&kr)->id, "k2025");
	memset(zero, 0, sizeof(zero));
	assert_memory_not_equal(kr.keys[0].key, zero, sizeof(zero));

	/* Refuses to overwrite; the file is unchanged. */
	assert_int_equal(keyring_generate_file(f->path, "other", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, f->path));
	assert_int_equal(keyring_load(&kr2, f->path, err, sizeof(err)), 0);
	assert_memory_equal(kr.keys[0].key, kr2.keys[0].key, KEYRING_KEY_LEN);
	assert_non_null(fp = fopen(f->path, "r"));
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_int_equal(line[0], '#');
	fclose(fp);

	/* A second file gets a different key. */
	snprintf(other, sizeof(other), "%s/keys2", f->dir);
	assert_int_equal(keyring_generate_file(other, "k2", err,
	    sizeof(err)), 0);
	assert_int_equal(keyring_load(&kr2, other, err, sizeof(err)), 0);
	assert_memory_not_equal(kr.keys[0].key, kr2.keys[0].key,
	    KEYRING_KEY_LEN);
	unlink(other);

	/* Invalid ids; nothing is created. */
	assert_int_equal(keyring_generate_file(other, "", err, sizeof(err)),
	    -1);
	assert_int_equal(keyring_generate_file(other, "a.b", err,
	    sizeof(err)), -1);
	assert_int_equal(keyring_generate_file(other, NULL, err,
	    sizeof(err)), -1);
	assert_int_equal(access(other, F_OK), -1);
	/* Unwritable location. */
	assert_int_equal(keyring_generate_file("/nonexistent/k", "k", err,
	    sizeof(err)), -1);
	keyring_clear(&kr);
	keyring_clear(&kr2);
}

static void
test_add(void **state)
{
	struct keyring	kr;
	uint8_t		key[KEYRING_KEY_LEN];
	char		id[16];
	int		i;
	(void)state;

	memset(&kr, 0, sizeof(kr));
	memset(key, 7, sizeof(key));
	assert_int_equal(keyring_add(&kr, "a", key), 0);
	assert_int_equal(keyring_add(&kr, "a", key), -1);
	assert_int_equal(keyring_add(&kr, "", key), -1);
	assert_int_equal(keyring_add(&kr, "a b", key), -1);
	assert_int_equal(keyring_add(&kr, "aaaaaaaaaaaaaaaaa", key), -1);
	for (i = 1; i < KEYRING_MAX; i++) {
		snprintf(id, sizeof(id), "k%d", i);
		assert_int_equal(keyring_add(&kr, id, key), 0);
	}
	assert_int_equal(keyring_add(&kr, "full", key), -1);
	assert_string_equal(keyring_current(&kr)->id, "a");
	assert_true(keyring_valid_id("A-z_9", 5));
	assert_false(keyring_valid_id("A-z_9", 0));
	keyring_clear(&kr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_load_valid, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_permissions, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generate, setup,
		    teardown),
		cmocka_unit_test(test_add),
	};

	return (cmocka_run_group_tests_name("keyring", tests, NULL, NULL));
}
