/*
 * Input of the payment endpoints, checked precisely in C before the one
 * query: products, amounts (decimal text into integer minor units, never
 * a double), and the initiation body (IBANs with their MOD 97-10 check,
 * ISO 4217 and EUR, the creditor name as the device will show and sign
 * it, the remittance by the rule for every text people read), and on
 * the standard's paths its members (every one executed as asked, or the
 * body refused) and requestedExecutionDate.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <kore.h>
#include <http.h>

#include <jansson.h>

#include "ais/ais.h"
#include "common/money.h"
#include "common/devcur.h"
#include "common/devtext.h"
#include "common/iban.h"
#include "common/textrule.h"
#include "pis/pis.h"
#include "pis/pis_input.h"

/* At most 9 integer digits and 2 decimals: 999999999.99. */
#define PIS_AMOUNT_MAX		INT64_C(99999999999)
#define PIS_AMOUNT_DEC_MAX	2
#define PIS_REMITTANCE_MAX	140
#define PIS_URI_MAX		2048

static const char *const pis_products[] = {
	"sepa-credit-transfers",
	"instant-sepa-credit-transfers",
};

int
pis_product_known(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < sizeof(pis_products) / sizeof(pis_products[0]); i++) {
		if (strlen(pis_products[i]) == len &&
		    memcmp(pis_products[i], s, len) == 0)
			return (1);
	}
	return (0);
}

int
pis_amount_parse(const char *s, int64_t *minor)
{
	int64_t		v;

	/* money_parse's decimals; a sign or a leading zero ("01.00") is
	   refused here, as is anything not above zero. */
	if (s[0] == '-' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return (-1);
	if (money_parse(s, PIS_AMOUNT_DEC_MAX, &v) == -1 || v <= 0 ||
	    v > PIS_AMOUNT_MAX)
		return (-1);
	*minor = v;
	return (0);
}

/* A string member of an object member: doc.outer.inner. */
static const char *
pis_member(json_t *doc, const char *outer, const char *inner, size_t *len)
{
	json_t	*o, *v;

	if (!json_is_object(o = json_object_get(doc, outer)))
		return (NULL);
	if (!json_is_string(v = json_object_get(o, inner)))
		return (NULL);
	*len = json_string_length(v);
	return (json_string_value(v));
}

static int
pis_iban(struct xs2a_call *c, json_t *doc, const char *outer,
    char out[PIS_IBAN_MAX + 1])
{
	const char	*s;
	size_t		 len;

	s = pis_member(doc, outer, "iban", &len);
	if (s == NULL || !iban_valid(s, len) || len > PIS_IBAN_MAX) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", outer[0] == 'd' ?
		    "debtorAccount.iban" : "creditorAccount.iban",
		    "%s.iban must be an IBAN (electronic format, upper case, "
		    "valid check digits).", outer);
		return (-1);
	}
	memcpy(out, s, len + 1);
	return (0);
}

static int
pis_amount(struct xs2a_call *c, json_t *doc, struct pis_payment_in *in)
{
	const char	*cur, *amt;
	size_t		 len;

	cur = pis_member(doc, "instructedAmount", "currency", &len);
	if (cur == NULL || len != 3 || money_currency_exponent(cur) < 0) {
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "instructedAmount.currency",
		    "instructedAmount.currency must be an ISO 4217 code.");
		return (-1);
	}
	/* Both SEPA products are EUR only (and EUR is displayable). */
	if (strcmp(cur, "EUR") != 0 || !devcur_displayable(cur)) {
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "instructedAmount.currency",
		    "instructedAmount.currency: %s takes EUR only.",
		    in->product);
		return (-1);
	}
	memcpy(in->currency, cur, 4);
	amt = pis_member(doc, "instructedAmount", "amount", &len);
	if (amt == NULL || strlen(amt) != len ||
	    pis_amount_parse(amt, &in->amount_minor) == -1) {
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "instructedAmount.amount",
		    "instructedAmount.amount must be a decimal string greater "
		    "than 0 with at most 2 decimals and at most 999999999.99.");
		return (-1);
	}
	return (0);
}

static int
pis_name(struct xs2a_call *c, json_t *doc, struct pis_payment_in *in)
{
	json_t	*v;
	size_t	 n;
	int	 rc;

	v = json_object_get(doc, "creditorName");
	if (!json_is_string(v)) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "creditorName",
		    "creditorName is required (a string).");
		return (-1);
	}
	rc = json_string_length(v) > DEVTEXT_INPUT_MAX ? DEVTEXT_LENGTH :
	    devtext_payee_normalize(json_string_value(v),
	    json_string_length(v), in->name, sizeof(in->name), &n);
	if (rc != DEVTEXT_OK) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "creditorName",
		    "creditorName: %s.", devtext_error(rc));
		return (-1);
	}
	return (0);
}

/* The rule for every text people read (src/common/textrule.h). */
static int
pis_remittance(struct xs2a_call *c, json_t *doc, struct pis_payment_in *in)
{
	json_t	*v;
	char	 out[2 * PIS_REMITTANCE_MAX + 1], why[TEXTRULE_ERROR_MAX];
	size_t	 n;
	int	 rc;

	v = json_object_get(doc, "remittanceInformationUnstructured");
	if (v == NULL || json_is_null(v))
		return (0);
	rc = !json_is_string(v) ? DEVTEXT_LENGTH :
	    textrule_check(json_string_value(v), json_string_length(v),
	    PIS_REMITTANCE_MAX, out, sizeof(out), &n);
	if (rc != DEVTEXT_OK) {
		textrule_error(rc, PIS_REMITTANCE_MAX, why, sizeof(why));
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "remittanceInformationUnstructured",
		    "remittanceInformationUnstructured: %s%s.", why,
		    json_is_string(v) ? "" : " (a string)");
		return (-1);
	}
	in->remittance = kore_strdup(out);
	return (0);
}

/* The members of a single payment this bank takes (both products). */
static const char *const pis_members[] = {
	"instructedAmount", "debtorAccount", "creditorAccount", "creditorName",
	"remittanceInformationUnstructured", "requestedExecutionDate",
};

/* Members 1.3.11 defines for a single SEPA payment that it does not. */
static const char *const pis_members_not_offered[] = {
	"endToEndIdentification", "instructionIdentification", "debtorName",
	"ultimateDebtor", "creditorAgent", "creditorAgentName",
	"creditorAddress", "creditorId", "ultimateCreditor", "purposeCode",
	"chargeBearer", "remittanceInformationUnstructuredArray",
	"remittanceInformationStructured",
	"remittanceInformationStructuredArray",
};

/* Account reference members 1.3.11 defines besides iban and currency. */
static const char *const pis_refs_not_offered[] = {
	"bban", "pan", "maskedPan", "msisdn", "other", "cashAccountType",
};

static int
pis_word_in(const char *word, const char *const *list, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strcmp(word, list[i]) == 0)
			return (1);
	}
	return (0);
}

#define PIS_IN(w, l)	pis_word_in((w), (l), sizeof(l) / sizeof((l)[0]))

/*
 * An account reference of the standard's body: iban, and currency (EUR:
 * both products are SEPA). 0, or -1 with the input error recorded.
 */
static int
pis_standard_reference(struct xs2a_call *c, json_t *doc, const char *outer)
{
	const char	*key;
	json_t		*ref, *v;
	char		 path[64];

	if (!json_is_object(ref = json_object_get(doc, outer)))
		return (0);	/* pis_iban() answers it */
	json_object_foreach(ref, key, v) {
		snprintf(path, sizeof(path), "%s.%s", outer, key);
		if (strcmp(key, "iban") == 0)
			continue;
		if (strcmp(key, "currency") == 0) {
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), "EUR") == 0)
				continue;
			xs2a_input_error(c, 400, "FORMAT_ERROR", path,
			    "%s: SEPA credit transfers take EUR accounts "
			    "only.", path);
			return (-1);
		}
		if (PIS_IN(key, pis_refs_not_offered))
			xs2a_input_error(c, 400, "PARAMETER_NOT_SUPPORTED",
			    path, "%s is not supported: accounts are named by "
			    "iban here.", path);
		else
			xs2a_input_error(c, 400, "FORMAT_ERROR", path,
			    "%s is not a member of an account reference.",
			    path);
		return (-1);
	}
	return (0);
}

/*
 * The standard's body holds only what this bank executes as asked: a
 * member the guidelines define but the bank does not offer (structured
 * remittance, an end-to-end id, ...) is PARAMETER_NOT_SUPPORTED, never
 * ignored; one they do not define is a FORMAT_ERROR.
 */
static int
pis_standard_members(struct xs2a_call *c, json_t *doc)
{
	const char	*key;
	json_t		*v;

	json_object_foreach(doc, key, v) {
		if (PIS_IN(key, pis_members))
			continue;
		if (PIS_IN(key, pis_members_not_offered))
			xs2a_input_error(c, 400, "PARAMETER_NOT_SUPPORTED",
			    key, "%s is not supported by this bank.", key);
		else
			xs2a_input_error(c, 400, "FORMAT_ERROR", key,
			    "%.40s is not a member of a payment initiation.",
			    key);
		return (-1);
	}
	if (pis_standard_reference(c, doc, "debtorAccount") == -1 ||
	    pis_standard_reference(c, doc, "creditorAccount") == -1)
		return (-1);
	return (0);
}

/*
 * requestedExecutionDate of the standard's body: a date, checked against
 * the bank's calendar in SQL (pis_initiate: today to 90 days ahead).
 */
static int
pis_execution_date(struct xs2a_call *c, json_t *doc,
    struct pis_payment_in *in)
{
	json_t	*v;

	v = json_object_get(doc, "requestedExecutionDate");
	if (v == NULL)
		return (0);
	if (!json_is_string(v) || json_string_length(v) != 10 ||
	    !ais_date_valid(json_string_value(v))) {
		xs2a_input_error(c, 400, "FORMAT_ERROR",
		    "requestedExecutionDate", "requestedExecutionDate must be "
		    "a date (YYYY-MM-DD).");
		return (-1);
	}
	memcpy(in->execution_date, json_string_value(v), 11);
	return (0);
}

int
pis_payment_parse(struct xs2a_call *c, const char *body, size_t len,
    struct pis_payment_in *in)
{
	json_t		*doc;
	json_error_t	 jerr;
	int		 rc;

	doc = body ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) :
	    NULL;
	if (doc == NULL || !json_is_object(doc)) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "body",
		    "The body must be a JSON object with instructedAmount, "
		    "debtorAccount, creditorAccount and creditorName.");
		if (doc != NULL)
			json_decref(doc);
		return (-1);
	}
	rc = -1;
	if (in->standard && (pis_standard_members(c, doc) == -1 ||
	    pis_execution_date(c, doc, in) == -1)) {
		json_decref(doc);
		return (-1);
	}
	if (pis_amount(c, doc, in) == 0 &&
	    pis_iban(c, doc, "debtorAccount", in->debtor) == 0 &&
	    pis_iban(c, doc, "creditorAccount", in->creditor) == 0 &&
	    pis_name(c, doc, in) == 0 && pis_remittance(c, doc, in) == 0)
		rc = 0;
	json_decref(doc);
	return (rc);
}

/* "true" or "false" (any case); absent is false. */
static int
pis_bool_header(struct xs2a_call *c, struct http_request *req,
    const char *name, const char *label, int *out)
{
	const char	*v;

	*out = 0;
	if (!http_request_header(req, name, &v))
		return (0);
	if (strcasecmp(v, "true") == 0) {
		*out = 1;
		return (0);
	}
	if (strcasecmp(v, "false") == 0)
		return (0);
	xs2a_input_error(c, 400, "FORMAT_ERROR", label,
	    "%s must be true or false.", label);
	return (-1);
}

static int
pis_uri_header(struct xs2a_call *c, struct http_request *req,
    const char *name, const char *label, const char **out)
{
	const char	*v;
	size_t		 i, len;

	*out = NULL;
	if (!http_request_header(req, name, &v))
		return (0);
	len = strlen(v);
	for (i = 0; i < len; i++) {
		if ((unsigned char)v[i] <= 0x20 || v[i] == 0x7f)
			break;
	}
	if (len == 0 || len > PIS_URI_MAX || i != len) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", label,
		    "%s must be a URI (at most %d characters).", label,
		    PIS_URI_MAX);
		return (-1);
	}
	*out = v;
	return (0);
}

int
pis_sca_headers(struct xs2a_call *c, struct http_request *req,
    struct pis_payment_in *in)
{
	int	redirect_preferred;

	if (pis_bool_header(c, req, "tpp-redirect-preferred",
	    "TPP-Redirect-Preferred", &redirect_preferred) == -1 ||
	    pis_bool_header(c, req, "tpp-decoupled-preferred",
	    "TPP-Decoupled-Preferred", &in->decoupled) == -1 ||
	    pis_uri_header(c, req, "tpp-redirect-uri", "TPP-Redirect-URI",
	    &in->redirect_uri) == -1 ||
	    pis_uri_header(c, req, "tpp-nok-redirect-uri",
	    "TPP-Nok-Redirect-URI", &in->nok_redirect_uri) == -1)
		return (-1);
	return (0);
}
