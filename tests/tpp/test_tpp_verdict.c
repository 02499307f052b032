/*
 * The whole verdict (tpp_verdict_run) on requests signed here with the
 * test PKI: the good paths of both signature forms and every failure with
 * its status and code, the certificate cache and CRL reloading.
 */
#include <sys/stat.h>

#include <time.h>
#include <unistd.h>

#include "tpptest.h"

#include "common/httpdate.h"
#include "tpp/cache.h"
#include "tpp/trust.h"
#include "tpp/verdict.h"

#define UUID1	"2f6a5c1e-0b7d-4e55-9a0f-6f1c2d3e4a5b"
#define UUID2	"9b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3"

static struct tpp_config	cfg;
static char			trust_dir[256], crl_dir[256];
static int64_t			now;
static char			last_reason[64];
static int			reports;

static void
on_failure(const char *reason, const char *detail)
{
	(void)detail;
	snprintf(last_reason, sizeof(last_reason), "%s", reason);
	reports++;
}

struct signreq {
	const char	*cert;		/* certificate file in the PKI */
	const char	*key;		/* signing key (default: cert's) */
	const char	*keyid_cert;	/* certificate keyId names */
	const char	*alg;		/* cavage algorithm; NULL: omitted */
	const char	*jws;		/* JWS alg; NULL: draft-cavage */
	const char	*names;		/* signed headers */
	const char	*body;
	int		 sha512;
	int64_t		 date_off;
};

static void
copy_file(const char *from, const char *to)
{
	char	 buf[8192];
	FILE	*in, *out;
	size_t	 n;

	assert_non_null(in = fopen(from, "rb"));
	assert_non_null(out = fopen(to, "wb"));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
}

static int
setup(void **state)
{
	char	path[512], err[256];
	(void)state;

	snprintf(trust_dir, sizeof(trust_dir), "/tmp/tpp-trust-XXXXXX");
	snprintf(crl_dir, sizeof(crl_dir), "/tmp/tpp-crl-XXXXXX");
	assert_non_null(mkdtemp(trust_dir));
	assert_non_null(mkdtemp(crl_dir));
	snprintf(path, sizeof(path), "%s/ca.pem", trust_dir);
	copy_file(tt_path("ca.crt", err, sizeof(err)), path);
	now = time(NULL);
	cfg.required = 1;
	cfg.skew = 300;
	cfg.cache = tpp_cache_new(4);
	cfg.trust = tpp_trust_load(trust_dir, crl_dir, 0, err, sizeof(err));
	assert_non_null(cfg.trust);
	tpp_trust_on_failure(cfg.trust, on_failure);
	return (0);
}

static int
teardown(void **state)
{
	char	cmd[600];
	(void)state;

	tpp_trust_free(cfg.trust);
	tpp_cache_free(cfg.cache);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", trust_dir, crl_dir);
	return (system(cmd) == 0 ? 0 : -1);
}

static char *
keyid_of(const char *name)
{
	X509		*x = tt_cert(name);
	BIGNUM		*bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	char		*hex = BN_bn2hex(bn), *dn, *out;
	BIO		*b = BIO_new(BIO_s_mem());
	long		 n;

	X509_NAME_print_ex(b, X509_get_issuer_name(x), 0, XN_FLAG_RFC2253);
	n = BIO_get_mem_data(b, &dn);
	out = malloc(n + strlen(hex) + 16);
	sprintf(out, "SN=%s,CA=%.*s", hex, (int)n, dn);
	BIO_free(b);
	OPENSSL_free(hex);
	BN_free(bn);
	X509_free(x);
	return (out);
}

static void
signing_string(struct tt_req *r, const char *names, char *out, size_t len)
{
	char	 list[256], *name, *save;
	int	 count;
	size_t	 off = 0;

	snprintf(list, sizeof(list), "%s", names);
	out[0] = '\0';
	for (name = strtok_r(list, " ", &save); name != NULL;
	    name = strtok_r(NULL, " ", &save)) {
		off += snprintf(out + off, len - off, "%s%s: %s",
		    off ? "\n" : "", name, tt_header(r, name, &count));
	}
}

/* Builds and signs a request into r (the caller may then tamper). */
static void
sign(struct tt_req *r, const struct signreq *s)
{
	X509		*x = tt_cert(s->cert);
	EVP_PKEY	*key = tt_key(s->key ? s->key : s->cert);
	unsigned char	 md[64], sig[600];
	char		 date[30], sstr[4096], input[8192], hdr[8192], *b64;
	const char	*names = s->names ? s->names :
			    "digest x-request-id date";
	size_t		 siglen;

	EVP_Digest(s->body ? s->body : "", s->body ? strlen(s->body) : 0, md,
	    NULL, s->sha512 ? EVP_sha512() : EVP_sha256(), NULL);
	b64 = tt_b64(md, s->sha512 ? 64 : 32);
	snprintf(hdr, sizeof(hdr), "%s=%s", s->sha512 ? "SHA-512" :
	    "SHA-256", b64);
	free(b64);
	tt_set(r, "Digest", hdr);
	tt_set(r, "X-Request-ID", UUID1);
	httpdate_format(now + s->date_off, date);
	tt_set(r, "Date", date);
	b64 = tt_cert_b64(x);
	tt_set(r, "TPP-Signing-Certificate", b64);
	free(b64);
	signing_string(r, names, sstr, sizeof(sstr));
	if (s->jws == NULL) {
		char *kid = keyid_of(s->keyid_cert ? s->keyid_cert : s->cert);
		const EVP_MD *alg = s->alg && strcmp(s->alg, "rsa-sha512") == 0 ?
		    EVP_sha512() : EVP_sha256();

		siglen = tt_sign(key, alg, 0, sstr, strlen(sstr), sig,
		    sizeof(sig));
		b64 = tt_b64(sig, siglen);
		if (s->alg != NULL)
			snprintf(hdr, sizeof(hdr), "keyId=\"%s\",algorithm=\"%s\","
			    "headers=\"%s\",signature=\"%s\"", kid, s->alg, names,
			    b64);
		else
			snprintf(hdr, sizeof(hdr), "keyId=\"%s\",headers=\"%s\","
			    "signature=\"%s\"", kid, names, b64);
		free(kid);
		free(b64);
	} else {
		unsigned char	 fp[32], *der = NULL;
		char		 json[1024], pars[256], *p, *x5t, *prot;
		char		 sigt[32];
		struct tm	 tm;
		time_t		 t = now;
		int		 n;

		n = i2d_X509(x, &der);
		SHA256(der, n, fp);
		OPENSSL_free(der);
		x5t = tt_b64url(fp, 32);
		gmtime_r(&t, &tm);
		strftime(sigt, sizeof(sigt), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(pars, sizeof(pars), "\"%s\"", names);
		for (p = pars + 1; *p != '\0'; p++)
			if (*p == ' ')
				memmove(p + 2, p, strlen(p) + 1),
				    memcpy(p, "\",\"", 3), p += 2;
		snprintf(json, sizeof(json), "{\"alg\":\"%s\",\"b64\":false,"
		    "\"crit\":[\"sigT\",\"sigD\",\"b64\"],\"x5t#S256\":\"%s\","
		    "\"sigT\":\"%s\",\"sigD\":{\"mId\":"
		    "\"http://uri.etsi.org/19182/HttpHeaders\",\"pars\":[%s]}}",
		    s->jws, x5t, sigt, pars);
		prot = tt_b64url(json, strlen(json));
		snprintf(input, sizeof(input), "%s.%s", prot, sstr);
		siglen = tt_sign(key, EVP_sha256(), strcmp(s->jws, "PS256") == 0,
		    input, strlen(input), sig, sizeof(sig));
		if (strcmp(s->jws, "ES256") == 0) {
			/* DER to JWS r || s */
			const unsigned char *q = sig;
			ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &q, siglen);
			assert_non_null(es);
			BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32);
			BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32);
			ECDSA_SIG_free(es);
			siglen = 64;
		}
		b64 = tt_b64url(sig, siglen);
		snprintf(hdr, sizeof(hdr), "%s..%s", prot, b64);
		free(prot);
		free(b64);
		free(x5t);
	}
	tt_set(r, "Signature", hdr);
	X509_free(x);
	EVP_PKEY_free(key);
}

static void
run(struct tt_req *r, const char *body, struct tpp_verdict *v)
{
	struct tpp_input	in = { 0 };

	in.header = tt_header;
	in.arg = r;
	in.method = "GET";
	in.target = "/auth/v1/psd2/account/account-list";
	in.body = body;
	in.bodylen = body ? strlen(body) : 0;
	in.now = now;
	tpp_verdict_run(&cfg, &in, v);
}

#define EXPECT(r, body, st, cd) do {					\
	struct tpp_verdict	v_;					\
	run((r), (body), &v_);						\
	if (v_.status != (st) || strcmp(v_.code, (cd)) != 0)		\
		fail_msg("want %d %s, got %d %s: %s", (st), (cd),	\
		    v_.status, v_.code, v_.text);			\
} while (0)

static void
test_good_cavage(void **state)
{
	struct tt_req		r = { 0 };
	struct tpp_verdict	v;
	struct signreq		s = { .cert = "all", .alg = "rsa-sha256" };
	(void)state;

	tt_add(&r, "Authorization", "Bearer x");
	sign(&r, &s);
	run(&r, NULL, &v);
	if (v.status != 0)
		fail_msg("%d %s %s", v.status, v.code, v.text);
	assert_true(v.signed_request);
	assert_string_equal(v.org_id, "PSDDE-BAFIN-999999");
	assert_int_equal(v.roles, TPP_ROLE_AI | TPP_ROLE_PI | TPP_ROLE_IC);
	assert_string_equal(v.request_id, UUID1);
	/* Same certificate again: one cache entry. */
	run(&r, NULL, &v);
	assert_int_equal(v.status, 0);
	assert_int_equal(tpp_cache_size(cfg.cache), 1);
	tt_free(&r);
}

static void
test_good_variants(void **state)
{
	struct tt_req	r = { 0 };
	struct signreq	s512 = { .cert = "all", .alg = "rsa-sha512",
			    .body = "{\"referenceId\":\"x\"}", .sha512 = 1,
			    .names = "date digest x-request-id psu-id" };
	struct signreq	ec = { .cert = "ec", .alg = "ecdsa-sha256" };
	struct signreq	ecdef = { .cert = "ec" };
	struct signreq	pi = { .cert = "pi", .alg = "rsa-sha256" };
	struct tpp_verdict v;
	(void)state;

	tt_add(&r, "PSU-ID", "anna");
	sign(&r, &s512);
	EXPECT(&r, s512.body, 0, "");
	tt_set(&r, "PSU-ID", NULL);
	sign(&r, &ec);
	EXPECT(&r, NULL, 0, "");
	sign(&r, &ecdef);
	EXPECT(&r, NULL, 0, "");
	sign(&r, &pi);
	run(&r, NULL, &v);
	assert_int_equal(v.status, 0);
	assert_int_equal(v.roles, TPP_ROLE_PI);
	/* Berlin Group's header name; PEM instead of base64 DER. */
	{
		char	pem[8192];
		int	c;

		sign(&r, &pi);
		snprintf(pem, sizeof(pem), "-----BEGIN CERTIFICATE-----%s"
		    "-----END CERTIFICATE-----",
		    tt_header(&r, "tpp-signing-certificate", &c));
		tt_set(&r, "TPP-Signing-Certificate", NULL);
		tt_set(&r, "TPP-Signature-Certificate", pem);
		EXPECT(&r, NULL, 0, "");
	}
	tt_free(&r);
}

static void
test_good_jws(void **state)
{
	static const char *const algs[][2] = {
		{ "RS256", "all" }, { "PS256", "all" }, { "ES256", "ec" },
	};
	struct tt_req	r = { 0 };
	size_t		i;
	(void)state;

	for (i = 0; i < 3; i++) {
		struct signreq s = { .cert = algs[i][1], .jws = algs[i][0],
		    .body = "{}" };

		sign(&r, &s);
		EXPECT(&r, "{}", 0, "");
		/* The same JWS over another body: the digest step refuses. */
		EXPECT(&r, "{ }", 401, "SIGNATURE_INVALID");
		tt_free(&r);
	}
}

static void
test_presence(void **state)
{
	struct tt_req	r = { 0 };
	struct signreq	s = { .cert = "all", .alg = "rsa-sha256" };
	(void)state;

	/* Unsigned: refused when required, passed otherwise. */
	tt_add(&r, "X-Request-ID", UUID1);
	EXPECT(&r, NULL, 401, "SIGNATURE_MISSING");
	cfg.required = 0;
	{
		struct tpp_verdict v;

		run(&r, NULL, &v);
		assert_int_equal(v.status, 0);
		assert_false(v.signed_request);
		assert_string_equal(v.request_id, UUID1);
		assert_string_equal(v.org_id, "");
		/* An unsigned request proves no role... */
		assert_int_equal(v.roles, 0);
		/* ...unless the configuration grants it some explicitly. */
		cfg.unsigned_roles = TPP_ROLE_AI;
		run(&r, NULL, &v);
		assert_int_equal(v.roles, TPP_ROLE_AI);
		cfg.unsigned_roles = 0;
	}
	tt_set(&r, "X-Request-ID", "not-a-uuid");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	/* Signed although not required: verified all the same. */
	sign(&r, &s);
	tt_set(&r, "X-Request-ID", UUID2);
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	cfg.required = 1;

	sign(&r, &s);
	tt_set(&r, "TPP-Signing-Certificate", NULL);
	EXPECT(&r, NULL, 401, "CERTIFICATE_MISSING");
	sign(&r, &s);
	tt_set(&r, "Digest", NULL);
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "Digest", "MD5=AAAA");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "X-Request-ID", NULL);
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "X-Request-ID", "1234");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "Date", "yesterday");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "Date", NULL);
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "Signature", "keyId=\"SN=1\",signature=\"AA==\"");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_set(&r, "TPP-Signing-Certificate", "AAAA");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	sign(&r, &s);
	tt_add(&r, "TPP-Signature-Certificate", "AAAA");
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	tt_set(&r, "TPP-Signature-Certificate", NULL);
	tt_add(&r, "Signature", "x");	/* sent twice */
	EXPECT(&r, NULL, 400, "FORMAT_ERROR");
	tt_free(&r);
}

static void
test_date(void **state)
{
	struct tt_req	r = { 0 };
	struct signreq	old = { .cert = "all", .alg = "rsa-sha256",
			    .date_off = -600 };
	struct signreq	edge = { .cert = "all", .alg = "rsa-sha256",
			    .date_off = 300 };
	(void)state;

	sign(&r, &old);
	EXPECT(&r, NULL, 400, "TIMESTAMP_INVALID");
	old.date_off = 600;
	sign(&r, &old);
	EXPECT(&r, NULL, 400, "TIMESTAMP_INVALID");
	sign(&r, &edge);
	EXPECT(&r, NULL, 0, "");
	tt_free(&r);
}

static void
test_tampering(void **state)
{
	struct tt_req	r = { 0 };
	struct signreq	s = { .cert = "all", .alg = "rsa-sha256",
			    .body = "{\"a\":1}" };
	struct signreq	otherkey = { .cert = "all", .key = "pi",
			    .alg = "rsa-sha256" };
	struct signreq	otherkid = { .cert = "all", .keyid_cert = "pi",
			    .alg = "rsa-sha256" };
	struct signreq	noxrid = { .cert = "all", .alg = "rsa-sha256",
			    .names = "digest date" };
	struct signreq	nopsu = { .cert = "all", .alg = "rsa-sha256" };
	struct signreq	misfit = { .cert = "all", .alg = "ecdsa-sha256" };
	struct signreq	hmac = { .cert = "all", .alg = "hmac-sha256" };
	(void)state;

	sign(&r, &s);
	EXPECT(&r, "{\"a\":1}", 0, "");
	EXPECT(&r, "{\"a\":2}", 401, "SIGNATURE_INVALID");	/* body */
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");		/* no body */
	tt_set(&r, "X-Request-ID", UUID2);			/* header */
	EXPECT(&r, "{\"a\":1}", 401, "SIGNATURE_INVALID");
	sign(&r, &otherkey);
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	sign(&r, &otherkid);
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	sign(&r, &noxrid);
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	tt_add(&r, "PSU-ID", "anna");
	sign(&r, &nopsu);
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	tt_set(&r, "PSU-ID", NULL);
	sign(&r, &misfit);	/* signed with RSA, claims ECDSA */
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	sign(&r, &hmac);
	EXPECT(&r, NULL, 401, "SIGNATURE_INVALID");
	tt_free(&r);
}

static void
test_certificates(void **state)
{
	static const struct {
		const char	*cert;
		int		 status;
		const char	*code;
	} cases[] = {
		{ "expired", 401, "CERTIFICATE_EXPIRED" },
		{ "noqc", 401, "CERTIFICATE_INVALID" },
		{ "kuenc", 401, "CERTIFICATE_INVALID" },
		{ "untrusted", 401, "CERTIFICATE_INVALID" },
		{ "server", 401, "CERTIFICATE_INVALID" },	/* no org id */
		{ "other", 0, "" },	/* valid; the SQL compares org ids */
	};
	struct tt_req	r = { 0 };
	size_t		i;
	(void)state;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct signreq s = { .cert = cases[i].cert,
		    .alg = "rsa-sha256" };

		sign(&r, &s);
		EXPECT(&r, NULL, cases[i].status, cases[i].code);
	}
	/* More certificates than cache slots: still right after eviction. */
	assert_int_equal(tpp_cache_size(cfg.cache), 4);
	tt_free(&r);
}

static void
test_crl_reload(void **state)
{
	struct tt_req	r = { 0 };
	struct signreq	s = { .cert = "revoked", .alg = "rsa-sha256" };
	char		path[512], src[512];
	(void)state;

	/* No CRL yet: the certificate is fine (and cached as fine). */
	sign(&r, &s);
	EXPECT(&r, NULL, 0, "");
	snprintf(path, sizeof(path), "%s/ca.crl.pem", crl_dir);
	copy_file(tt_path("crl/ca.crl.pem", src, sizeof(src)), path);
	now += 1;	/* the folder is looked at once a second */
	sign(&r, &s);
	EXPECT(&r, NULL, 401, "CERTIFICATE_BLOCKED");
	/* Others of the same CA are unaffected. */
	{
		struct signreq ok = { .cert = "all", .alg = "rsa-sha256" };

		sign(&r, &ok);
		EXPECT(&r, NULL, 0, "");
	}
	/*
	 * The folder emptied (say, a failed CRL download): revocation does
	 * not turn itself off; the CRL loaded stays, the failure is
	 * reported once, and again when the files change.
	 */
	reports = 0;
	unlink(path);
	now += 1;
	sign(&r, &s);
	EXPECT(&r, NULL, 401, "CERTIFICATE_BLOCKED");
	assert_int_equal(reports, 1);
	assert_string_equal(last_reason, "crl_folder_empty");
	now += 1;
	sign(&r, &s);
	EXPECT(&r, NULL, 401, "CERTIFICATE_BLOCKED");
	assert_int_equal(reports, 1);
	/* A file that does not parse: the same. */
	snprintf(path, sizeof(path), "%s/half.crl.pem", crl_dir);
	{
		FILE	*fp = fopen(path, "w");

		assert_non_null(fp);
		fputs("-----BEGIN X509 CRL-----\nMIIB\n", fp);
		fclose(fp);
	}
	now += 1;
	sign(&r, &s);
	EXPECT(&r, NULL, 401, "CERTIFICATE_BLOCKED");
	assert_int_equal(reports, 2);
	assert_string_equal(last_reason, "crl_unreadable");
	unlink(path);
	tt_free(&r);
}

/*
 * Revocation required (production): no trust store without a CRL folder
 * holding a current CRL of every trusted CA; with one, the revoked
 * certificate is refused and the others pass. Not required: an empty
 * folder loads (the sandbox before its CA made a CRL).
 */
static void
test_crl_required(void **state)
{
	struct tt_req		 r = { 0 };
	struct signreq		 ok = { .cert = "all", .alg = "rsa-sha256" };
	struct signreq		 bad = { .cert = "revoked",
				    .alg = "rsa-sha256" };
	struct tpp_trust	*saved = cfg.trust, *t;
	char			 dir[256], path[512], src[512], err[256];
	(void)state;

	snprintf(dir, sizeof(dir), "/tmp/tpp-crlreq-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_null(tpp_trust_load(trust_dir, NULL, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "psd2_crl_dir"));
	assert_null(tpp_trust_load(trust_dir, dir, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "revocation is required"));
	snprintf(path, sizeof(path), "%s/ca.crl.pem", dir);
	copy_file(tt_path("crl/ca.crl.pem", src, sizeof(src)), path);
	t = tpp_trust_load(trust_dir, dir, 1, err, sizeof(err));
	assert_non_null(t);
	tpp_trust_on_failure(t, on_failure);
	cfg.trust = t;
	tpp_cache_free(cfg.cache);
	cfg.cache = tpp_cache_new(4);
	sign(&r, &ok);
	EXPECT(&r, NULL, 0, "");
	sign(&r, &bad);
	EXPECT(&r, NULL, 401, "CERTIFICATE_BLOCKED");
	tpp_trust_free(t);
	unlink(path);
	t = tpp_trust_load(trust_dir, dir, 0, err, sizeof(err));
	assert_non_null(t);	/* not required: an empty folder loads */
	tpp_trust_free(t);
	cfg.trust = saved;
	tpp_cache_free(cfg.cache);
	cfg.cache = tpp_cache_new(4);
	rmdir(dir);
	tt_free(&r);
}

static void
test_no_trust(void **state)
{
	struct tt_req		 r = { 0 };
	struct signreq		 s = { .cert = "all", .alg = "rsa-sha256" };
	struct tpp_trust	*saved = cfg.trust;
	(void)state;

	cfg.trust = NULL;
	sign(&r, &s);
	EXPECT(&r, NULL, 401, "CERTIFICATE_INVALID");
	cfg.trust = saved;
	tt_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_cavage),
		cmocka_unit_test(test_good_variants),
		cmocka_unit_test(test_good_jws),
		cmocka_unit_test(test_presence),
		cmocka_unit_test(test_date),
		cmocka_unit_test(test_tampering),
		cmocka_unit_test(test_certificates),
		cmocka_unit_test(test_crl_reload),
		cmocka_unit_test(test_crl_required),
		cmocka_unit_test(test_no_trust),
	};

	return (cmocka_run_group_tests_name("tpp_verdict", tests, setup,
	    teardown));
}
