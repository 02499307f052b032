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
/* 0, or -1 (400 invalid_request sent) when one of names is repeated. */
int		token_params_once(struct http_request *, const char *const *);

#endif
