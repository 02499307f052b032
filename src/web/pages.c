/*
 * Page rendering: the template set and translations are built once in the
 * parent process (pages_init) and shared read-only by the workers.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "build/embedded.h"
#include "common/encoding.h"
#include "web/i18n_pick.h"
#include "web/pages.h"
#include "web/template.h"

#define LANG_COOKIE	"psd2_lang"

static const char	*pages_langs[] = { "en", "de", "nl" };
static json_t		*pages_dicts[3];
static struct template_set	pages_set;
static const char	*pages_css;
static size_t		 pages_css_len;
static const char	*pages_js;	/* passkey.js: WebAuthn's calls */
static size_t		 pages_js_len;

int	page_asset_css(struct http_request *);
int	page_asset_js(struct http_request *);

static int
pages_load_embedded(const struct embedded_file *f)
{
	char		 name[128];
	const char	*base, *dot;
	json_error_t	 jerr;
	size_t		 i;

	if (strncmp(f->name, "templates/", 10) == 0) {
		base = f->name + 10;
		dot = strrchr(base, '.');
		snprintf(name, sizeof(name), "%.*s", (int)(dot - base), base);
		if (template_register(&pages_set, name, (const char *)f->data,
		    f->len) == -1) {
			kore_log(LOG_ERR, "template %s does not compile",
			    f->name);
			return (-1);
		}
		return (0);
	}
	if (strcmp(f->name, "assets/style.css") == 0) {
		pages_css = (const char *)f->data;
		pages_css_len = f->len;
		return (0);
	}
	if (strcmp(f->name, "assets/passkey.js") == 0) {
		pages_js = (const char *)f->data;
		pages_js_len = f->len;
		return (0);
	}
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "assets/i18n/%s.json",
		    pages_langs[i]);
		if (strcmp(f->name, name) != 0)
			continue;
		pages_dicts[i] = json_loadb((const char *)f->data, f->len, 0,
		    &jerr);
		if (pages_dicts[i] == NULL) {
			kore_log(LOG_ERR, "%s:%d: %s", f->name, jerr.line,
			    jerr.text);
			return (-1);
		}
	}
	return (0);
}

int
pages_init(void)
{
	size_t		i;
	const char	*key;
	json_t		*value;

	template_set_init(&pages_set);
	for (i = 0; i < embedded_count; i++) {
		if (pages_load_embedded(&embedded_files[i]) == -1)
			return (-1);
	}
	if (template_set_validate(&pages_set) == -1) {
		kore_log(LOG_ERR, "templates: %s", pages_set.error);
		return (-1);
	}
	for (i = 0; i < 3; i++) {
		if (pages_dicts[i] == NULL)
			return (-1);
	}
	/* Every language must translate every English key. */
	json_object_foreach(pages_dicts[0], key, value) {
		for (i = 1; i < 3; i++) {
			if (json_object_get(pages_dicts[i], key) == NULL) {
				kore_log(LOG_ERR, "%s: no translation of %s",
				    pages_langs[i], key);
				return (-1);
			}
		}
	}
	return (pages_css != NULL && pages_js != NULL ? 0 : -1);
}

static int
pages_lang_index(const char *lang)
{
	size_t	i;

	for (i = 0; i < 3; i++) {
		if (strcmp(lang, pages_langs[i]) == 0)
			return ((int)i);
	}
	return (0);
}

const char *
pages_lang(struct http_request *req)
{
	char		*explicit_choice;
	const char	*accept;

	explicit_choice = NULL;
	if (!http_argument_get_string(req, "lang", &explicit_choice)) {
		http_populate_cookies(req);
		if (!http_request_cookie(req, LANG_COOKIE, &explicit_choice))
			explicit_choice = NULL;
	}
	if (!http_request_header(req, "accept-language", &accept))
		accept = NULL;
	return (i18n_pick(accept, explicit_choice));
}

const char *
pages_text(struct http_request *req, const char *key)
{
	json_t	*v;

	v = json_object_get(pages_dicts[pages_lang_index(pages_lang(req))],
	    key);
	return (v ? json_string_value(v) : key);
}

/* The query string minus any lang= parameter (a switch replaces it). */
static void
pages_query_without_lang(const char *in, char *out, size_t len)
{
	const char	*p, *end;
	size_t		 n, used;

	out[0] = '\0';
	used = 0;
	for (p = in ? in : ""; *p != '\0'; p = *end ? end + 1 : end) {
		end = p + strcspn(p, "&");
		n = (size_t)(end - p);
		if (n == 0 || strncmp(p, "lang=", 5) == 0)
			continue;
		if (used + n + 2 > len)
			break;
		if (used > 0)
			out[used++] = '&';
		memcpy(out + used, p, n);
		used += n;
		out[used] = '\0';
	}
}

/*
 * Links to the same page in each language. Only GET (and HEAD) pages get
 * them: a page answering a POST carries the language in its forms
 * instead, and a link would leave the flow.
 */
static json_t *
pages_switch_links(struct http_request *req, const char *current)
{
	json_t		*links;
	char		 query[4096], url[8192];
	size_t		 i;
	int		 len;

	links = json_array();
	if (req->method != HTTP_METHOD_GET && req->method != HTTP_METHOD_HEAD)
		return (links);
	pages_query_without_lang(req->query_string, query, sizeof(query));
	for (i = 0; i < 3; i++) {
		len = snprintf(url, sizeof(url), "%s?%s%slang=%s", req->path,
		    query, query[0] != '\0' ? "&" : "", pages_langs[i]);
		if (len < 0 || (size_t)len >= sizeof(url))
			continue;
		json_array_append_new(links, json_pack("{s:s, s:s, s:b}",
		    "code", pages_langs[i], "href", url, "current",
		    strcmp(current, pages_langs[i]) == 0));
	}
	return (links);
}

void
pages_render(struct http_request *req, int status, const char *name,
    json_t *ctx)
{
	const char	*lang;
	char		*html, cookie[16];
	size_t		 len;
	int		 idx;

	lang = pages_lang(req);
	idx = pages_lang_index(lang);
	json_object_set(ctx, "t", pages_dicts[idx]);
	json_object_set_new(ctx, "lang", json_string(lang));
	json_object_set_new(ctx, "langs", pages_switch_links(req, lang));

	if (template_render(&pages_set, name, ctx, &html, &len) == -1) {
		json_decref(ctx);
		respond_server_error(req, "template_render");
		return;
	}
	json_decref(ctx);
	snprintf(cookie, sizeof(cookie), "%s", lang);
	respond_set_cookie(req, LANG_COOKIE, cookie, "/", 365 * 86400);
	respond_html(req, status, html, len);
	free(html);
}

void
pages_message(struct http_request *req, int status, const char *title_key,
    const char *text_key)
{
	pages_render(req, status, "message", json_pack("{s:s, s:s, s:s}",
	    "title", pages_text(req, title_key),
	    "text", pages_text(req, text_key), "id", text_key));
}

int
page_asset_css(struct http_request *req)
{
	respond_raw(req, 200, "text/css; charset=utf-8", pages_css,
	    pages_css_len);
	return (KORE_RESULT_OK);
}

int
page_asset_js(struct http_request *req)
{
	respond_raw(req, 200, "text/javascript; charset=utf-8", pages_js,
	    pages_js_len);
	return (KORE_RESULT_OK);
}
