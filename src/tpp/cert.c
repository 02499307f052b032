/*
 * Certificate header decoding, the PSD2 QCStatement and the subject's
 * organizationIdentifier. The QCStatement is decoded with OpenSSL's
 * template DER decoder (ASN1_item_d2i), which is strict and bounded.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/asn1t.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/encoding.h"
#include "tpp/cert.h"
#include "tpp/tpp.h"

#define OID_QCSTATEMENTS	"1.3.6.1.5.5.7.1.3"
#define OID_PSD2_QCTYPE		"0.4.0.19495.2"
#define OID_PSD2_ROLE_ARC	"0.4.0.19495.1."

/* RoleOfPSP ::= SEQUENCE { roleOfPspOid OID, roleOfPspName UTF8String } */
typedef struct {
	ASN1_OBJECT	*oid;
	ASN1_UTF8STRING	*name;
} PSD2_ROLE;

DEFINE_STACK_OF(PSD2_ROLE)

ASN1_SEQUENCE(PSD2_ROLE) = {
	ASN1_SIMPLE(PSD2_ROLE, oid, ASN1_OBJECT),
	ASN1_SIMPLE(PSD2_ROLE, name, ASN1_UTF8STRING)
} static_ASN1_SEQUENCE_END(PSD2_ROLE)

/* PSD2QCType ::= SEQUENCE { rolesOfPSP, nCAName, nCAId } */
typedef struct {
	STACK_OF(PSD2_ROLE)	*roles;
	ASN1_UTF8STRING		*nca_name;
	ASN1_UTF8STRING		*nca_id;
} PSD2_QCTYPE;

ASN1_SEQUENCE(PSD2_QCTYPE) = {
	ASN1_SEQUENCE_OF(PSD2_QCTYPE, roles, PSD2_ROLE),
	ASN1_SIMPLE(PSD2_QCTYPE, nca_name, ASN1_UTF8STRING),
	ASN1_SIMPLE(PSD2_QCTYPE, nca_id, ASN1_UTF8STRING)
} static_ASN1_SEQUENCE_END(PSD2_QCTYPE)

/* QCStatement ::= SEQUENCE { statementId OID, statementInfo ANY OPTIONAL } */
typedef struct {
	ASN1_OBJECT	*id;
	ASN1_TYPE	*info;
} QC_STATEMENT;

DEFINE_STACK_OF(QC_STATEMENT)

ASN1_SEQUENCE(QC_STATEMENT) = {
	ASN1_SIMPLE(QC_STATEMENT, id, ASN1_OBJECT),
	ASN1_OPT(QC_STATEMENT, info, ASN1_ANY)
} static_ASN1_SEQUENCE_END(QC_STATEMENT)

typedef STACK_OF(QC_STATEMENT) QC_STATEMENTS;

ASN1_ITEM_TEMPLATE(QC_STATEMENTS) =
	ASN1_EX_TEMPLATE_TYPE(ASN1_TFLG_SEQUENCE_OF, 0, statements,
	    QC_STATEMENT)
static_ASN1_ITEM_TEMPLATE_END(QC_STATEMENTS)

static const struct {
	int		 bit;
	const char	*name;
	const char	*oid;
} psd2_roles[] = {
	{ TPP_ROLE_AS, "PSP_AS", OID_PSD2_ROLE_ARC "1" },
	{ TPP_ROLE_PI, "PSP_PI", OID_PSD2_ROLE_ARC "2" },
	{ TPP_ROLE_AI, "PSP_AI", OID_PSD2_ROLE_ARC "3" },
	{ TPP_ROLE_IC, "PSP_IC", OID_PSD2_ROLE_ARC "4" },
};

int
tpp_cert_decode(const char *hdr, uint8_t *der, size_t derlen)
{
	static const char	begin[] = "-----BEGIN CERTIFICATE-----";
	static const char	end[] = "-----END CERTIFICATE-----";
	char			text[TPP_CERT_DER_MAX / 3 * 4 + 8];
	const char		*p, *stop;
	size_t			 n;

	p = hdr;
	stop = hdr + strlen(hdr);
	while (p < stop && isspace((unsigned char)*p))
		p++;
	if ((size_t)(stop - p) >= sizeof(begin) - 1 &&
	    memcmp(p, begin, sizeof(begin) - 1) == 0) {
		p += sizeof(begin) - 1;
		if ((stop = strstr(p, end)) == NULL)
			return (-1);
		for (n = (stop - hdr) + sizeof(end) - 1; hdr[n] != '\0'; n++)
			if (!isspace((unsigned char)hdr[n]))
				return (-1);
	}
	/* Whitespace (PEM line breaks folded into spaces) is dropped. */
	for (n = 0; p < stop; p++) {
		if (isspace((unsigned char)*p))
			continue;
		if (n == sizeof(text))
			return (-1);
		text[n++] = *p;
	}
	return (base64_decode(text, n, der, derlen));
}

X509 *
tpp_cert_parse(const uint8_t *der, size_t len)
{
	const unsigned char	*p = der;
	X509			*x;

	if (len == 0 || len > TPP_CERT_DER_MAX)
		return (NULL);
	if ((x = d2i_X509(NULL, &p, len)) == NULL)
		return (NULL);
	if (p != der + len) {
		X509_free(x);
		return (NULL);
	}
	return (x);
}

static int
utf8_copy(const ASN1_STRING *s, char *out, size_t outlen)
{
	int	len;

	len = ASN1_STRING_length(s);
	if (len < 0 || (size_t)len >= outlen ||
	    memchr(ASN1_STRING_get0_data(s), '\0', len) != NULL)
		return (-1);
	memcpy(out, ASN1_STRING_get0_data(s), len);
	out[len] = '\0';
	return (0);
}

static int
qc_role_bit(const ASN1_OBJECT *oid)
{
	char	txt[64];
	size_t	i;

	if (OBJ_obj2txt(txt, sizeof(txt), oid, 1) <= 0)
		return (0);
	for (i = 0; i < sizeof(psd2_roles) / sizeof(psd2_roles[0]); i++)
		if (strcmp(txt, psd2_roles[i].oid) == 0)
			return (psd2_roles[i].bit);
	return (0);
}

static int
qc_psd2(const ASN1_TYPE *info, struct tpp_qc *out)
{
	const unsigned char	*p, *start;
	PSD2_QCTYPE		*qc;
	int			 i, len, rc;

	if (info == NULL || info->type != V_ASN1_SEQUENCE)
		return (-1);
	start = p = ASN1_STRING_get0_data(info->value.sequence);
	len = ASN1_STRING_length(info->value.sequence);
	qc = (PSD2_QCTYPE *)ASN1_item_d2i(NULL, &p, len,
	    ASN1_ITEM_rptr(PSD2_QCTYPE));
	if (qc == NULL)
		return (-1);
	rc = -1;
	if (p != start + len)
		goto done;
	out->roles = 0;
	for (i = 0; i < sk_PSD2_ROLE_num(qc->roles); i++)
		out->roles |= qc_role_bit(sk_PSD2_ROLE_value(qc->roles, i)->oid);
	if (out->roles == 0 ||
	    utf8_copy(qc->nca_name, out->nca_name, sizeof(out->nca_name)) ||
	    utf8_copy(qc->nca_id, out->nca_id, sizeof(out->nca_id)))
		goto done;
	rc = 0;
done:
	ASN1_item_free((ASN1_VALUE *)qc, ASN1_ITEM_rptr(PSD2_QCTYPE));
	return (rc);
}

int
tpp_qc_parse(const uint8_t *der, size_t len, struct tpp_qc *out)
{
	const unsigned char	*p = der;
	QC_STATEMENTS		*sts;
	QC_STATEMENT		*st;
	ASN1_OBJECT		*psd2;
	int			 i, rc, found;

	memset(out, 0, sizeof(*out));
	if (len == 0 || len > TPP_CERT_DER_MAX)
		return (-1);
	sts = (QC_STATEMENTS *)ASN1_item_d2i(NULL, &p, len,
	    ASN1_ITEM_rptr(QC_STATEMENTS));
	if (sts == NULL)
		return (-1);
	if ((psd2 = OBJ_txt2obj(OID_PSD2_QCTYPE, 1)) == NULL) {
		ASN1_item_free((ASN1_VALUE *)sts, ASN1_ITEM_rptr(QC_STATEMENTS));
		return (-1);
	}
	rc = p == der + len ? 1 : -1;
	found = 0;
	for (i = 0; rc == 1 && i < sk_QC_STATEMENT_num(sts); i++) {
		st = sk_QC_STATEMENT_value(sts, i);
		if (OBJ_cmp(st->id, psd2) != 0)
			continue;
		/* Two PSD2 statements could disagree: refuse, never pick. */
		if (found++ || qc_psd2(st->info, out) == -1)
			rc = -1;
	}
	if (rc == 1 && found)
		rc = 0;
	ASN1_OBJECT_free(psd2);
	ASN1_item_free((ASN1_VALUE *)sts, ASN1_ITEM_rptr(QC_STATEMENTS));
	if (rc != 0)
		out->roles = 0;
	return (rc);
}

int
tpp_cert_qc(X509 *x, struct tpp_qc *out)
{
	ASN1_OBJECT		*oid;
	X509_EXTENSION		*ext;
	const ASN1_OCTET_STRING	*val;
	int			 idx;

	memset(out, 0, sizeof(*out));
	if ((oid = OBJ_txt2obj(OID_QCSTATEMENTS, 1)) == NULL)
		return (-1);
	idx = X509_get_ext_by_OBJ(x, oid, -1);
	if (idx >= 0 && X509_get_ext_by_OBJ(x, oid, idx) >= 0)
		idx = -2;	/* the extension twice */
	ASN1_OBJECT_free(oid);
	if (idx == -1)
		return (1);
	if (idx < 0 || (ext = X509_get_ext(x, idx)) == NULL)
		return (-1);
	val = X509_EXTENSION_get_data(ext);
	return (tpp_qc_parse(ASN1_STRING_get0_data(val),
	    ASN1_STRING_length(val), out));
}

int
tpp_cert_org_id(X509 *x, char *out, size_t outlen)
{
	const X509_NAME		*subj;
	X509_NAME_ENTRY		*e;
	unsigned char		*utf8;
	int			 idx, len;

	subj = X509_get_subject_name(x);
	idx = X509_NAME_get_index_by_NID(subj, NID_organizationIdentifier, -1);
	if (idx < 0 || X509_NAME_get_index_by_NID(subj,
	    NID_organizationIdentifier, idx) >= 0)
		return (-1);
	e = X509_NAME_get_entry(subj, idx);
	if ((len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e))) < 0)
		return (-1);
	if ((size_t)len >= outlen || memchr(utf8, '\0', len) != NULL) {
		OPENSSL_free(utf8);
		return (-1);
	}
	memcpy(out, utf8, len);
	out[len] = '\0';
	OPENSSL_free(utf8);
	return (0);
}

int
tpp_org_id_valid(const char *s)
{
	size_t	i, n;

	/* PSD + two-letter country + '-' */
	if (strncmp(s, "PSD", 3) != 0 || !isupper((unsigned char)s[3]) ||
	    !isupper((unsigned char)s[4]) || s[5] != '-')
		return (0);
	for (i = 6, n = 0; isupper((unsigned char)s[i]); i++)
		n++;
	if (n < 2 || n > 8 || s[i] != '-' || s[i + 1] == '\0')
		return (0);
	for (i++; s[i] != '\0'; i++)
		if (!isprint((unsigned char)s[i]))
			return (0);
	return (1);
}

int
tpp_cert_can_sign(X509 *x)
{
	uint32_t	ku;

	/* QSealCs usually carry nonRepudiation, some digitalSignature. */
	ku = X509_get_key_usage(x);
	return (ku == UINT32_MAX ||
	    (ku & (KU_DIGITAL_SIGNATURE | KU_NON_REPUDIATION)) != 0);
}

const char *
tpp_role_name(int bit)
{
	size_t	i;

	for (i = 0; i < sizeof(psd2_roles) / sizeof(psd2_roles[0]); i++)
		if (psd2_roles[i].bit == bit)
			return (psd2_roles[i].name);
	return (NULL);
}

void
tpp_roles_format(int roles, char *out, size_t outlen)
{
	size_t	i, off;

	out[0] = '\0';
	for (i = 0, off = 0; i < sizeof(psd2_roles) / sizeof(psd2_roles[0]);
	    i++) {
		if (!(roles & psd2_roles[i].bit) || off >= outlen)
			continue;
		off += snprintf(out + off, outlen - off, "%s%s",
		    off ? " " : "", psd2_roles[i].name);
	}
	if (out[0] == '\0')
		snprintf(out, outlen, "none");
}
