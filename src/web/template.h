/*
 * A small, safe Mustache subset for the HTML pages, rendering against a
 * jansson context:
 *	{{name}} {{a.b.c}} {{.}}	always HTML-escaped; there is no
 *					raw form ({{{x}}} and {{&x}} are
 *					compile errors)
 *	{{#name}}...{{/name}}		section: once per array element
 *					(pushed), once for an object
 *					(pushed), once for true / non-empty
 *					string / non-zero number
 *	{{^name}}...{{/name}}		inverted section
 *	{{! comment}}  {{> partial}}
 * Names resolve outward through the context stack as in Mustache.
 * Values: strings as-is, integers in decimal, reals with %.15g, true and
 * false as words, null / missing / objects / arrays as nothing.
 * Not supported: delimiter changes, lambdas, standalone-line trimming.
 *
 * Templates are compiled once by template_register (syntax errors fail
 * there, at start-up); template_set_validate then checks that every
 * partial exists and that partials nest at most TEMPLATE_PARTIAL_DEPTH
 * deep (no recursion).
 */
#ifndef PSD2_TEMPLATE_H
#define PSD2_TEMPLATE_H

#include <stddef.h>

#include <jansson.h>

#define TEMPLATE_PARTIAL_DEPTH	8	/* nested {{> }} levels */
#define TEMPLATE_SECTION_DEPTH	32	/* nested sections in one template */

struct template;

struct template_set {
	struct template	*items;
	size_t		 count;
	size_t		 cap;
	char		 error[256];	/* why register/validate failed */
};

void	template_set_init(struct template_set *set);

/*
 * Compiles text (len bytes) and adds it under name. Returns 0, or -1 on a
 * syntax error (unterminated tag, unbalanced or mismatched section, bad
 * name, raw tag, nesting too deep), a duplicate name or no memory; the
 * reason, with line number, is in set->error.
 */
int	template_register(struct template_set *set, const char *name,
	    const char *text, size_t len);

/*
 * Checks the partial references of all registered templates: every one
 * must exist and chains must not exceed TEMPLATE_PARTIAL_DEPTH (which
 * also rules out recursion). Returns 0, or -1 with set->error.
 */
int	template_set_validate(struct template_set *set);

/*
 * Renders template name against ctx into a malloc'ed, NUL-terminated
 * *out of *outlen bytes. Returns 0, or -1 (unknown template or partial,
 * partial depth exceeded, output or work limit, no memory).
 */
int	template_render(const struct template_set *set, const char *name,
	    json_t *ctx, char **out, size_t *outlen);

void	template_set_free(struct template_set *set);

#endif
