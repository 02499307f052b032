/* Client authentication shared by the token and revoke endpoints. */
#ifndef PSD2_TOKEN_H
#define PSD2_TOKEN_H

#include <stddef.h>

struct http_request;
struct db_query;

int		token_client_begin(struct http_request *, struct db_query *,
		    char *, size_t, char *, size_t);
long long	token_client_check(struct http_request *, struct db_query *,
		    const char *, const char *);

#endif
