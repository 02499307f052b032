/*
 * The input the account information calls of the standard interface
 * share: the {account-id} path segment and the withBalance parameter.
 */
#ifndef PSD2_BG_ACCOUNT_INPUT_H
#define PSD2_BG_ACCOUNT_INPUT_H

#include <stddef.h>

#include "bg/bg.h"

struct http_request;

#define BG_ACCOUNTS_PREFIX	BG_ROOT "/accounts/"
#define BG_ID_MAX		64

/*
 * The {account-id} segment when it can be a resourceId at all, else ""
 * (answered 404 RESOURCE_UNKNOWN after the consent's checks).
 */
void	bg_account_id(struct http_request *, char *, size_t);

/* withBalance as a boolean; another value than true/false: FORMAT_ERROR. */
int	bg_with_balance(struct bg_call *, const struct bg_param *);

#endif
