/*
 * A request's KPI class by its path prefix. The PSU pages are the
 * bank's customer interface that RTS Art. 32 compares the dedicated
 * interface with: login, consent and payment pages. /auth/oauth/consent
 * is the PSU's consent page, not the TPP's OAuth, so it is looked up
 * before the OAuth prefix.
 */
#include <stddef.h>
#include <string.h>

#include "metrics/kpi_class.h"

struct kpi_prefix {
	const char	*prefix;
	int		 exact;		/* the whole path, not a prefix */
	enum kpi_class	 class;
};

/* First match wins. */
static const struct kpi_prefix	kpi_prefixes[] = {
	{ "/auth/oauth/consent", 1, KPI_PSU_PAGES },
	{ "/auth/oauth/", 0, KPI_OAUTH },
	{ "/.well-known/oauth-authorization-server", 1, KPI_OAUTH },
	{ "/auth/v1/psd2/openapi.json", 1, KPI_NONE },
	{ "/auth/v1/psd2/account/", 0, KPI_AIS },
	{ "/auth/v1/psd2/consents/", 0, KPI_AIS },
	{ "/auth/v1/psd2/payments/", 0, KPI_PIS },
	{ "/auth/v1/psd2/funds-confirmations", 1, KPI_FUNDS },
	{ "/xs2a/v1/consents", 0, KPI_AIS },
	{ "/xs2a/v1/accounts", 0, KPI_AIS },
	{ "/xs2a/v1/card-accounts", 0, KPI_AIS },
	{ "/xs2a/v1/payments/", 0, KPI_PIS },
	{ "/xs2a/v1/periodic-payments/", 0, KPI_PIS },
	{ "/xs2a/v1/bulk-payments/", 0, KPI_PIS },
	{ "/xs2a/v1/signing-baskets", 0, KPI_PIS },
	{ "/xs2a/v1/funds-confirmations", 1, KPI_FUNDS },
	{ "/auth/login", 0, KPI_PSU_PAGES },
	{ "/auth/consents", 0, KPI_PSU_PAGES },
	{ "/auth/payments", 0, KPI_PSU_PAGES },
};

static const char	*kpi_class_names[KPI_CLASSES + 1] = {
	"oauth", "ais", "pis", "funds", "psu_pages", "none"
};

static const char	*kpi_cause_names[KPI_CAUSES] = {
	"none", "bank", "tpp", "psu"
};

enum kpi_class
kpi_class_of(const char *path)
{
	size_t		i, len;

	if (path == NULL)
		return (KPI_NONE);
	for (i = 0; i < sizeof(kpi_prefixes) / sizeof(kpi_prefixes[0]); i++) {
		len = strlen(kpi_prefixes[i].prefix);
		if (strncmp(path, kpi_prefixes[i].prefix, len) != 0)
			continue;
		if (kpi_prefixes[i].exact && path[len] != '\0')
			continue;
		return (kpi_prefixes[i].class);
	}
	return (KPI_NONE);
}

enum kpi_cause
kpi_cause_of(enum kpi_class class, int status)
{
	if (status >= 500)
		return (KPI_CAUSE_BANK);
	if (status < 400)
		return (KPI_CAUSE_NONE);
	if (class == KPI_PSU_PAGES)
		return (KPI_CAUSE_PSU);
	return (KPI_CAUSE_TPP);
}

const char *
kpi_class_name(enum kpi_class class)
{
	if ((int)class < 0 || class > KPI_CLASSES)
		return (kpi_class_names[KPI_NONE]);
	return (kpi_class_names[class]);
}

const char *
kpi_cause_name(enum kpi_cause cause)
{
	if ((int)cause < 0 || cause >= KPI_CAUSES)
		return (kpi_cause_names[KPI_CAUSE_NONE]);
	return (kpi_cause_names[cause]);
}
