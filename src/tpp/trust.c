/*
 * Trust store and CRLs for TPP certificates.
 *
 * Revocation never turns itself off: with a CRL folder configured, every
 * chain is checked against CRLs, and a reload that fails (a folder that
 * cannot be read, a file that does not parse, a folder emptied) keeps the
 * CRLs already loaded. Every such failure is reported once (the caller
 * logs and counts it). With revocation required (production), loading
 * needs a current CRL of every trusted CA, and a chain whose CA has no
 * current CRL is refused instead of accepted.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "tpp/trust.h"

struct tpp_trust {
	STACK_OF(X509)		*anchors;
	STACK_OF(X509_CRL)	*crls;
	X509_STORE		*store;
	char			*crl_dir;
	uint8_t			 crl_stamp[32];	/* names, sizes, mtimes */
	uint8_t			 failed_stamp[32]; /* the last failed reload */
	int			 have_failed;
	int			 dir_failed;	/* reported, not readable */
	int			 required;
	int64_t			 checked_at;
	unsigned		 generation;
	tpp_trust_report_fn	*report;
};

static void
trust_report(const struct tpp_trust *t, const char *reason,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
trust_report(const struct tpp_trust *t, const char *reason,
    const char *fmt, ...)
{
	va_list	ap;
	char	detail[256];

	if (t->report == NULL)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	t->report(reason, detail);
}

typedef int	(*trust_file_fn)(struct tpp_trust *, const char *, void *);

static int
trust_is_data_file(const char *name)
{
	return (name[0] != '.');
}

/* Calls fn for every regular file in dir, in name order. */
static int
trust_each_file(struct tpp_trust *t, const char *dir, trust_file_fn fn,
    void *arg)
{
	struct dirent	**list;
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 i, n, rc;

	if ((n = scandir(dir, &list, NULL, alphasort)) < 0)
		return (-1);
	rc = 0;
	for (i = 0; i < n; i++) {
		if (rc == 0 && trust_is_data_file(list[i]->d_name) &&
		    snprintf(path, sizeof(path), "%s/%s", dir,
		    list[i]->d_name) < (int)sizeof(path) &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = fn(t, path, arg);
		free(list[i]);
	}
	free(list);
	return (rc);
}

static int
trust_add_anchors(struct tpp_trust *t, const char *path, void *arg)
{
	BIO	*bio;
	X509	*x;
	int	 n = 0;

	(void)arg;
	if ((bio = BIO_new_file(path, "r")) == NULL)
		return (-1);
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
		if (!sk_X509_push(t->anchors, x)) {
			X509_free(x);
			break;
		}
		n++;
	}
	BIO_free(bio);
	ERR_clear_error();
	return (0);
}

static int
trust_add_crls(struct tpp_trust *t, const char *path, void *arg)
{
	STACK_OF(X509_CRL)	*crls = arg;
	BIO			*bio;
	X509_CRL		*crl;
	int			 n = 0;

	(void)t;
	if ((bio = BIO_new_file(path, "rb")) == NULL)
		return (-1);
	while ((crl = PEM_read_bio_X509_CRL(bio, NULL, NULL, NULL)) != NULL) {
		sk_X509_CRL_push(crls, crl);
		n++;
	}
	if (n == 0) {
		/* Not PEM: one DER CRL. */
		(void)BIO_reset(bio);
		if ((crl = d2i_X509_CRL_bio(bio, NULL)) != NULL) {
			sk_X509_CRL_push(crls, crl);
			n++;
		}
	}
	BIO_free(bio);
	ERR_clear_error();
	return (n > 0 ? 0 : -1);
}

static int
trust_stamp_file(struct tpp_trust *t, const char *path, void *arg)
{
	EVP_MD_CTX	*md = arg;
	struct stat	 st;
	int64_t		 v[3];

	(void)t;
	if (stat(path, &st) == -1)
		return (-1);
	v[0] = st.st_size;
	v[1] = st.st_mtim.tv_sec;
	v[2] = st.st_mtim.tv_nsec;
	EVP_DigestUpdate(md, path, strlen(path) + 1);
	EVP_DigestUpdate(md, v, sizeof(v));
	return (0);
}

static int
trust_crl_stamp(struct tpp_trust *t, uint8_t out[32])
{
	EVP_MD_CTX	*md;
	unsigned int	 len;
	int		 rc;

	if ((md = EVP_MD_CTX_new()) == NULL)
		return (-1);
	rc = EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
	    trust_each_file(t, t->crl_dir, trust_stamp_file, md) == 0 &&
	    EVP_DigestFinal_ex(md, out, &len) == 1 ? 0 : -1;
	EVP_MD_CTX_free(md);
	return (rc);
}

static int
trust_build_store(struct tpp_trust *t, STACK_OF(X509_CRL) *crls)
{
	X509_STORE	*st;
	int		 i;

	if ((st = X509_STORE_new()) == NULL)
		return (-1);
	for (i = 0; i < sk_X509_num(t->anchors); i++)
		X509_STORE_add_cert(st, sk_X509_value(t->anchors, i));
	for (i = 0; i < sk_X509_CRL_num(crls); i++)
		X509_STORE_add_crl(st, sk_X509_CRL_value(crls, i));
	/*
	 * An issuing CA placed in the folder is an anchor of its own
	 * (PARTIAL_CHAIN): TPPs send only their own certificate.
	 */
	X509_STORE_set_flags(st, X509_V_FLAG_PARTIAL_CHAIN |
	    (t->crl_dir != NULL ?
	    X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL : 0));
	X509_STORE_free(t->store);
	t->store = st;
	sk_X509_CRL_pop_free(t->crls, X509_CRL_free);
	t->crls = crls;
	t->generation++;
	return (0);
}

/* The CRLs in the folder; NULL with a reason on failure. */
static STACK_OF(X509_CRL) *
trust_read_crls(struct tpp_trust *t, const char **reason)
{
	STACK_OF(X509_CRL)	*crls;

	if ((crls = sk_X509_CRL_new_null()) == NULL) {
		*reason = "crl_unreadable";
		return (NULL);
	}
	if (trust_each_file(t, t->crl_dir, trust_add_crls, crls) == -1) {
		*reason = "crl_unreadable";
		sk_X509_CRL_pop_free(crls, X509_CRL_free);
		return (NULL);
	}
	/* An emptied folder is a failure, not the end of revocation. */
	if (sk_X509_CRL_num(crls) == 0 && (t->required ||
	    (t->crls != NULL && sk_X509_CRL_num(t->crls) > 0))) {
		*reason = "crl_folder_empty";
		sk_X509_CRL_free(crls);
		return (NULL);
	}
	return (crls);
}

static int
trust_load_crls(struct tpp_trust *t)
{
	STACK_OF(X509_CRL)	*crls;
	const char		*reason;
	uint8_t			 stamp[32];

	if (t->crl_dir == NULL)
		return (t->store == NULL ?
		    trust_build_store(t, sk_X509_CRL_new_null()) : 0);
	if (trust_crl_stamp(t, stamp) == -1) {
		if (!t->dir_failed)
			trust_report(t, "crl_unreadable", "cannot read the "
			    "CRL folder %s; the CRLs loaded before stay",
			    t->crl_dir);
		t->dir_failed = 1;
		return (-1);
	}
	t->dir_failed = 0;
	if (t->store != NULL && memcmp(stamp, t->crl_stamp, 32) == 0)
		return (0);
	/* Reported once; tried again when the files change. */
	if (t->have_failed && memcmp(stamp, t->failed_stamp, 32) == 0)
		return (-1);
	if ((crls = trust_read_crls(t, &reason)) == NULL ||
	    trust_build_store(t, crls) == -1) {
		if (crls != NULL) {
			reason = "crl_unreadable";
			sk_X509_CRL_pop_free(crls, X509_CRL_free);
		}
		memcpy(t->failed_stamp, stamp, 32);
		t->have_failed = 1;
		trust_report(t, reason, "CRL folder %s: %s; the CRLs loaded "
		    "before stay", t->crl_dir, strcmp(reason,
		    "crl_folder_empty") == 0 ? "no CRL in it" :
		    "a file cannot be read or does not parse");
		return (-1);
	}
	memcpy(t->crl_stamp, stamp, 32);
	t->have_failed = 0;
	return (0);
}

/* A CRL of ca, signed by it, current at now. */
static int
trust_has_current_crl(struct tpp_trust *t, X509 *ca, int64_t now)
{
	X509_CRL	*crl;
	EVP_PKEY	*key;
	int64_t		 last, next;
	int		 i;

	if ((key = X509_get0_pubkey(ca)) == NULL)
		return (0);
	for (i = 0; i < sk_X509_CRL_num(t->crls); i++) {
		crl = sk_X509_CRL_value(t->crls, i);
		if (X509_NAME_cmp(X509_CRL_get_issuer(crl),
		    X509_get_subject_name(ca)) != 0 ||
		    X509_CRL_verify(crl, key) != 1 ||
		    tpp_asn1_time(X509_CRL_get0_lastUpdate(crl), &last) == -1 ||
		    X509_CRL_get0_nextUpdate(crl) == NULL ||
		    tpp_asn1_time(X509_CRL_get0_nextUpdate(crl), &next) == -1)
			continue;
		if (last <= now && now < next)
			return (1);
	}
	ERR_clear_error();
	return (0);
}

/* Revocation required: every trusted CA has a current CRL of its own. */
static int
trust_crls_cover(struct tpp_trust *t, char *err, size_t errlen)
{
	X509	*ca;
	char	 name[128];
	int	 i;

	for (i = 0; i < sk_X509_num(t->anchors); i++) {
		ca = sk_X509_value(t->anchors, i);
		if (trust_has_current_crl(t, ca, (int64_t)time(NULL)))
			continue;
		X509_NAME_oneline(X509_get_subject_name(ca), name,
		    sizeof(name));
		snprintf(err, errlen, "revocation is required and the CRL "
		    "folder %s holds no current CRL signed by %s", t->crl_dir,
		    name);
		return (-1);
	}
	return (0);
}

struct tpp_trust *
tpp_trust_load(const char *trust_dir, const char *crl_dir, int required,
    char *err, size_t errlen)
{
	struct tpp_trust	*t;

	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->anchors = sk_X509_new_null()) == NULL ||
	    (t->crls = sk_X509_CRL_new_null()) == NULL) {
		snprintf(err, errlen, "out of memory");
		tpp_trust_free(t);
		return (NULL);
	}
	if (trust_each_file(t, trust_dir, trust_add_anchors, NULL) == -1) {
		snprintf(err, errlen, "cannot read trust folder %s", trust_dir);
		tpp_trust_free(t);
		return (NULL);
	}
	t->required = required;
	if (required && crl_dir == NULL) {
		snprintf(err, errlen, "revocation is required and no CRL "
		    "folder is set (psd2_crl_dir)");
		tpp_trust_free(t);
		return (NULL);
	}
	if (crl_dir != NULL && (t->crl_dir = strdup(crl_dir)) == NULL) {
		snprintf(err, errlen, "out of memory");
		tpp_trust_free(t);
		return (NULL);
	}
	if (trust_load_crls(t) == -1) {
		snprintf(err, errlen, "cannot read the CRLs in %s%s", crl_dir,
		    required ? " (revocation is required: it must hold a "
		    "current CRL of every trusted CA)" : "");
		tpp_trust_free(t);
		return (NULL);
	}
	if (required && trust_crls_cover(t, err, errlen) == -1) {
		tpp_trust_free(t);
		return (NULL);
	}
	return (t);
}

void
tpp_trust_free(struct tpp_trust *t)
{
	if (t == NULL)
		return;
	sk_X509_pop_free(t->anchors, X509_free);
	sk_X509_CRL_pop_free(t->crls, X509_CRL_free);
	X509_STORE_free(t->store);
	free(t->crl_dir);
	free(t);
}

void
tpp_trust_chroot(struct tpp_trust *t, const char *root)
{
	size_t	len;

	len = strlen(root);
	while (len > 1 && root[len - 1] == '/')
		len--;
	if (t->crl_dir == NULL || len <= 1 ||
	    strncmp(t->crl_dir, root, len) != 0 || t->crl_dir[len] != '/')
		return;
	memmove(t->crl_dir, t->crl_dir + len, strlen(t->crl_dir + len) + 1);
}

void
tpp_trust_on_failure(struct tpp_trust *t, tpp_trust_report_fn *fn)
{
	t->report = fn;
}

size_t
tpp_trust_anchors(const struct tpp_trust *t)
{
	return (sk_X509_num(t->anchors));
}

unsigned
tpp_trust_refresh(struct tpp_trust *t, int64_t now)
{
	if (t->crl_dir != NULL && now != t->checked_at) {
		t->checked_at = now;
		(void)trust_load_crls(t);	/* failure: keep the old set */
	}
	return (t->generation);
}

int
tpp_asn1_time(const ASN1_TIME *at, int64_t *out)
{
	struct tm	tm;

	if (ASN1_TIME_to_tm(at, &tm) != 1)
		return (-1);
	*out = (int64_t)timegm(&tm);
	return (0);
}

/*
 * Revocation data missing or not current for a CA of the chain: refused
 * when revocation is required; otherwise (CRLs optional per CA, a CRL
 * past its nextUpdate still revokes what it lists: the leniency of
 * Kore's TLS client verification) accepted. Reported either way.
 */
static int
trust_verify_cb(int ok, X509_STORE_CTX *ctx)
{
	struct tpp_trust	*t = X509_STORE_CTX_get_app_data(ctx);
	const char		*reason;
	X509			*x;
	char			 name[128];
	int			 e;

	if (ok)
		return (ok);
	switch ((e = X509_STORE_CTX_get_error(ctx))) {
	case X509_V_ERR_UNABLE_TO_GET_CRL:
		reason = "crl_missing";
		break;
	case X509_V_ERR_CRL_HAS_EXPIRED:
		reason = "crl_expired";
		break;
	case X509_V_ERR_CRL_NOT_YET_VALID:
		reason = "crl_not_yet_valid";
		break;
	default:
		return (0);
	}
	name[0] = '\0';
	if ((x = X509_STORE_CTX_get_current_cert(ctx)) != NULL)
		X509_NAME_oneline(X509_get_issuer_name(x), name, sizeof(name));
	trust_report(t, reason, "certificate issued by %s: %s (%s)", name,
	    X509_verify_cert_error_string(e), t->required ? "refused" :
	    "accepted: revocation not required");
	return (t->required ? 0 : 1);
}

static void
trust_window(X509_STORE_CTX *ctx, int64_t *from, int64_t *until)
{
	STACK_OF(X509)	*chain;
	X509		*x;
	int64_t		 nb, na;
	int		 i;

	*from = INT64_MIN;
	*until = INT64_MAX;
	if ((chain = X509_STORE_CTX_get0_chain(ctx)) == NULL)
		return;
	for (i = 0; i < sk_X509_num(chain); i++) {
		x = sk_X509_value(chain, i);
		if (tpp_asn1_time(X509_get0_notBefore(x), &nb) == 0 &&
		    nb > *from)
			*from = nb;
		if (tpp_asn1_time(X509_get0_notAfter(x), &na) == 0 &&
		    na < *until)
			*until = na;
	}
}

int
tpp_trust_verify(struct tpp_trust *t, X509 *cert, int64_t now,
    int64_t *from, int64_t *until, int *depth)
{
	X509_STORE_CTX	*ctx;
	int		 rc;

	*depth = 0;
	*from = INT64_MIN;
	*until = INT64_MAX;
	if ((ctx = X509_STORE_CTX_new()) == NULL)
		return (X509_V_ERR_OUT_OF_MEM);
	if (X509_STORE_CTX_init(ctx, t->store, cert, NULL) != 1) {
		X509_STORE_CTX_free(ctx);
		return (X509_V_ERR_OUT_OF_MEM);
	}
	X509_STORE_CTX_set_app_data(ctx, t);
	X509_STORE_CTX_set_verify_cb(ctx, trust_verify_cb);
	X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx),
	    (time_t)now);
	if (X509_verify_cert(ctx) == 1) {
		rc = X509_V_OK;
		trust_window(ctx, from, until);
	} else {
		rc = X509_STORE_CTX_get_error(ctx);
		*depth = X509_STORE_CTX_get_error_depth(ctx);
		if (rc == X509_V_OK)
			rc = X509_V_ERR_UNSPECIFIED;
	}
	X509_STORE_CTX_free(ctx);
	ERR_clear_error();
	return (rc);
}
