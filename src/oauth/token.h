/* What the token endpoint shares with the PAR and revocation endpoints. */
#ifndef PSD2_TOKEN_H
#define PSD2_TOKEN_H

#include <stddef.h>

struct http_request;

/* 0, or -1 (400 invalid_request sent) when one of names is repeated. */
int		token_params_once(struct http_request *, const char *const *);

#endif
