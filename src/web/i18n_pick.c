/*
 * Accept-Language negotiation over the three supported languages. The
 * header is hostile input: elements that do not parse are skipped, and
 * nothing is copied or allocated.
 */
#include <stddef.h>
#include <string.h>

#include "i18n_pick.h"

#define I18N_DEFAULT	0
#define Q_UNSET		(-1)
#define Q_MAX		1000

static const char	*supported[] = { "en", "de", "nl" };
#define NSUPPORTED	(sizeof(supported) / sizeof(supported[0]))

struct choice {
	int	q[NSUPPORTED];		/* best q per language, or Q_UNSET */
	size_t	pos[NSUPPORTED];	/* where the language was first named */
	int	star_q;
	size_t	star_pos;
};

static char
lower(char c)
{
	return ((c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c);
}

static int
is_alpha(char c)
{
	c = lower(c);
	return (c >= 'a' && c <= 'z');
}

static int
is_ows(char c)
{
	return (c == ' ' || c == '\t');
}

/* Index of a supported two-letter code (len bytes at s), or -1. */
static int
supported_index(const char *s, size_t len)
{
	size_t		i;

	if (len != 2)
		return (-1);
	for (i = 0; i < NSUPPORTED; i++) {
		if (lower(s[0]) == supported[i][0] &&
		    lower(s[1]) == supported[i][1])
			return ((int)i);
	}
	return (-1);
}

/*
 * language-range = (1*8ALPHA *("-" 1*8alphanum)) / "*". Returns the
 * length of the primary subtag (0 for "*"), or -1 if malformed.
 */
static int
parse_range(const char *s, size_t len)
{
	size_t		i, sub = 0, primary = 0;
	int		first = 1;

	if (len == 1 && s[0] == '*')
		return (0);
	if (len == 0)
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] == '-') {
			if (sub == 0)
				return (-1);
			if (first)
				primary = sub;
			first = 0;
			sub = 0;
			continue;
		}
		if (!(is_alpha(s[i]) || (!first && s[i] >= '0' &&
		    s[i] <= '9')))
			return (-1);
		if (++sub > 8)
			return (-1);
	}
	if (sub == 0)
		return (-1);
	return ((int)(first ? sub : primary));
}

/* qvalue = ("0" ["." 0*3DIGIT]) / ("1" ["." 0*3("0")]), in thousandths. */
static int
parse_qvalue(const char *s, size_t len)
{
	size_t		i;
	int		q, scale = 100;

	if (len == 0 || (s[0] != '0' && s[0] != '1'))
		return (-1);
	q = (s[0] - '0') * Q_MAX;
	if (len == 1)
		return (q);
	if (s[1] != '.' || len > 5)
		return (-1);
	for (i = 2; i < len; i++, scale /= 10) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		q += (s[i] - '0') * scale;
	}
	return (q > Q_MAX ? -1 : q);
}

/* Parameters after the range: only "q" matters; returns it or -1. */
static int
parse_params(const char *s, size_t len)
{
	size_t		i = 0, start, end;
	int		q = Q_MAX;

	while (i < len) {
		while (i < len && is_ows(s[i]))
			i++;
		if (i == len)
			break;
		if (s[i++] != ';')
			return (-1);
		while (i < len && is_ows(s[i]))
			i++;
		start = i;
		while (i < len && s[i] != ';')
			i++;
		end = i;
		while (end > start && is_ows(s[end - 1]))
			end--;
		if (end == start)
			return (-1);
		if (end - start >= 2 && lower(s[start]) == 'q' &&
		    s[start + 1] == '=') {
			if ((q = parse_qvalue(s + start + 2,
			    end - start - 2)) == -1)
				return (-1);
		}
	}
	return (q);
}

static void
consider(struct choice *c, const char *s, size_t len, size_t pos)
{
	size_t		rlen = 0;
	int		primary, q, idx;

	while (len > 0 && is_ows(*s)) {
		s++;
		len--;
	}
	while (rlen < len && s[rlen] != ';' && !is_ows(s[rlen]))
		rlen++;
	if ((primary = parse_range(s, rlen)) == -1 ||
	    (q = parse_params(s + rlen, len - rlen)) == -1)
		return;

	if (primary == 0) {
		if (c->star_q == Q_UNSET) {
			c->star_q = q;
			c->star_pos = pos;
		}
		return;
	}
	if ((idx = supported_index(s, (size_t)primary)) == -1)
		return;
	if (c->q[idx] == Q_UNSET)
		c->pos[idx] = pos;
	if (q > c->q[idx])
		c->q[idx] = q;
}

const char *
i18n_pick(const char *accept_language, const char *explicit_choice)
{
	struct choice	 c;
	const char	*p, *comma;
	size_t		 i, pos = 0, bestpos = 0;
	int		 idx, q, best = I18N_DEFAULT, bestq = 0;

	if (explicit_choice != NULL && (idx = supported_index(explicit_choice,
	    strlen(explicit_choice))) != -1)
		return (supported[idx]);
	if (accept_language == NULL)
		return (supported[I18N_DEFAULT]);

	for (i = 0; i < NSUPPORTED; i++)
		c.q[i] = Q_UNSET;
	c.star_q = Q_UNSET;
	for (p = accept_language; ; p = comma + 1, pos++) {
		comma = strchr(p, ',');
		consider(&c, p, comma ? (size_t)(comma - p) : strlen(p), pos);
		if (comma == NULL)
			break;
	}

	for (i = 0; i < NSUPPORTED; i++) {
		if (c.q[i] == Q_UNSET && c.star_q != Q_UNSET) {
			c.q[i] = c.star_q;
			c.pos[i] = c.star_pos;
		}
		q = c.q[i];
		if (q > bestq || (q == bestq && q > 0 && c.pos[i] < bestpos)) {
			best = (int)i;
			bestq = q;
			bestpos = c.pos[i];
		}
	}
	return (supported[best]);
}
