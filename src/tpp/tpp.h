/*
 * TPP identity of an API request: digest, HTTP signature and eIDAS
 * certificate. Verification is pure C on the
 * worker (parsed certificates cached by fingerprint); what needs the
 * database (the token's TPP, the x-request-id replay mark) is checked in
 * the endpoint's single SQL statement with the verdict passed in.
 *
 * Order of answers on an API endpoint: bearer token first, then this
 * verdict, then the role (both settled in C), then the certificate's
 * organizationIdentifier against the token's TPP, the replay mark and
 * scope/consent (in SQL); see src/ais/ais.h.
 */
#ifndef PSD2_TPP_H
#define PSD2_TPP_H

#include <stddef.h>

struct http_request;

/* ETSI TS 119 495 roles. */
#define TPP_ROLE_AS	0x01	/* PSP_AS */
#define TPP_ROLE_PI	0x02	/* PSP_PI */
#define TPP_ROLE_AI	0x04	/* PSP_AI */
#define TPP_ROLE_IC	0x08	/* PSP_IC */

struct tpp_verdict {
	int	status;		/* 0: verified (or unsigned, signing off) */
	char	code[40];	/* Berlin Group code when status != 0 */
	char	text[256];	/* what is wrong, for the TPP developer */
	char	org_id[128];	/* certificate organizationIdentifier, "" if none */
	/* TPP_ROLE_* of the certificate; of an unsigned request (signing
	 * off) only those of psd2_unsigned_roles, by default none. */
	int	roles;
	char	request_id[40];	/* x-request-id when a valid UUID, else "" */
	int	signed_request;	/* a signature was verified */
	/*
	 * RFC 8705: base64url SHA-256 of the TLS client certificate of the
	 * connection (x5t#S256), "" over plain HTTP or without one. Access
	 * tokens issued over such a connection are bound to it.
	 */
	char	peer_x5t[48];
};

/*
 * Verifies the request's signing headers. Always fills v; never answers.
 * With signing not required and no signature sent, status is 0 and
 * org_id empty.
 */
void	tpp_verify_request(struct http_request *, struct tpp_verdict *);

/* 1 when role (TPP_ROLE_*) is in the verdict's roles. */
int	tpp_has_role(const struct tpp_verdict *, int);

/* Loads trust anchors etc. in the parent; -1 on a configuration error. */
int	tpp_init(void);

/*
 * The 403 SERVICE_BLOCKED text when role is missing, naming it and the
 * roles the certificate has, e.g. "The TPP certificate's PSD2 roles
 * (PSP_PI) do not include PSP_AI, which this service needs."
 */
void	tpp_role_text(const struct tpp_verdict *, int role, char *, size_t);

/* The connection's client certificate thumbprint into out (or ""). */
void	tpp_peer_x5t(struct http_request *, char *out, size_t outlen);

/*
 * RFC 8705 tls_client_auth: the organizationIdentifier of the
 * connection's TLS client certificate (the TPP's QWAC), after the chain
 * and revocation checks of a signing certificate (trust store and CRLs,
 * now). 0, or -1 (out "") when there is none or it does not verify.
 */
int	tpp_peer_org_id(struct http_request *, char *out, size_t outlen);

#endif
