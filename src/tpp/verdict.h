/*
 * The verification itself, steps 1-4 and 6 of verdict.c's order,
 * over an abstract request (a header lookup, the body bytes, the clock),
 * so that it runs without Kore in unit tests and fuzzers. tpp_verify.c
 * feeds it from a Kore request.
 */
#ifndef PSD2_TPP_VERDICT_H
#define PSD2_TPP_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "tpp/signature.h"
#include "tpp/tpp.h"

struct tpp_trust;
struct tpp_cache;

struct tpp_config {
	int			 required;	/* psd2_signing_required */
	int			 unsigned_roles; /* psd2_unsigned_roles */
	int64_t			 skew;		/* psd2_clock_skew, seconds */
	struct tpp_trust	*trust;		/* NULL: nothing is trusted */
	struct tpp_cache	*cache;
};

struct tpp_input {
	tpp_header_fn		 header;
	void			*arg;
	const char		*method;	/* for (request-target) */
	const char		*target;	/* path?query */
	const void		*body;		/* NULL: empty */
	size_t			 bodylen;
	int64_t			 now;
};

void	tpp_verdict_run(const struct tpp_config *, const struct tpp_input *,
	    struct tpp_verdict *);

#endif
