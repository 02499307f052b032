/*
 * Trust anchors (a folder of CA certificates in PEM) and optional CRLs
 * (a folder of PEM or DER CRL files, re-read when a file changes), and
 * chain verification with X509_verify_cert. No Kore: plain files.
 *
 * Each Kore worker owns its copy (loaded in the parent before the fork);
 * a worker notices changed CRL files on its own, at most once a second.
 */
#ifndef PSD2_TPP_TRUST_H
#define PSD2_TPP_TRUST_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

struct tpp_trust;

/*
 * crl_dir may be NULL, unless required (revocation required: crl_dir
 * must then hold a current CRL of every trusted CA, and a chain whose CA
 * has none is refused). NULL on error, with a reason in err.
 */
struct tpp_trust	*tpp_trust_load(const char *trust_dir,
			    const char *crl_dir, int required, char *err,
			    size_t errlen);
void			 tpp_trust_free(struct tpp_trust *);

/*
 * Called with every revocation failure: reason is a short word for a
 * metric label (crl_unreadable, crl_folder_empty, crl_missing,
 * crl_expired, crl_not_yet_valid), detail a sentence for the log. A
 * failed reload is reported once, and again only when the files change.
 */
typedef void		 tpp_trust_report_fn(const char *reason,
			    const char *detail);
void			 tpp_trust_on_failure(struct tpp_trust *,
			    tpp_trust_report_fn *);

/*
 * After a worker chroots into root, the CRL folder (configured with its
 * full path, read so in the parent) is found under root: strip the
 * prefix. No-op when the folder is not under root.
 */
void			 tpp_trust_chroot(struct tpp_trust *, const char *);

/* Number of trust anchors loaded (0 means every chain fails). */
size_t			 tpp_trust_anchors(const struct tpp_trust *);

/*
 * Re-reads the CRL folder when its files changed (checked at most once
 * a second). A folder that cannot be read, a CRL file that does not
 * parse (say, half written) or a folder emptied keeps the previous set
 * and is reported; it is retried when the files change. Returns the
 * generation, which grows with every change, so cached chain results
 * know they are stale.
 */
unsigned		 tpp_trust_refresh(struct tpp_trust *, int64_t now);

/*
 * Verifies cert against the anchors and CRLs at time now. Returns
 * X509_V_OK or the OpenSSL error; on success *from and *until bound the
 * time within which the whole chain is valid.
 */
int			 tpp_trust_verify(struct tpp_trust *, X509 *,
			    int64_t now, int64_t *from, int64_t *until,
			    int *depth);

/* Seconds since 1970 of an ASN1_TIME, or -1 on a malformed time. */
int			 tpp_asn1_time(const ASN1_TIME *, int64_t *);

#endif
