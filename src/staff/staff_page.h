/* The driver of the staff pages after login (staff_page.c). */
#ifndef PSD2_STAFF_PAGE_H
#define PSD2_STAFF_PAGE_H

#include <stddef.h>

#include <jansson.h>

#include "db/db.h"
#include "staff/staff.h"

struct staff_page;

struct staff_page_spec {
	int	admin_only;
	int	post;		/* a POST: the session's CSRF token is checked */
	/* Starts the page's query on p->q: 0, or -1 when it answered. */
	int	(*query)(struct http_request *, struct staff_page *);
	/* Answers with the query's result. */
	void	(*render)(struct http_request *, struct staff_page *);
};

struct staff_page {
	const struct staff_page_spec	*spec;
	struct db_query			 q;
	struct staff_who		 who;
	int				 phase;
	/*
	 * Set by a query callback that needs a second query: called in
	 * place of render after the first one; 0 when it started the second
	 * on q (render answers with its result), -1 when it answered.
	 */
	int				(*then)(struct http_request *,
					    struct staff_page *);
	/* A new client secret, until the answer shows it (then wiped). */
	char				 secret[64];
};

int	staff_page_run(struct http_request *, const struct staff_page_spec *);
/* The first column of the one row as JSON (NULL: none or not JSON). */
json_t	*staff_page_json(struct staff_page *);
/* A query or form argument, NULL when absent or empty (a filter). */
const char	*staff_page_arg(struct http_request *, const char *);
/* Rows a page of every staff list, and the last page number taken. */
#define STAFF_LIST_PAGE	50
#define STAFF_PAGE_MAX	100000

/* The "page" argument (0 without one): 0, or -1 when it answered 400. */
int	staff_page_number(struct http_request *, struct staff_page *, int *);

/*
 * Adds "pager" to a list page's data (from the next, has_previous and
 * previous of staff_list_page in SQL): the form of templates/
 * staff_pager.html, which keeps the filters named in keep (NULL ends).
 */
void	staff_pager(struct http_request *, json_t *, const char *,
	    const char *const *);

/* "staff:<username>", the actor of audit rows. */
void	staff_page_actor(const struct staff_page *, char *, size_t);

/* 1 when word (may be NULL) is one of list's (NULL-terminated) words. */
int	staff_word_in(const char *, const char *const *);

/*
 * An action's result word (the answer's first column), one of results:
 * 1 for "ok", which the caller answers; else 0, the refusal answered
 * (409, the message named refused and the word under title) or, for a
 * word not in results, a server error.
 */
int	staff_action_ok(struct http_request *, struct staff_page *,
	    const char *const *, const char *, const char *);

#endif
