/*
 * HTML pages: templates compiled into the binary and rendered with HTML
 * escaping always on, in English, German or Dutch.
 */
#ifndef PSD2_PAGES_H
#define PSD2_PAGES_H

#include <jansson.h>

struct http_request;

int		 pages_init(void);

/* The page language: ?lang= or form field, cookie, Accept-Language. */
const char	*pages_lang(struct http_request *);

/*
 * Renders template name with ctx (stolen) plus "t" (translations),
 * "lang" and "langs" (switch links for the current URL) and answers.
 */
void		 pages_render(struct http_request *, int, const char *,
		    json_t *);

/* A plain message page: title and text are translation keys. */
void		 pages_message(struct http_request *, int, const char *,
		    const char *);

/* Translation of key in the request's language. */
const char	*pages_text(struct http_request *, const char *);

#endif
