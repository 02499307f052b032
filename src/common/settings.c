/*
 * Settings loader: splits one configuration file into our "psd2_" lines
 * and Kore's lines, so that every program of the project reads the same
 * file per environment.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

#define SETTINGS_MAX		256
#define SETTINGS_PREFIX		"psd2_"
#define SETTINGS_INCLUDE_DEPTH	4

struct setting {
	char	*name;
	char	*value;
};

static struct setting	settings[SETTINGS_MAX];
static size_t		settings_count;
static char		settings_folder[PATH_MAX];

struct textbuf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

static int	settings_read(const char *, struct textbuf *, int,
		    char *, size_t);

static int
textbuf_append(struct textbuf *tb, const char *s, size_t len)
{
	char	*p;
	size_t	 ncap;

	if (tb == NULL)
		return (0);
	if (tb->len + len + 1 > tb->cap) {
		ncap = tb->cap ? tb->cap : 1024;
		while (tb->len + len + 1 > ncap)
			ncap *= 2;
		if ((p = realloc(tb->data, ncap)) == NULL)
			return (-1);
		tb->data = p;
		tb->cap = ncap;
	}
	memcpy(tb->data + tb->len, s, len);
	tb->len += len;
	tb->data[tb->len] = '\0';
	return (0);
}

/* base/rel, or rel alone when it is absolute. */
static int
path_join(char *out, size_t len, const char *base, const char *rel)
{
	int	n;

	if (rel[0] == '/')
		n = snprintf(out, len, "%s", rel);
	else
		n = snprintf(out, len, "%s/%s", base, rel);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

static char *
trim(char *s)
{
	char	*end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return (s);
}

static int
settings_set(const char *name, const char *value, char *err, size_t errlen)
{
	size_t		i;

	for (i = 0; i < settings_count; i++) {
		if (strcmp(settings[i].name, name) == 0) {
			free(settings[i].value);
			if ((settings[i].value = strdup(value)) == NULL)
				return (-1);
			return (0);
		}
	}
	if (settings_count == SETTINGS_MAX) {
		snprintf(err, errlen, "too many settings");
		return (-1);
	}
	settings[settings_count].name = strdup(name);
	settings[settings_count].value = strdup(value);
	if (settings[settings_count].name == NULL ||
	    settings[settings_count].value == NULL)
		return (-1);
	settings_count++;
	return (0);
}

static int
settings_line(char *line, const char *folder, struct textbuf *tb, int depth,
    char *err, size_t errlen)
{
	char	*p, *name, *value, inc[PATH_MAX];

	p = trim(line);
	if (strncmp(p, SETTINGS_PREFIX, strlen(SETTINGS_PREFIX)) == 0) {
		name = p + strlen(SETTINGS_PREFIX);
		value = name + strcspn(name, " \t");
		if (*value != '\0')
			*value++ = '\0';
		return (settings_set(name, trim(value), err, errlen));
	}
	if (strncmp(p, "include", 7) == 0 && isspace((unsigned char)p[7])) {
		value = trim(p + 7);
		if (path_join(inc, sizeof(inc), folder, value) == -1) {
			snprintf(err, errlen, "include path too long");
			return (-1);
		}
		return (settings_read(inc, tb, depth + 1, err, errlen));
	}
	if (textbuf_append(tb, p, strlen(p)) == -1 ||
	    textbuf_append(tb, "\n", 1) == -1)
		return (-1);
	return (0);
}

static int
settings_read(const char *path, struct textbuf *tb, int depth,
    char *err, size_t errlen)
{
	FILE	*fp;
	char	 line[4096], copy[PATH_MAX], folder[PATH_MAX];
	int	 rc;

	if (depth > SETTINGS_INCLUDE_DEPTH) {
		snprintf(err, errlen, "%s: includes nested too deeply", path);
		return (-1);
	}
	if ((fp = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(folder, sizeof(folder), "%s", dirname(copy));

	rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), fp) != NULL) {
		if (strchr(line, '\n') == NULL && !feof(fp)) {
			snprintf(err, errlen, "%s: line too long", path);
			rc = -1;
			break;
		}
		if (line[strspn(line, " \t")] == '#')
			continue;
		rc = settings_line(line, folder, tb, depth, err, errlen);
	}
	fclose(fp);
	return (rc);
}

int
settings_load(const char *path, char **kore_text, char *err, size_t errlen)
{
	struct textbuf	 tb = { NULL, 0, 0 };
	char		 copy[PATH_MAX], *real;

	settings_free();
	snprintf(copy, sizeof(copy), "%s", path);
	if ((real = realpath(dirname(copy), NULL)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	snprintf(settings_folder, sizeof(settings_folder), "%s", real);
	free(real);

	if (settings_read(path, kore_text ? &tb : NULL, 0, err, errlen) == -1) {
		free(tb.data);
		return (-1);
	}
	if (kore_text != NULL) {
		if (tb.data == NULL && textbuf_append(&tb, "", 0) == -1)
			return (-1);
		*kore_text = tb.data;
	}
	return (0);
}

const char *
settings_get(const char *name, const char *def)
{
	size_t		i;

	for (i = 0; i < settings_count; i++) {
		if (strcmp(settings[i].name, name) == 0)
			return (settings[i].value);
	}
	return (def);
}

int
settings_parse_int(const char *v, int64_t *out)
{
	char		*end;
	long long	 n;

	if (*v == '\0' || isspace((unsigned char)*v) || *v == '+')
		return (-1);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0')
		return (-1);
	*out = (int64_t)n;
	return (0);
}

int
settings_parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = 0;
	else
		return (-1);
	return (0);
}

int64_t
settings_int(const char *name, int64_t def)
{
	const char	*v;
	int64_t		 n;

	if ((v = settings_get(name, NULL)) == NULL)
		return (def);
	/* settings_validate() has refused a malformed value at startup. */
	if (settings_parse_int(v, &n) == -1) {
		fprintf(stderr, "psd2_%s: not an integer: %s\n", name, v);
		exit(1);
	}
	return (n);
}

int
settings_bool(const char *name, int def)
{
	const char	*v;
	int		 b;

	if ((v = settings_get(name, NULL)) == NULL)
		return (def);
	if (settings_parse_bool(v, &b) == -1) {
		fprintf(stderr, "psd2_%s: not yes/no: %s\n", name, v);
		exit(1);
	}
	return (b);
}

int
settings_at(size_t i, const char **name, const char **value)
{
	if (i >= settings_count)
		return (-1);
	*name = settings[i].name;
	*value = settings[i].value;
	return (0);
}

const char *
settings_dir(void)
{
	return (settings_folder);
}

int
settings_path(const char *name, const char *def, char *out, size_t outlen)
{
	const char	*v;

	if ((v = settings_get(name, def)) == NULL)
		return (-1);
	return (path_join(out, outlen, settings_folder, v));
}

void
settings_free(void)
{
	size_t		i;

	for (i = 0; i < settings_count; i++) {
		free(settings[i].name);
		free(settings[i].value);
	}
	settings_count = 0;
}

int
settings_production(void)
{
	return (strcmp(settings_get("environment", ""), "production") == 0);
}
