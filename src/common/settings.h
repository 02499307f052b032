/*
 * psd2gate settings: the application's own lines of a configuration file.
 *
 * One configuration file per environment (conf/sandbox.conf,
 * conf/production.conf) serves Kore, psd2gate, psd2ctl and psd2-deviced.
 * Lines whose first word starts with "psd2_" are ours ("psd2_name value");
 * all other lines belong to Kore. "include FILE" is resolved relative to
 * the including file's folder.
 */
#ifndef PSD2_SETTINGS_H
#define PSD2_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Reads path. Our lines go into the settings table; when kore_text is not
 * NULL, the remaining lines (includes inlined) are returned there as one
 * malloc'ed string for kore_parse_config_file(). Returns 0 or -1 with a
 * message in err.
 */
int		 settings_load(const char *path, char **kore_text,
		    char *err, size_t errlen);

/* The value of "psd2_<name>" (name given without the prefix), or def. */
const char	*settings_get(const char *name, const char *def);
/* psd2_environment is production. */
int		 settings_production(void);

/* Integer and boolean forms; a malformed value is a fatal config error. */
int64_t		 settings_int(const char *name, int64_t def);
int		 settings_bool(const char *name, int def);

/* The i-th setting read (name without the prefix); -1 past the end. */
int		 settings_at(size_t, const char **, const char **);

/*
 * Checks every loaded setting against the list of known settings, their
 * types and ranges (settings_check.c). Returns 0, or -1 with a message
 * naming the setting in err.
 */
int		 settings_validate(char *err, size_t errlen);

/* Value parsers shared with settings_validate(); 0 or -1. */
int		 settings_parse_int(const char *, int64_t *);
int		 settings_parse_bool(const char *, int *);
/* PSD2 role names (PSP_AS PSP_PI PSP_AI PSP_IC, or none) as role bits
 * 0x01, 0x02, 0x04, 0x08 (those of src/tpp/tpp.h). */
int		 settings_parse_roles(const char *, int *);

/* The folder of the loaded file, for resolving relative paths. */
const char	*settings_dir(void);

/* path relative to the configuration file's folder, unless absolute. */
int		 settings_path(const char *name, const char *def,
		    char *out, size_t outlen);

void		 settings_free(void);

#endif
