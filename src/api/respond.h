/*
 * Every answer psd2gate sends goes through here: strict security headers,
 * the documented error bodies, and one log line per request.
 */
#ifndef PSD2_RESPOND_H
#define PSD2_RESPOND_H

#include <stddef.h>

#include <jansson.h>

struct http_request;

/* The root of the Berlin Group standard interface (src/bg/README.md). */
#define RESPOND_BG_ROOT	"/xs2a"

void	respond_raw(struct http_request *, int, const char *,
	    const void *, size_t);
void	respond_json(struct http_request *, int, json_t *);
void	respond_html(struct http_request *, int, const char *, size_t);
void	respond_redirect(struct http_request *, const char *);

/* Berlin Group {"tppMessages":[{category,code,path?,text}]} */
void	respond_tpp_error(struct http_request *, int, const char *,
	    const char *, const char *);
/* RFC 6749 section 5.2 {"error","error_description"} */
void	respond_oauth_error(struct http_request *, int, const char *,
	    const char *);
/* The spec's 401 bodies for bearer failures. */
void	respond_bearer_error(struct http_request *, int, const char *);
/* The standard interface's 401 TOKEN_INVALID / TOKEN_EXPIRED. */
void	respond_bg_token_error(struct http_request *, int);
/* 401 for a refused DPoP proof: standard surface?, nonce needed?, why. */
void	respond_dpop_error(struct http_request *, int, int, const char *);
/* The spec's 500 body; the errorId also goes into the log line. */
void	respond_server_error(struct http_request *, const char *);

void	respond_set_cookie(struct http_request *, const char *,
	    const char *, const char *, int64_t);
const char	*respond_request_id(struct http_request *);

/* In each worker: Kore's error bodies and the database layer's answers
 * and request ids go through here. */
void	respond_install_hooks(void);

#endif
