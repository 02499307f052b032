/*
 * The TPP's eIDAS certificate (QSealC): the certificate header's text,
 * the ETSI TS 119 495 PSD2 QCStatement (roles, NCA) and the subject
 * organizationIdentifier. OpenSSL only, no Kore, no I/O.
 */
#ifndef PSD2_TPP_CERT_H
#define PSD2_TPP_CERT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

#define TPP_CERT_DER_MAX	12288	/* the header block is 16 KiB */

struct tpp_qc {
	int	roles;		/* TPP_ROLE_* (tpp.h) */
	char	nca_name[128];
	char	nca_id[32];
};

/*
 * Certificate header text to DER: base64 of the DER, or PEM (the
 * BEGIN/END lines with or without line breaks, which a header cannot
 * carry anyway). Returns the DER length, or -1.
 */
int	tpp_cert_decode(const char *hdr, uint8_t *der, size_t derlen);

/* The whole of der must be one certificate. NULL otherwise. */
X509	*tpp_cert_parse(const uint8_t *der, size_t len);

/*
 * The value of a QCStatements extension (RFC 3739: SEQUENCE OF
 * QCStatement). Returns 0 when it holds the PSD2 statement (0.4.0.19495.2,
 * roles filled), 1 when it parses but has none, -1 when malformed (also
 * when the PSD2 statement itself is malformed or names no role).
 */
int	tpp_qc_parse(const uint8_t *der, size_t len, struct tpp_qc *out);

/* Same as tpp_qc_parse on the certificate's extension; 1 when absent. */
int	tpp_cert_qc(X509 *, struct tpp_qc *);

/*
 * Subject organizationIdentifier (2.5.4.97) as UTF-8 into out. Returns 0,
 * or -1 when absent, repeated, not text, or too long.
 */
int	tpp_cert_org_id(X509 *, char *out, size_t outlen);

/* 1 when a PSD2 organizationIdentifier: PSD<CC>-<NCA 2-8 letters>-<id>. */
int	tpp_org_id_valid(const char *);

/* 1 when the key usage (if present) allows signatures, else 0. */
int	tpp_cert_can_sign(X509 *);

/* Role bit to ETSI name ("PSP_AI"), NULL for an unknown bit. */
const char	*tpp_role_name(int);

/* "PSP_AI PSP_PI" of a role set, or "none". */
void	tpp_roles_format(int, char *, size_t);

#endif
