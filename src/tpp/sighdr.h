/*
 * The Signature header in the draft-cavage form the Berlin Group 1.2
 * guidelines use:
 *	keyId="SN=<hex>,CA=<issuer DN>",algorithm="rsa-sha256",
 *	headers="digest x-request-id date",signature="<base64>"
 * and the test for the other accepted form, a detached compact JWS.
 * Pure functions over strings: no Kore, no allocation.
 */
#ifndef PSD2_TPP_SIGHDR_H
#define PSD2_TPP_SIGHDR_H

#include <stddef.h>
#include <stdint.h>

#define TPP_SIGHDR_MAX		4096	/* longest Signature header accepted */
#define TPP_SIG_NAMES_MAX	16	/* signed header names */
#define TPP_SIG_MAX		1024	/* signature bytes (RSA 8192) */

struct tpp_sighdr {
	char		 buf[TPP_SIGHDR_MAX];	/* unescaped parameter values */
	const char	*key_id;
	const char	*algorithm;		/* NULL when not sent */
	const char	*names[TPP_SIG_NAMES_MAX]; /* lower case */
	size_t		 nnames;
	uint8_t		 sig[TPP_SIG_MAX];
	size_t		 siglen;
};

/*
 * Parses a draft-cavage Signature header. keyId and signature are
 * required; headers defaults to "date" as the draft says (which the
 * signing rules then refuse); unknown parameters (created, expires) are
 * ignored, a repeated one is an error. Returns 0, or -1 with a reason.
 */
int	tpp_sighdr_parse(const char *hdr, struct tpp_sighdr *out,
	    char *err, size_t errlen);

/* 1 when hdr has the shape of a detached compact JWS "<b64url>..<b64url>". */
int	tpp_sighdr_is_jws(const char *hdr);

/*
 * Splits a space-separated list of header names (the headers parameter,
 * or JWS sigD pars joined) into lower-case names in names[]: letters,
 * digits, '-', or "(request-target)". Works in place on list.
 */
int	tpp_sig_names(char *list, const char **names, size_t *nnames,
	    char *err, size_t errlen);

#endif
