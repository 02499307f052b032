/*
 * psd2ctl's connection string. psd2_db is written for the workers, which
 * run inside Kore's "root" (chroot): a file named in it (sslrootcert,
 * sslcrl, ...) is a path inside that folder. psd2ctl runs outside, so it
 * puts Kore's root in front of such a path, and the one setting serves
 * both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "ctl/ctl_db.h"

/* Kore's root folder of the configuration, or NULL (ctl_kore_root_set). */
static char			*ctl_root;

static const char *const	ctl_file_options[] = {
	"sslrootcert", "sslcrl", "sslcrldir", "sslcert", "sslkey", "passfile",
	NULL
};

/* Remembers Kore's "root FOLDER" line of the configuration text. */
void
ctl_kore_root_set(const char *text)
{
	const char	*line, *end;
	char		 word[8], path[1024];

	for (line = text; line != NULL && *line != '\0'; line = end) {
		end = strchr(line, '\n');
		if (end != NULL)
			end++;
		if (sscanf(line, " %7s %1023s", word, path) == 2 &&
		    strcmp(word, "root") == 0) {
			free(ctl_root);
			ctl_root = strdup(path);
			return;
		}
	}
}

static int
ctl_is_file_option(const char *key)
{
	size_t	i;

	for (i = 0; ctl_file_options[i] != NULL; i++) {
		if (strcmp(ctl_file_options[i], key) == 0)
			return (1);
	}
	return (0);
}

/* key='value' with libpq's quoting (backslash before ' and \). */
static void
ctl_append(char *out, size_t len, const char *key, const char *prefix,
    const char *value)
{
	size_t	n;

	n = strlen(out);
	n += snprintf(out + n, n < len ? len - n : 0, "%s%s='%s", n ? " " : "",
	    key, prefix);
	for (; *value != '\0' && n + 3 < len; value++) {
		if (*value == '\'' || *value == '\\')
			out[n++] = '\\';
		out[n++] = *value;
	}
	if (n + 2 <= len) {
		out[n++] = '\'';
		out[n] = '\0';
	}
}

char *
ctl_conninfo(const char *db)
{
	PQconninfoOption	*opts, *o;
	const char		*root;
	char			*out, *err;
	size_t			 len;
	int			 file;

	if ((root = ctl_root) == NULL)
		return (strdup(db));
	if ((opts = PQconninfoParse(db, &err)) == NULL) {
		fprintf(stderr, "psd2ctl: psd2_db: %s",
		    err != NULL ? err : "invalid\n");
		PQfreemem(err);
		exit(1);
	}
	len = strlen(db) * 2 + strlen(root) * 8 + 64;
	if ((out = calloc(1, len)) == NULL) {
		fprintf(stderr, "psd2ctl: out of memory\n");
		exit(1);
	}
	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL)
			continue;
		file = ctl_is_file_option(o->keyword) && o->val[0] == '/';
		ctl_append(out, len, o->keyword, file ? root : "", o->val);
	}
	PQconninfoFree(opts);
	return (out);
}
