/*
 * Key file loading and generation. The file is checked through the open
 * descriptor (fstat), so what is checked is what is read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "crypto.h"
#include "encoding.h"
#include "keyring.h"

#define KEYRING_FILE_MAX	(64 * 1024)

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list		ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int
keyring_valid_id(const char *id, size_t len)
{
	size_t		i;
	char		c;

	if (id == NULL || len < 1 || len > KEYRING_ID_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		c = id[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return (0);
	}
	return (1);
}

void
keyring_clear(struct keyring *kr)
{
	if (kr == NULL)
		return;
	OPENSSL_cleanse(kr, sizeof(*kr));
	kr->count = 0;
}

const struct keyring_key *
keyring_current(const struct keyring *kr)
{
	if (kr == NULL || kr->count == 0)
		return (NULL);
	return (&kr->keys[0]);
}

const struct keyring_key *
keyring_find(const struct keyring *kr, const char *id, size_t idlen)
{
	size_t		i;

	if (kr == NULL || id == NULL || idlen > KEYRING_ID_MAX)
		return (NULL);
	for (i = 0; i < kr->count; i++) {
		if (strlen(kr->keys[i].id) == idlen &&
		    memcmp(kr->keys[i].id, id, idlen) == 0)
			return (&kr->keys[i]);
	}
	return (NULL);
}

int
keyring_add(struct keyring *kr, const char *key_id, const uint8_t key[32])
{
	struct keyring_key	*k;
	size_t			 idlen;

	if (kr == NULL || key_id == NULL || key == NULL)
		return (-1);
	idlen = strlen(key_id);
	if (!keyring_valid_id(key_id, idlen) || kr->count >= KEYRING_MAX ||
	    keyring_find(kr, key_id, idlen) != NULL)
		return (-1);
	k = &kr->keys[kr->count++];
	memcpy(k->id, key_id, idlen + 1);
	memcpy(k->key, key, KEYRING_KEY_LEN);
	return (0);
}

/* Reads the whole (small) file behind fd into a NUL-terminated buffer. */
static char *
read_all(int fd, size_t size, char *err, size_t errlen, const char *path)
{
	char		*buf;
	size_t		 off = 0;
	ssize_t		 n;

	if ((buf = malloc(size + 1)) == NULL) {
		seterr(err, errlen, "%s: out of memory", path);
		return (NULL);
	}
	while (off < size) {
		n = read(fd, buf + off, size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off != size) {
		OPENSSL_cleanse(buf, size + 1);
		free(buf);
		seterr(err, errlen, "%s: short read", path);
		return (NULL);
	}
	buf[size] = '\0';
	return (buf);
}

static int
is_blank(char c)
{
	return (c == ' ' || c == '\t' || c == '\r');
}

/* Parses one line (already without '\n'). */
static int
parse_line(struct keyring *kr, char *line, const char *path, int lineno,
    char *err, size_t errlen)
{
	char		*id, *hex, *end;
	size_t		 idlen, hexlen;
	uint8_t		 key[KEYRING_KEY_LEN];
	int		 rc;

	while (is_blank(*line))
		line++;
	end = line + strlen(line);
	while (end > line && is_blank(end[-1]))
		*--end = '\0';
	if (*line == '\0' || *line == '#')
		return (0);

	id = line;
	for (idlen = 0; id[idlen] != '\0' && !is_blank(id[idlen]); idlen++)
		;
	hex = id + idlen;
	while (is_blank(*hex))
		hex++;
	for (hexlen = 0; hex[hexlen] != '\0' && !is_blank(hex[hexlen]);
	    hexlen++)
		;

	if (!keyring_valid_id(id, idlen)) {
		seterr(err, errlen, "%s: line %d: key id must be 1-%d "
		    "characters of A-Z a-z 0-9 _ -", path, lineno,
		    KEYRING_ID_MAX);
		return (-1);
	}
	if (hex[hexlen] != '\0' || hexlen != KEYRING_KEY_LEN * 2 ||
	    hex_decode(hex, hexlen, key, sizeof(key)) != KEYRING_KEY_LEN) {
		seterr(err, errlen, "%s: line %d: expected \"<key-id> "
		    "<64 hex characters>\"", path, lineno);
		return (-1);
	}
	id[idlen] = '\0';
	if (keyring_find(kr, id, idlen) != NULL) {
		seterr(err, errlen, "%s: line %d: duplicate key id \"%s\"",
		    path, lineno, id);
		rc = -1;
	} else if ((rc = keyring_add(kr, id, key)) == -1) {
		seterr(err, errlen, "%s: line %d: more than %d keys", path,
		    lineno, KEYRING_MAX);
	}
	OPENSSL_cleanse(key, sizeof(key));
	return (rc);
}

static int
parse_text(struct keyring *kr, char *text, const char *path, char *err,
    size_t errlen)
{
	char		*line, *nl;
	int		 lineno = 0;

	for (line = text; line != NULL; line = nl) {
		lineno++;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = '\0';
		if (parse_line(kr, line, path, lineno, err, errlen) == -1)
			return (-1);
	}
	if (kr->count == 0) {
		seterr(err, errlen, "%s: no keys", path);
		return (-1);
	}
	return (0);
}

/* A key file must be a regular file that only its owner can read. */
static int
check_file(int fd, struct stat *st, const char *path, char *err,
    size_t errlen)
{
	if (fstat(fd, st) == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (!S_ISREG(st->st_mode)) {
		seterr(err, errlen, "%s: not a regular file", path);
		return (-1);
	}
	if (st->st_mode & (S_IRWXG | S_IRWXO)) {
		seterr(err, errlen, "%s: permissions %04o are too open: a key "
		    "file must not be accessible by group or others "
		    "(chmod 600)", path, (unsigned)(st->st_mode & 07777));
		return (-1);
	}
	if (st->st_size > KEYRING_FILE_MAX) {
		seterr(err, errlen, "%s: larger than %d bytes", path,
		    KEYRING_FILE_MAX);
		return (-1);
	}
	return (0);
}

int
keyring_load(struct keyring *kr, const char *path, char *err, size_t errlen)
{
	struct stat	 st;
	char		*text;
	size_t		 size;
	int		 fd, rc;

	if (kr == NULL || path == NULL) {
		seterr(err, errlen, "keyring_load: no keyring or path");
		return (-1);
	}
	keyring_clear(kr);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (check_file(fd, &st, path, err, errlen) == -1) {
		close(fd);
		return (-1);
	}
	size = (size_t)st.st_size;
	text = read_all(fd, size, err, errlen, path);
	close(fd);
	if (text == NULL)
		return (-1);

	if (memchr(text, '\0', size) != NULL) {
		seterr(err, errlen, "%s: contains a NUL byte", path);
		rc = -1;
	} else
		rc = parse_text(kr, text, path, err, errlen);
	OPENSSL_cleanse(text, size + 1);
	free(text);
	if (rc == -1)
		keyring_clear(kr);
	return (rc);
}

static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t		n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		buf += n;
		len -= (size_t)n;
	}
	return (0);
}

int
keyring_generate_file(const char *path, const char *key_id, char *err,
    size_t errlen)
{
	uint8_t		key[KEYRING_KEY_LEN];
	char		hex[KEYRING_KEY_LEN * 2 + 1];
	char		text[256];
	int		fd, len, rc = 0;

	if (path == NULL || key_id == NULL ||
	    !keyring_valid_id(key_id, strlen(key_id))) {
		seterr(err, errlen, "key id must be 1-%d characters of "
		    "A-Z a-z 0-9 _ -", KEYRING_ID_MAX);
		return (-1);
	}
	if (crypto_random(key, sizeof(key)) == -1) {
		seterr(err, errlen, "no randomness available");
		return (-1);
	}
	(void)hex_encode(key, sizeof(key), hex, sizeof(hex));
	OPENSSL_cleanse(key, sizeof(key));
	len = snprintf(text, sizeof(text), "# psd2gate keyring: the first key "
	    "seals, all keys open.\n%s %s\n", key_id, hex);
	OPENSSL_cleanse(hex, sizeof(hex));

	/* O_EXCL: never overwrite (and never follow a planted symlink). */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		rc = -1;
	} else if (fchmod(fd, 0600) == -1 ||
	    write_all(fd, text, (size_t)len) == -1 || fsync(fd) == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	OPENSSL_cleanse(text, sizeof(text));
	if (fd != -1 && close(fd) == -1 && rc == 0) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc == -1 && fd != -1)
		(void)unlink(path);
	return (rc);
}
