/*
 * Unit tests of the TPP header parsers: digest, signature (draft-cavage
 * and the JWS shape), keyId, QCStatement, organizationIdentifier,
 * certificate header decoding, JWS header and sigT, and the HTTP date
 * rule the verdict relies on.
 */
#include "tpptest.h"

#include "common/httpdate.h"
#include "tpp/cert.h"
#include "tpp/digest.h"
#include "tpp/jws.h"
#include "tpp/keyid.h"
#include "tpp/sighdr.h"
#include "tpp/signature.h"
#include "tpp/tpp.h"

static char	err[256];

/* sha256("") and sha256("{}") in base64 */
#define EMPTY_SHA256	"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
#define EMPTY_SHA512	"z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="

static void
test_digest_good(void **state)
{
	struct tpp_digest	d;
	(void)state;

	assert_int_equal(tpp_digest_parse("SHA-256=" EMPTY_SHA256, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.alg, TPP_DIGEST_SHA256);
	assert_true(tpp_digest_matches(&d, NULL, 0));
	assert_true(tpp_digest_matches(&d, "", 0));
	assert_false(tpp_digest_matches(&d, "x", 1));
	/* Any letter case, the spec's sha-256= included. */
	assert_int_equal(tpp_digest_parse("sha-256=" EMPTY_SHA256, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(tpp_digest_parse("Sha-512=" EMPTY_SHA512, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.alg, TPP_DIGEST_SHA512);
	assert_true(tpp_digest_matches(&d, "", 0));
	/* RFC 3230 list: unknown algorithms are skipped. */
	assert_int_equal(tpp_digest_parse("MD5=AAAA, SHA-256=" EMPTY_SHA256,
	    &d, err, sizeof(err)), 0);
	assert_int_equal(d.alg, TPP_DIGEST_SHA256);
}

static void
test_digest_bad(void **state)
{
	static const char *bad[] = {
		"", "SHA-256", "SHA-256=", "=abc", "MD5=AAAA",
		"SHA-1=2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
		"SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
		"SHA-256=" EMPTY_SHA512,
		"SHA-256=" EMPTY_SHA256 ",SHA-512=" EMPTY_SHA512,
		"SHA-256=" EMPTY_SHA256 ",sha-256=" EMPTY_SHA256,
		"SHA-256 =" EMPTY_SHA256,
		"SHA-256=not base64!!",
	};
	struct tpp_digest	d;
	size_t			i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(tpp_digest_parse(bad[i], &d, err,
		    sizeof(err)), -1);
		assert_true(err[0] != '\0');
	}
}

static void
test_sighdr_good(void **state)
{
	struct tpp_sighdr	s;
	(void)state;

	assert_int_equal(tpp_sighdr_parse("keyId=\"SN=1A,CA=CN=Test CA,O=X\","
	    "algorithm=\"rsa-sha256\", headers=\"Digest X-Request-ID date\","
	    "signature=\"AQID\"", &s, err, sizeof(err)), 0);
	assert_string_equal(s.key_id, "SN=1A,CA=CN=Test CA,O=X");
	assert_string_equal(s.algorithm, "rsa-sha256");
	assert_int_equal(s.nnames, 3);
	assert_string_equal(s.names[0], "digest");
	assert_string_equal(s.names[1], "x-request-id");
	assert_string_equal(s.names[2], "date");
	assert_int_equal(s.siglen, 3);
	assert_memory_equal(s.sig, "\1\2\3", 3);
	/* Parameter names in any case, unknown ones ignored, no algorithm. */
	assert_int_equal(tpp_sighdr_parse("KEYID=\"k\",created=1618884473,"
	    "Signature=\"AA==\",headers=\"(request-target) digest\"", &s, err,
	    sizeof(err)), 0);
	assert_null(s.algorithm);
	assert_string_equal(s.names[0], "(request-target)");
	/* No headers parameter: draft-cavage's default, date alone. */
	assert_int_equal(tpp_sighdr_parse("keyId=\"k\",signature=\"AA==\"",
	    &s, err, sizeof(err)), 0);
	assert_int_equal(s.nnames, 1);
	assert_string_equal(s.names[0], "date");
	/* \" inside a quoted value. */
	assert_int_equal(tpp_sighdr_parse("keyId=\"SN=1,CA=CN=\\\"q\\\"\","
	    "signature=\"AA==\"", &s, err, sizeof(err)), 0);
	assert_string_equal(s.key_id, "SN=1,CA=CN=\"q\"");
}

static void
test_sighdr_bad(void **state)
{
	static const char *bad[] = {
		"",
		"keyId=\"k\"",
		"signature=\"AA==\"",
		"keyId=\"k\",signature=\"AA=\"",
		"keyId=\"k\",signature=\"\"",
		"keyId=\"k\",keyId=\"j\",signature=\"AA==\"",
		"keyId=\"k,signature=\"AA==\"",
		"keyId=\"k\" signature=\"AA==\" x",
		"keyId=\"k\"signature=\"AA==\"",
		"keyId=\"k\",signature=\"AA==\",headers=\"\"",
		"keyId=\"k\",signature=\"AA==\",headers=\"digest x:y\"",
		"keyId=\"k\",signature=\"AA==\",headers=\"a b c d e f g h i j k l m n o p q\"",
		"=\"k\"",
		"keyId",
	};
	struct tpp_sighdr	s;
	size_t			i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(tpp_sighdr_parse(bad[i], &s, err,
		    sizeof(err)), -1);
		assert_true(err[0] != '\0');
	}
}

static void
test_sighdr_is_jws(void **state)
{
	(void)state;
	assert_true(tpp_sighdr_is_jws("eyJhbGciOiJSUzI1NiJ9..c2ln"));
	assert_false(tpp_sighdr_is_jws("eyJhbGciOiJSUzI1NiJ9.cGF5.c2ln"));
	assert_false(tpp_sighdr_is_jws("..c2ln"));
	assert_false(tpp_sighdr_is_jws("abc.."));
	assert_false(tpp_sighdr_is_jws("keyId=\"a..b\""));
	assert_false(tpp_sighdr_is_jws(""));
}

static void
test_keyid_parse(void **state)
{
	struct tpp_keyid	k;
	(void)state;

	assert_int_equal(tpp_keyid_parse("SN=00A1b2,CA=CN=D-TRUST CA 2-1 "
	    "2015,O=D-Trust GmbH,C=DE", &k, err, sizeof(err)), 0);
	assert_int_equal(k.serial_len, 2);	/* leading zeros dropped */
	assert_memory_equal(k.serial, "\xa1\xb2", 2);
	assert_int_equal(k.nattrs, 3);
	assert_string_equal(k.attrs[0].type, "CN");
	assert_string_equal(k.attrs[0].value, "D-TRUST CA 2-1 2015");
	assert_string_equal(k.attrs[2].value, "DE");
	/* Odd number of digits, RFC 4514 escapes, quoted value, spaces. */
	assert_int_equal(tpp_keyid_parse("sn=abc, ca=CN=Foo\\, Inc. ,"
	    "O=\"Bar, Baz\";OU=a\\2Bb+L=x ", &k, err, sizeof(err)), 0);
	assert_int_equal(k.serial_len, 2);
	assert_memory_equal(k.serial, "\x0a\xbc", 2);
	assert_int_equal(k.nattrs, 4);
	assert_string_equal(k.attrs[0].value, "Foo, Inc.");
	assert_string_equal(k.attrs[1].value, "Bar, Baz");
	assert_string_equal(k.attrs[2].value, "a+b");
	assert_string_equal(k.attrs[3].type, "L");
	assert_string_equal(k.attrs[3].value, "x");
	/* Zero serial. */
	assert_int_equal(tpp_keyid_parse("SN=0000,CA=CN=x", &k, err,
	    sizeof(err)), 0);
	assert_int_equal(k.serial_len, 1);
	assert_int_equal(k.serial[0], 0);
}

static void
test_keyid_bad(void **state)
{
	static const char *bad[] = {
		"", "SN=", "SN=1A", "SN=1A,", "SN=xyz,CA=CN=a", "CA=CN=a,SN=1",
		"SN=1A,CA=", "SN=1A,CA=CN", "SN=1A,CA=CN=", "SN=1A,CA==a",
		"SN=1A,CA=CN=a\\", "SN=1A,CA=CN=\"open", "SN=1A,CA=CN=a\\00",
		"SN=1A,CA=CN=#04024869", "SN=1A,CA=CN=a,,O=b",
		"SN=" "0123456789012345678901234567890123456789012345678901234"
		    "5678901234567890123456789012345678901234567890123456789"
		    ",CA=CN=a",
	};
	struct tpp_keyid	k;
	size_t			i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tpp_keyid_parse(bad[i], &k, err, sizeof(err)) != -1)
			fail_msg("accepted: %s", bad[i]);
	}
}

static char *
issuer_rfc4514(X509 *x)
{
	BIO	*b = BIO_new(BIO_s_mem());
	char	*s;
	long	 n;
	char	*p;

	X509_NAME_print_ex(b, X509_get_issuer_name(x), 0, XN_FLAG_RFC2253);
	n = BIO_get_mem_data(b, &p);
	s = strndup(p, n);
	BIO_free(b);
	return (s);
}

static void
test_keyid_matches(void **state)
{
	struct tpp_keyid	 k;
	X509			*x = tt_cert("all"), *other = tt_cert("pi");
	char			 buf[1024], *dn, *hex;
	BIGNUM			*bn;
	(void)state;

	bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	hex = BN_bn2hex(bn);
	dn = issuer_rfc4514(x);
	/* RFC 4514 order (most specific first). */
	snprintf(buf, sizeof(buf), "SN=%s,CA=%s", hex, dn);
	assert_int_equal(tpp_keyid_parse(buf, &k, err, sizeof(err)), 0);
	assert_true(tpp_keyid_matches(&k, x));
	assert_false(tpp_keyid_matches(&k, other));	/* serial differs */
	/* OpenSSL's order, lower-case hex with leading zeros, odd spacing. */
	snprintf(buf, sizeof(buf), "SN=000%s, CA=C=de, o=psd2gate  Test "
	    "Trust Services, 2.5.4.3=psd2gate TEST Root CA", hex);
	for (char *p = buf; *p != ','; p++)
		*p = (*p >= 'A' && *p <= 'F') ? *p + 32 : *p;
	buf[0] = 'S';
	buf[1] = 'N';
	assert_int_equal(tpp_keyid_parse(buf, &k, err, sizeof(err)), 0);
	assert_true(tpp_keyid_matches(&k, x));
	/* Same serial, another issuer DN; a missing attribute. */
	snprintf(buf, sizeof(buf), "SN=%s,CA=CN=psd2gate Test Root CA,"
	    "O=Other,C=DE", hex);
	assert_int_equal(tpp_keyid_parse(buf, &k, err, sizeof(err)), 0);
	assert_false(tpp_keyid_matches(&k, x));
	snprintf(buf, sizeof(buf), "SN=%s,CA=CN=psd2gate Test Root CA,"
	    "C=DE", hex);
	assert_int_equal(tpp_keyid_parse(buf, &k, err, sizeof(err)), 0);
	assert_false(tpp_keyid_matches(&k, x));
	OPENSSL_free(hex);
	BN_free(bn);
	free(dn);
	X509_free(x);
	X509_free(other);
}

/* DER of a QCStatements value, built by hand. */
static const uint8_t qc_psd2_ai_pi[] = {
	0x30, 0x3f,				/* QCStatements */
	  0x30, 0x3d,				/* QCStatement */
	    0x06, 0x06, 0x04, 0x00, 0x81, 0x98, 0x27, 0x02, /* 0.4.0.19495.2 */
	    0x30, 0x33,				/* PSD2QCType */
	      0x30, 0x26,			/* rolesOfPSP */
		0x30, 0x11, 0x06, 0x07, 0x04, 0x00, 0x81, 0x98, 0x27, 0x01,
		  0x03, 0x0c, 0x06, 'P', 'S', 'P', '_', 'A', 'I',
		0x30, 0x11, 0x06, 0x07, 0x04, 0x00, 0x81, 0x98, 0x27, 0x01,
		  0x02, 0x0c, 0x06, 'P', 'S', 'P', '_', 'P', 'I',
	      0x0c, 0x03, 'N', 'C', 'A',
	      0x0c, 0x04, 'D', 'E', '-', 'X',
};

static void
test_qc_parse(void **state)
{
	struct tpp_qc	qc;
	uint8_t		buf[sizeof(qc_psd2_ai_pi) + 1];
	(void)state;

	assert_int_equal(tpp_qc_parse(qc_psd2_ai_pi, sizeof(qc_psd2_ai_pi),
	    &qc), 0);
	assert_int_equal(qc.roles, TPP_ROLE_AI | TPP_ROLE_PI);
	assert_string_equal(qc.nca_name, "NCA");
	assert_string_equal(qc.nca_id, "DE-X");
	/* Trailing garbage, truncation, and an empty list of statements. */
	memcpy(buf, qc_psd2_ai_pi, sizeof(qc_psd2_ai_pi));
	buf[sizeof(qc_psd2_ai_pi)] = 0;
	assert_int_equal(tpp_qc_parse(buf, sizeof(buf), &qc), -1);
	assert_int_equal(tpp_qc_parse(qc_psd2_ai_pi, sizeof(qc_psd2_ai_pi) - 1,
	    &qc), -1);
	assert_int_equal(tpp_qc_parse((const uint8_t *)"\x30\x00", 2, &qc), 1);
	/* Only qcCompliance: parses, no PSD2 statement. */
	assert_int_equal(tpp_qc_parse((const uint8_t *)"\x30\x0a\x30\x08\x06"
	    "\x06\x04\x00\x8e\x46\x01\x01", 12, &qc), 1);
	/* Role OID changed to an unknown one (.9): no role -> malformed. */
	memcpy(buf, qc_psd2_ai_pi, sizeof(qc_psd2_ai_pi));
	buf[27] = 0x09;
	buf[46] = 0x09;
	assert_int_equal(tpp_qc_parse(buf, sizeof(qc_psd2_ai_pi), &qc), -1);
	assert_int_equal(qc.roles, 0);
}

static void
test_cert_fields(void **state)
{
	struct tpp_qc	 qc;
	char		 org[128], roles[64];
	X509		*all = tt_cert("all"), *pi = tt_cert("pi"),
			*noqc = tt_cert("noqc"), *other = tt_cert("other"),
			*kuenc = tt_cert("kuenc"), *server = tt_cert("server");
	(void)state;

	assert_int_equal(tpp_cert_qc(all, &qc), 0);
	assert_int_equal(qc.roles, TPP_ROLE_AI | TPP_ROLE_PI | TPP_ROLE_IC);
	assert_string_equal(qc.nca_id, "DE-BAFIN");
	tpp_roles_format(qc.roles, roles, sizeof(roles));
	assert_string_equal(roles, "PSP_PI PSP_AI PSP_IC");
	assert_int_equal(tpp_cert_qc(pi, &qc), 0);
	assert_int_equal(qc.roles, TPP_ROLE_PI);
	assert_int_equal(tpp_cert_qc(noqc, &qc), 1);
	assert_int_equal(tpp_cert_org_id(all, org, sizeof(org)), 0);
	assert_string_equal(org, "PSDDE-BAFIN-999999");
	assert_int_equal(tpp_cert_org_id(other, org, sizeof(org)), 0);
	assert_string_equal(org, "PSDDE-BAFIN-888888");
	assert_int_equal(tpp_cert_org_id(server, org, sizeof(org)), -1);
	assert_int_equal(tpp_cert_org_id(all, org, 5), -1);
	assert_true(tpp_cert_can_sign(all));
	assert_false(tpp_cert_can_sign(kuenc));
	tpp_roles_format(0, roles, sizeof(roles));
	assert_string_equal(roles, "none");
	assert_string_equal(tpp_role_name(TPP_ROLE_AI), "PSP_AI");
	assert_null(tpp_role_name(0x40));
	X509_free(all);
	X509_free(pi);
	X509_free(noqc);
	X509_free(other);
	X509_free(kuenc);
	X509_free(server);
}

static void
test_org_id(void **state)
{
	(void)state;
	assert_true(tpp_org_id_valid("PSDDE-BAFIN-999999"));
	assert_true(tpp_org_id_valid("PSDNL-DNB-R123456"));
	assert_false(tpp_org_id_valid("PSDDE-B-1"));
	assert_false(tpp_org_id_valid("PSDDE-ABCDEFGHI-1"));
	assert_false(tpp_org_id_valid("PSDde-BAFIN-1"));
	assert_false(tpp_org_id_valid("PSDDE-BAFIN-"));
	assert_false(tpp_org_id_valid("VATDE-123456"));
	assert_false(tpp_org_id_valid(""));
}

static void
test_cert_decode(void **state)
{
	X509		*x = tt_cert("all"), *y;
	char		*b64 = tt_cert_b64(x), pem[8192];
	uint8_t		 der[TPP_CERT_DER_MAX];
	int		 n, m;
	(void)state;

	n = tpp_cert_decode(b64, der, sizeof(der));
	assert_true(n > 0);
	assert_non_null(y = tpp_cert_parse(der, n));
	assert_int_equal(X509_cmp(x, y), 0);
	X509_free(y);
	/* PEM on one line, and with spaces where the line breaks were. */
	snprintf(pem, sizeof(pem), "-----BEGIN CERTIFICATE-----%s"
	    "-----END CERTIFICATE-----", b64);
	assert_int_equal(tpp_cert_decode(pem, der, sizeof(der)), n);
	snprintf(pem, sizeof(pem), "-----BEGIN CERTIFICATE----- %.64s %s "
	    "-----END CERTIFICATE----- ", b64, b64 + 64);
	assert_int_equal(tpp_cert_decode(pem, der, sizeof(der)), n);
	/* Broken forms. */
	assert_int_equal(tpp_cert_decode("-----BEGIN CERTIFICATE-----AAAA",
	    der, sizeof(der)), -1);
	snprintf(pem, sizeof(pem), "-----BEGIN CERTIFICATE-----%s"
	    "-----END CERTIFICATE-----x", b64);
	assert_int_equal(tpp_cert_decode(pem, der, sizeof(der)), -1);
	assert_int_equal(tpp_cert_decode("%%%", der, sizeof(der)), -1);
	/* Valid base64, not a certificate; a certificate plus a byte. */
	m = tpp_cert_decode("AAAA", der, sizeof(der));
	assert_int_equal(m, 3);
	assert_null(tpp_cert_parse(der, m));
	n = tpp_cert_decode(b64, der, sizeof(der));
	der[n] = 0;
	assert_null(tpp_cert_parse(der, n + 1));
	assert_null(tpp_cert_parse(der, 0));
	free(b64);
	X509_free(x);
}

static char *
jws_with(const char *json)
{
	char	*p = tt_b64url(json, strlen(json)), *out;

	out = malloc(strlen(p) + 16);
	sprintf(out, "%s..c2lnbmF0dXJl", p);
	free(p);
	return (out);
}

#define X5T "\"x5t#S256\":\"47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU\""
#define SIGD "\"sigD\":{\"mId\":\"http://uri.etsi.org/19182/HttpHeaders\"," \
	"\"pars\":[\"Digest\",\"x-request-id\"]}"
#define CRIT "\"crit\":[\"b64\",\"sigD\"]"
#define SIGT "\"sigT\":\"2024-05-01T12:00:00Z\""

static void
test_jws_parse(void **state)
{
	struct tpp_jws	 j;
	char		*h;
	(void)state;

	h = jws_with("{\"alg\":\"RS256\",\"b64\":false," CRIT "," X5T ","
	    SIGT "," SIGD "}");
	assert_int_equal(tpp_jws_parse(h, &j, err, sizeof(err)), 0);
	assert_string_equal(j.alg, "RS256");
	assert_int_equal(j.nnames, 2);
	assert_string_equal(j.names[0], "digest");
	assert_string_equal(j.names[1], "x-request-id");
	assert_int_equal(j.sig_t, 1714564800);
	assert_int_equal(j.siglen, 9);
	assert_memory_equal(j.sig, "signature", 9);
	assert_int_equal(j.protected_len, strchr(h, '.') - h);
	assert_int_equal(j.x5t[0], 0xe3);
	free(h);
}

static void
test_jws_bad(void **state)
{
	static const char *bad[] = {
		"[]",
		"{\"alg\":\"RS256\"," CRIT "," X5T "," SIGT "," SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":true," CRIT "," X5T "," SIGT ","
		    SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":false,\"crit\":[\"b64\"]," X5T ","
		    SIGT "," SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":false,\"crit\":[\"b64\",\"sigD\","
		    "\"zip\"]," X5T "," SIGT "," SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":false," CRIT "," SIGT "," SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":false," CRIT ",\"x5t#S256\":\"AA\","
		    SIGT "," SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":false," CRIT "," X5T ","
		    "\"sigT\":\"2024-05-01 12:00:00\"," SIGD "}",
		"{\"alg\":\"RS256\",\"b64\":false," CRIT "," X5T "," SIGT ","
		    "\"sigD\":{\"mId\":\"http://uri.etsi.org/19182/ObjectIdByURI\","
		    "\"pars\":[\"digest\"]}}",
		"{\"alg\":\"RS256\",\"b64\":false," CRIT "," X5T "," SIGT ","
		    "\"sigD\":{\"mId\":\"http://uri.etsi.org/19182/HttpHeaders\","
		    "\"pars\":[]}}",
		"{\"alg\":\"RS256\",\"b64\":false," CRIT "," X5T "," SIGT ","
		    "\"sigD\":{\"mId\":\"http://uri.etsi.org/19182/HttpHeaders\","
		    "\"pars\":[\"a b\"]}}",
		"{\"alg\":\"RS256\",\"alg\":\"ES256\",\"b64\":false," CRIT ","
		    X5T "," SIGT "," SIGD "}",
		"{\"alg\":7,\"b64\":false," CRIT "," X5T "," SIGT "," SIGD "}",
	};
	struct tpp_jws	 j;
	size_t		 i;
	char		*h;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h = jws_with(bad[i]);
		err[0] = '\0';
		assert_int_equal(tpp_jws_parse(h, &j, err, sizeof(err)), -1);
		assert_true(err[0] != '\0');
		free(h);
	}
	assert_int_equal(tpp_jws_parse("e30..!!", &j, err, sizeof(err)), -1);
	assert_int_equal(tpp_jws_parse("e30.x.c2ln", &j, err, sizeof(err)), -1);
}

static void
test_jws_time(void **state)
{
	int64_t	t;
	(void)state;

	assert_int_equal(tpp_jws_time("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(tpp_jws_time("2024-02-29T23:59:59.123Z", &t), 0);
	assert_int_equal(t, 1709251199);
	assert_int_equal(tpp_jws_time("2023-02-29T00:00:00Z", &t), -1);
	assert_int_equal(tpp_jws_time("2024-13-01T00:00:00Z", &t), -1);
	assert_int_equal(tpp_jws_time("2024-01-01T24:00:00Z", &t), -1);
	assert_int_equal(tpp_jws_time("2024-01-01T00:00:00+01:00", &t), -1);
	assert_int_equal(tpp_jws_time("2024-01-01T00:00:00.Z", &t), -1);
	assert_int_equal(tpp_jws_time("2024-01-01T00:00:00", &t), -1);
}

static void
test_httpdate(void **state)
{
	int64_t	t;
	(void)state;

	/* What the date header must look like; Python's formatdate. */
	assert_int_equal(httpdate_parse("Sun, 06 Nov 1994 08:49:37 GMT", &t),
	    0);
	assert_int_equal(t, 784111777);
	assert_int_equal(httpdate_parse("Sunday, 06-Nov-94 08:49:37 GMT", &t),
	    -1);
	assert_int_equal(httpdate_parse("Sun Nov  6 08:49:37 1994", &t), -1);
	assert_int_equal(httpdate_parse("Mon, 06 Nov 1994 08:49:37 GMT", &t),
	    -1);
}

static void
test_sig_rules(void **state)
{
	struct tt_req	 r = { 0 };
	const char	*ok[] = { "digest", "x-request-id", "date" };
	const char	*nodig[] = { "x-request-id", "date" };
	const char	*nodate[] = { "digest", "x-request-id" };
	const char	*twice[] = { "digest", "x-request-id", "digest" };
	const char	*psu[] = { "digest", "x-request-id", "psu-id" };
	char		 out[256];
	(void)state;

	tt_add(&r, "Digest", "SHA-256=x");
	tt_add(&r, "X-Request-ID", "id");
	tt_add(&r, "Date", "d");
	assert_int_equal(tpp_sig_rules(ok, 3, 1, tt_header, &r, err,
	    sizeof(err)), 0);
	assert_int_equal(tpp_sig_rules(nodig, 2, 1, tt_header, &r, err,
	    sizeof(err)), -1);
	assert_int_equal(tpp_sig_rules(twice, 3, 1, tt_header, &r, err,
	    sizeof(err)), -1);
	/* date: required for draft-cavage (need_date), not for a JWS. */
	assert_int_equal(tpp_sig_rules(nodate, 2, 1, tt_header, &r, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "date"));
	assert_int_equal(tpp_sig_rules(nodate, 2, 0, tt_header, &r, err,
	    sizeof(err)), 0);
	tt_add(&r, "PSU-ID", "anna");
	assert_int_equal(tpp_sig_rules(ok, 3, 1, tt_header, &r, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "psu-id"));
	assert_int_equal(tpp_sig_string(psu, 3, tt_header, &r, "GET", "/p",
	    out, sizeof(out), err, sizeof(err)), 47);
	assert_string_equal(out, "digest: SHA-256=x\nx-request-id: id\n"
	    "psu-id: anna");
	tt_set(&r, "PSU-ID", NULL);
	assert_int_equal(tpp_sig_string(psu, 3, tt_header, &r, "GET", "/p",
	    out, sizeof(out), err, sizeof(err)), -1);
	{
		const char *rt[] = { "(request-target)", "digest" };

		assert_true(tpp_sig_string(rt, 2, tt_header, &r, "GET",
		    "/a?b=1", out, sizeof(out), err, sizeof(err)) > 0);
		assert_string_equal(out, "(request-target): get /a?b=1\n"
		    "digest: SHA-256=x");
	}
	assert_int_equal(tpp_sig_string(ok, 3, tt_header, &r, "GET", "/p",
	    out, 10, err, sizeof(err)), -1);
	tt_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest_good),
		cmocka_unit_test(test_digest_bad),
		cmocka_unit_test(test_sighdr_good),
		cmocka_unit_test(test_sighdr_bad),
		cmocka_unit_test(test_sighdr_is_jws),
		cmocka_unit_test(test_keyid_parse),
		cmocka_unit_test(test_keyid_bad),
		cmocka_unit_test(test_keyid_matches),
		cmocka_unit_test(test_qc_parse),
		cmocka_unit_test(test_cert_fields),
		cmocka_unit_test(test_org_id),
		cmocka_unit_test(test_cert_decode),
		cmocka_unit_test(test_jws_parse),
		cmocka_unit_test(test_jws_bad),
		cmocka_unit_test(test_jws_time),
		cmocka_unit_test(test_httpdate),
		cmocka_unit_test(test_sig_rules),
	};

	return (cmocka_run_group_tests_name("tpp_parsers", tests, NULL, NULL));
}
