/*
 * Template compiler and renderer. A template is compiled once into a
 * flat node list: text runs point into a private copy of the source,
 * names are pre-split into NUL-separated segments, and every section
 * node knows where its body ends, so rendering is a single loop with no
 * parsing and no allocation besides the output buffer.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "template.h"

#define TEMPLATE_SOURCE_MAX	(16 * 1024 * 1024)
#define TEMPLATE_NAME_MAX	255
#define TEMPLATE_OUTPUT_MAX	(64 * 1024 * 1024)
/* Node visits per render: stops nested loops over big arrays. */
#define TEMPLATE_WORK_MAX	(16 * 1024 * 1024)

enum tnode_type {
	TN_TEXT,
	TN_VAR,
	TN_SECTION,
	TN_INVERTED,
	TN_PARTIAL,
};

struct tnode {
	uint8_t		type;
	uint8_t		nseg;	/* name segments; 0 is "." */
	uint32_t	off;	/* TEXT: into src; others: into names */
	uint32_t	len;	/* TEXT: bytes of text */
	uint32_t	end;	/* sections: index of the node after the body */
};

struct template {
	char		*name;
	char		*src;
	char		*names;
	size_t		 nameslen;
	size_t		 namescap;
	struct tnode	*nodes;
	size_t		 count;
	size_t		 cap;
};

struct frame {
	json_t			*val;
	const struct frame	*up;
};

struct outbuf {
	char		*data;
	size_t		 len;
	size_t		 cap;
};

struct render {
	const struct template_set	*set;
	struct outbuf			 out;
	size_t				 work;
};

static void
set_error(struct template_set *set, const char *fmt, ...)
{
	va_list		ap;

	va_start(ap, fmt);
	(void)vsnprintf(set->error, sizeof(set->error), fmt, ap);
	va_end(ap);
}

void
template_set_init(struct template_set *set)
{
	memset(set, 0, sizeof(*set));
}

static void
template_free(struct template *t)
{
	free(t->name);
	free(t->src);
	free(t->names);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

void
template_set_free(struct template_set *set)
{
	size_t		i;

	if (set == NULL)
		return;
	for (i = 0; i < set->count; i++)
		template_free(&set->items[i]);
	free(set->items);
	template_set_init(set);
}

static const struct template *
template_find(const struct template_set *set, const char *name, size_t len)
{
	size_t		i;

	for (i = 0; i < set->count; i++) {
		if (strlen(set->items[i].name) == len &&
		    memcmp(set->items[i].name, name, len) == 0)
			return (&set->items[i]);
	}
	return (NULL);
}

/* Compiler. */

struct compiler {
	struct template_set	*set;
	struct template		*t;
	const char		*src;
	size_t			 len;
	size_t			 tagpos;	/* for error messages */
	size_t			 open[TEMPLATE_SECTION_DEPTH];
	const char		*openname[TEMPLATE_SECTION_DEPTH];
	size_t			 openlen[TEMPLATE_SECTION_DEPTH];
	size_t			 openpos[TEMPLATE_SECTION_DEPTH];
	int			 depth;
};

static int
line_of(const char *src, size_t pos)
{
	size_t		i;
	int		line = 1;

	for (i = 0; i < pos; i++)
		if (src[i] == '\n')
			line++;
	return (line);
}

static int
compile_error(struct compiler *c, const char *what)
{
	set_error(c->set, "template %s: line %d: %s", c->t->name,
	    line_of(c->src, c->tagpos), what);
	return (-1);
}

static struct tnode *
node_add(struct compiler *c, int type)
{
	struct template	*t = c->t;
	struct tnode	*n;
	size_t		 ncap;

	if (t->count == t->cap) {
		ncap = t->cap ? t->cap * 2 : 32;
		if ((n = reallocarray(t->nodes, ncap, sizeof(*n))) == NULL)
			return (NULL);
		t->nodes = n;
		t->cap = ncap;
	}
	n = &t->nodes[t->count++];
	memset(n, 0, sizeof(*n));
	n->type = (uint8_t)type;
	return (n);
}

static int
is_name_char(char ch)
{
	return ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-');
}

/* "." or segments of [A-Za-z0-9_-] joined by single dots. */
static int
valid_name(const char *s, size_t len, int *nseg)
{
	size_t		i;
	int		seg = 0, inseg = 0;

	if (len == 1 && s[0] == '.') {
		*nseg = 0;
		return (1);
	}
	if (len == 0 || len > TEMPLATE_NAME_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (!inseg)
				return (0);
			inseg = 0;
		} else if (is_name_char(s[i])) {
			if (!inseg)
				seg++;
			inseg = 1;
		} else
			return (0);
	}
	if (!inseg)
		return (0);
	*nseg = seg;
	return (1);
}

static int
valid_partial_name(const char *s, size_t len)
{
	size_t		i;

	if (len == 0 || len > TEMPLATE_NAME_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		if (!is_name_char(s[i]) && s[i] != '.' && s[i] != '/')
			return (0);
	}
	return (1);
}

/* Copies a name into the pool with every '.' turned into a NUL. */
static int
name_store(struct compiler *c, struct tnode *n, const char *s, size_t len,
    int split)
{
	struct template	*t = c->t;
	char		*p;
	size_t		 i, ncap;

	if (t->nameslen + len + 1 > t->namescap) {
		ncap = t->namescap ? t->namescap : 256;
		while (t->nameslen + len + 1 > ncap)
			ncap *= 2;
		if ((p = realloc(t->names, ncap)) == NULL)
			return (-1);
		t->names = p;
		t->namescap = ncap;
	}
	n->off = (uint32_t)t->nameslen;
	p = t->names + t->nameslen;
	for (i = 0; i < len; i++)
		p[i] = (split && s[i] == '.') ? '\0' : s[i];
	p[len] = '\0';
	t->nameslen += len + 1;
	return (0);
}

static void
trim(const char **s, size_t *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t' || **s == '\n' ||
	    **s == '\r')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' ||
	    (*s)[*len - 1] == '\n' || (*s)[*len - 1] == '\r'))
		(*len)--;
}

static int
compile_text(struct compiler *c, size_t from, size_t to)
{
	struct tnode	*n;

	if (to == from)
		return (0);
	if ((n = node_add(c, TN_TEXT)) == NULL)
		return (compile_error(c, "out of memory"));
	n->off = (uint32_t)from;
	n->len = (uint32_t)(to - from);
	return (0);
}

static int
compile_named(struct compiler *c, int type, const char *s, size_t len)
{
	struct tnode	*n;
	int		 nseg;

	trim(&s, &len);
	if (!valid_name(s, len, &nseg))
		return (compile_error(c, "invalid name in tag"));
	if ((n = node_add(c, type)) == NULL ||
	    name_store(c, n, s, len, 1) == -1)
		return (compile_error(c, "out of memory"));
	n->nseg = (uint8_t)nseg;
	n->len = (uint32_t)len;
	if (type != TN_SECTION && type != TN_INVERTED)
		return (0);

	if (c->depth == TEMPLATE_SECTION_DEPTH)
		return (compile_error(c, "sections nested too deep"));
	c->open[c->depth] = c->t->count - 1;
	c->openname[c->depth] = s;
	c->openlen[c->depth] = len;
	c->openpos[c->depth] = c->tagpos;
	c->depth++;
	return (0);
}

static int
compile_close(struct compiler *c, const char *s, size_t len)
{
	trim(&s, &len);
	if (c->depth == 0)
		return (compile_error(c, "closing tag without a section"));
	c->depth--;
	if (c->openlen[c->depth] != len ||
	    memcmp(c->openname[c->depth], s, len) != 0)
		return (compile_error(c, "closing tag does not match the "
		    "open section"));
	c->t->nodes[c->open[c->depth]].end = (uint32_t)c->t->count;
	return (0);
}

static int
compile_partial(struct compiler *c, const char *s, size_t len)
{
	struct tnode	*n;

	trim(&s, &len);
	if (!valid_partial_name(s, len))
		return (compile_error(c, "invalid partial name"));
	if ((n = node_add(c, TN_PARTIAL)) == NULL ||
	    name_store(c, n, s, len, 0) == -1)
		return (compile_error(c, "out of memory"));
	n->len = (uint32_t)len;
	return (0);
}

static int
compile_tag(struct compiler *c, const char *s, size_t len)
{
	if (len == 0)
		return (compile_error(c, "empty tag"));
	switch (s[0]) {
	case '!':
		return (0);
	case '#':
		return (compile_named(c, TN_SECTION, s + 1, len - 1));
	case '^':
		return (compile_named(c, TN_INVERTED, s + 1, len - 1));
	case '/':
		return (compile_close(c, s + 1, len - 1));
	case '>':
		return (compile_partial(c, s + 1, len - 1));
	case '{':
	case '&':
		return (compile_error(c, "unescaped output is not supported"));
	case '=':
		return (compile_error(c, "delimiter changes are not "
		    "supported"));
	default:
		return (compile_named(c, TN_VAR, s, len));
	}
}

static int
compile(struct compiler *c)
{
	const char	*open, *close;
	size_t		 pos = 0, start, inner;

	while (pos < c->len) {
		open = memmem(c->src + pos, c->len - pos, "{{", 2);
		start = open ? (size_t)(open - c->src) : c->len;
		if (compile_text(c, pos, start) == -1)
			return (-1);
		if (open == NULL)
			break;
		c->tagpos = start;
		inner = start + 2;
		close = memmem(c->src + inner, c->len - inner, "}}", 2);
		if (close == NULL)
			return (compile_error(c, "unterminated tag"));
		if (compile_tag(c, c->src + inner,
		    (size_t)(close - c->src) - inner) == -1)
			return (-1);
		pos = (size_t)(close - c->src) + 2;
	}
	if (c->depth > 0) {
		c->tagpos = c->openpos[c->depth - 1];
		return (compile_error(c, "section not closed"));
	}
	return (0);
}

static int
set_grow(struct template_set *set)
{
	struct template	*items;
	size_t		 ncap;

	if (set->count < set->cap)
		return (0);
	ncap = set->cap ? set->cap * 2 : 16;
	if ((items = reallocarray(set->items, ncap, sizeof(*items))) == NULL)
		return (-1);
	set->items = items;
	set->cap = ncap;
	return (0);
}

int
template_register(struct template_set *set, const char *name,
    const char *text, size_t len)
{
	struct compiler	c;
	struct template	t;

	if (set == NULL)
		return (-1);
	if (name == NULL || *name == '\0' || (text == NULL && len > 0)) {
		set_error(set, "template: no name or text");
		return (-1);
	}
	if (len > TEMPLATE_SOURCE_MAX) {
		set_error(set, "template %s: too large", name);
		return (-1);
	}
	if (template_find(set, name, strlen(name)) != NULL) {
		set_error(set, "template %s: registered twice", name);
		return (-1);
	}

	memset(&t, 0, sizeof(t));
	if ((t.name = strdup(name)) == NULL || (t.src = malloc(len + 1)) ==
	    NULL || set_grow(set) == -1) {
		set_error(set, "template %s: out of memory", name);
		template_free(&t);
		return (-1);
	}
	if (len > 0)
		memcpy(t.src, text, len);
	t.src[len] = '\0';

	memset(&c, 0, sizeof(c));
	c.set = set;
	c.t = &t;
	c.src = t.src;
	c.len = len;
	if (compile(&c) == -1) {
		template_free(&t);
		return (-1);
	}
	set->items[set->count++] = t;
	return (0);
}

/* Validation of partial references. */

enum { VISIT_NEW, VISIT_ACTIVE, VISIT_DONE };

static int
partial_height(struct template_set *set, size_t idx, uint8_t *state,
    int *height, int depth)
{
	const struct template	*t = &set->items[idx], *p;
	const struct tnode	*n;
	size_t			 i;
	int			 best = 0, h;

	if (state[idx] == VISIT_DONE)
		return (height[idx]);
	if (state[idx] == VISIT_ACTIVE) {
		set_error(set, "template %s: includes itself", t->name);
		return (-1);
	}
	if (depth > TEMPLATE_PARTIAL_DEPTH) {
		set_error(set, "template %s: partials nested deeper than %d",
		    t->name, TEMPLATE_PARTIAL_DEPTH);
		return (-1);
	}
	state[idx] = VISIT_ACTIVE;
	for (i = 0; i < t->count; i++) {
		n = &t->nodes[i];
		if (n->type != TN_PARTIAL)
			continue;
		p = template_find(set, t->names + n->off, n->len);
		if (p == NULL) {
			set_error(set, "template %s: unknown partial %s",
			    t->name, t->names + n->off);
			return (-1);
		}
		h = partial_height(set, (size_t)(p - set->items), state,
		    height, depth + 1);
		if (h == -1)
			return (-1);
		if (h + 1 > best)
			best = h + 1;
	}
	if (best > TEMPLATE_PARTIAL_DEPTH) {
		set_error(set, "template %s: partials nested deeper than %d",
		    t->name, TEMPLATE_PARTIAL_DEPTH);
		return (-1);
	}
	state[idx] = VISIT_DONE;
	height[idx] = best;
	return (best);
}

int
template_set_validate(struct template_set *set)
{
	uint8_t		*state;
	int		*height;
	size_t		 i;
	int		 rc = 0;

	if (set == NULL)
		return (-1);
	state = calloc(set->count + 1, sizeof(*state));
	height = calloc(set->count + 1, sizeof(*height));
	if (state == NULL || height == NULL) {
		set_error(set, "template: out of memory");
		rc = -1;
	}
	for (i = 0; rc == 0 && i < set->count; i++) {
		if (partial_height(set, i, state, height, 0) == -1)
			rc = -1;
	}
	free(state);
	free(height);
	return (rc);
}

/* Renderer. */

static int
out_append(struct outbuf *b, const char *s, size_t len)
{
	char		*p;
	size_t		 ncap;

	if (len > TEMPLATE_OUTPUT_MAX - b->len)
		return (-1);
	if (b->len + len + 1 > b->cap) {
		ncap = b->cap ? b->cap : 4096;
		while (b->len + len + 1 > ncap)
			ncap *= 2;
		if ((p = realloc(b->data, ncap)) == NULL)
			return (-1);
		b->data = p;
		b->cap = ncap;
	}
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
	return (0);
}

static const char *
html_entity(unsigned char ch)
{
	switch (ch) {
	case '&':
		return ("&amp;");
	case '<':
		return ("&lt;");
	case '>':
		return ("&gt;");
	case '"':
		return ("&quot;");
	case '\'':
		return ("&#39;");
	case '`':
		return ("&#96;");
	case '=':
		return ("&#61;");
	default:
		return (NULL);
	}
}

/* Appends s escaped, copying runs of safe bytes in one go. */
static int
out_escaped(struct outbuf *b, const char *s, size_t len)
{
	const char	*ent;
	size_t		 i, run = 0;

	for (i = 0; i < len; i++) {
		if ((ent = html_entity((unsigned char)s[i])) == NULL)
			continue;
		if (out_append(b, s + run, i - run) == -1 ||
		    out_append(b, ent, strlen(ent)) == -1)
			return (-1);
		run = i + 1;
	}
	return (out_append(b, s + run, len - run));
}

static int
out_value(struct outbuf *b, json_t *v)
{
	char		num[64];
	int		n;
	char		*comma;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return (out_escaped(b, json_string_value(v),
		    json_string_length(v)));
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return (out_append(b, num, (size_t)n));
	case JSON_REAL:
		n = snprintf(num, sizeof(num), "%.15g", json_real_value(v));
		/* Never a locale's decimal comma. */
		if ((comma = strchr(num, ',')) != NULL)
			*comma = '.';
		return (out_escaped(b, num, (size_t)n));
	case JSON_TRUE:
		return (out_append(b, "true", 4));
	case JSON_FALSE:
		return (out_append(b, "false", 5));
	default:
		return (0);
	}
}

/*
 * Mustache lookup: the first segment is searched outward through the
 * stack; the rest must resolve inside what was found.
 */
static json_t *
lookup(const struct frame *f, const char *name, int nseg)
{
	json_t		*v = NULL;
	int		 i;

	if (nseg == 0)
		return (f->val);
	for (; f != NULL; f = f->up) {
		if (json_is_object(f->val) &&
		    (v = json_object_get(f->val, name)) != NULL)
			break;
	}
	for (i = 1; v != NULL && i < nseg; i++) {
		name += strlen(name) + 1;
		v = json_is_object(v) ? json_object_get(v, name) : NULL;
	}
	return (v);
}

static int
truthy(json_t *v)
{
	if (v == NULL)
		return (0);
	switch (json_typeof(v)) {
	case JSON_ARRAY:
		return (json_array_size(v) > 0);
	case JSON_OBJECT:
	case JSON_TRUE:
		return (1);
	case JSON_STRING:
		return (json_string_length(v) > 0);
	case JSON_INTEGER:
		return (json_integer_value(v) != 0);
	case JSON_REAL:
		return (json_real_value(v) != 0.0);
	default:
		return (0);
	}
}

static int	render_nodes(struct render *, const struct template *, size_t,
		    size_t, const struct frame *, int);

static int
render_section(struct render *r, const struct template *t, size_t i,
    json_t *v, const struct frame *f, int pdepth)
{
	const struct tnode	*n = &t->nodes[i];
	struct frame		 inner;
	size_t			 k;

	inner.up = f;
	if (json_is_array(v)) {
		for (k = 0; k < json_array_size(v); k++) {
			inner.val = json_array_get(v, k);
			if (render_nodes(r, t, i + 1, n->end, &inner,
			    pdepth) == -1)
				return (-1);
		}
		return (0);
	}
	if (json_is_object(v)) {
		inner.val = v;
		return (render_nodes(r, t, i + 1, n->end, &inner, pdepth));
	}
	if (truthy(v))
		return (render_nodes(r, t, i + 1, n->end, f, pdepth));
	return (0);
}

static int
render_partial(struct render *r, const char *name, size_t len,
    const struct frame *f, int pdepth)
{
	const struct template	*p;

	if (pdepth >= TEMPLATE_PARTIAL_DEPTH)
		return (-1);
	if ((p = template_find(r->set, name, len)) == NULL)
		return (-1);
	return (render_nodes(r, p, 0, p->count, f, pdepth + 1));
}

static int
render_nodes(struct render *r, const struct template *t, size_t from,
    size_t to, const struct frame *f, int pdepth)
{
	const struct tnode	*n;
	const char		*name;
	json_t			*v;
	size_t			 i;
	int			 rc = 0;

	for (i = from; i < to && rc == 0; i++) {
		if (++r->work > TEMPLATE_WORK_MAX)
			return (-1);
		n = &t->nodes[i];
		/* Text nodes have no name; a template may have no names. */
		name = n->type == TN_TEXT ? NULL : t->names + n->off;
		switch (n->type) {
		case TN_TEXT:
			rc = out_append(&r->out, t->src + n->off, n->len);
			break;
		case TN_VAR:
			if ((v = lookup(f, name, n->nseg)) != NULL)
				rc = out_value(&r->out, v);
			break;
		case TN_SECTION:
			v = lookup(f, name, n->nseg);
			rc = render_section(r, t, i, v, f, pdepth);
			i = n->end - 1;
			break;
		case TN_INVERTED:
			if (!truthy(lookup(f, name, n->nseg)))
				rc = render_nodes(r, t, i + 1, n->end, f,
				    pdepth);
			i = n->end - 1;
			break;
		case TN_PARTIAL:
			rc = render_partial(r, name, n->len, f, pdepth);
			break;
		}
	}
	return (rc);
}

int
template_render(const struct template_set *set, const char *name,
    json_t *ctx, char **out, size_t *outlen)
{
	const struct template	*t;
	struct render		 r;
	struct frame		 root;

	if (out == NULL)
		return (-1);
	*out = NULL;
	if (outlen != NULL)
		*outlen = 0;
	if (set == NULL || name == NULL ||
	    (t = template_find(set, name, strlen(name))) == NULL)
		return (-1);

	memset(&r, 0, sizeof(r));
	r.set = set;
	root.val = ctx;
	root.up = NULL;
	/* Always hand back a string, even for an empty result. */
	if (out_append(&r.out, "", 0) == -1 ||
	    render_nodes(&r, t, 0, t->count, &root, 0) == -1) {
		free(r.out.data);
		return (-1);
	}
	*out = r.out.data;
	if (outlen != NULL)
		*outlen = r.out.len;
	return (0);
}
