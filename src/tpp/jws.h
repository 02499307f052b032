/*
 * The JAdES-style (ETSI TS 119 182-1) detached JWS in compact
 * serialization, RFC 7515 Appendix F, as the second accepted form of the
 * signature header:
 *	<BASE64URL(protected header)>..<BASE64URL(signature)>
 * The protected header carries alg (RS256, PS256, ES256), x5t#S256 of the
 * signing certificate, sigT, sigD {mId: HttpHeaders, pars: [names]},
 * b64: false and crit ["b64", "sigD", ...]. The signing input is
 *	BASE64URL(protected header) || "." || S
 * where S is the draft-cavage signing string of the pars headers.
 * Parsing only: pure, with jansson for the header JSON.
 */
#ifndef PSD2_TPP_JWS_H
#define PSD2_TPP_JWS_H

#include <stddef.h>
#include <stdint.h>

#include "tpp/sighdr.h"

#define TPP_JWS_MID	"http://uri.etsi.org/19182/HttpHeaders"

struct tpp_jws {
	char		 alg[8];
	uint8_t		 x5t[32];		/* x5t#S256 */
	int64_t		 sig_t;			/* sigT, Unix seconds */
	char		 namebuf[1024];
	const char	*names[TPP_SIG_NAMES_MAX];	/* sigD pars */
	size_t		 nnames;
	const char	*protected_b64;		/* into the header text */
	size_t		 protected_len;
	uint8_t		 sig[TPP_SIG_MAX];
	size_t		 siglen;
};

/* Returns 0, or -1 with a reason in err. */
int	tpp_jws_parse(const char *hdr, struct tpp_jws *, char *, size_t);

/*
 * sigT in the form JAdES uses, "2024-05-01T12:00:00Z" (optional
 * fraction of a second). Returns 0 and sets *epoch, or -1.
 */
int	tpp_jws_time(const char *, int64_t *);

#endif
