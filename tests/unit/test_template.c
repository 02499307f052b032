/*
 * Unit tests for src/web/template.c: escaping, values, sections, the
 * context stack, partials, every compile and render error, UTF-8, speed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <jansson.h>

#include "template.h"

static int
setup(void **state)
{
	struct template_set	*set;

	if ((set = malloc(sizeof(*set))) == NULL)
		return (-1);
	template_set_init(set);
	*state = set;
	return (0);
}

static int
teardown(void **state)
{
	template_set_free(*state);
	free(*state);
	return (0);
}

static int
reg(struct template_set *set, const char *name, const char *text)
{
	return (template_register(set, name, text, strlen(text)));
}

/* Renders text (registered under a fresh name) against json. */
static void
expect(struct template_set *set, const char *text, const char *json,
    const char *want)
{
	static int	 seq;
	char		 name[32], *out;
	size_t		 outlen;
	json_t		*ctx;
	json_error_t	 jerr;

	snprintf(name, sizeof(name), "t%d", seq++);
	ctx = json != NULL ? json_loads(json, JSON_DECODE_ANY, &jerr) : NULL;
	if (json != NULL)
		assert_non_null(ctx);
	if (reg(set, name, text) != 0)
		fail_msg("register \"%s\": %s", text, set->error);
	assert_int_equal(template_render(set, name, ctx, &out, &outlen), 0);
	assert_string_equal(out, want);
	assert_int_equal(outlen, strlen(want));
	free(out);
	json_decref(ctx);
}

static void
test_escaping(void **state)
{
	struct template_set	*set = *state;

	expect(set, "[{{s}}]", "{\"s\":\"& < > \\\" ' ` =\"}",
	    "[&amp; &lt; &gt; &quot; &#39; &#96; &#61;]");
	expect(set, "{{s}}", "{\"s\":\"<script>alert('x')</script>\"}",
	    "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
	expect(set, "<a href=\"{{u}}\">", "{\"u\":\"\\\" onclick=\\\"x\"}",
	    "<a href=\"&quot; onclick&#61;&quot;x\">");
	expect(set, "{{s}}", "{\"s\":\"&&amp;\"}", "&amp;&amp;amp;");
	/* Template text itself is never touched. */
	expect(set, "<b>&amp;'\"=</b>{{s}}", "{\"s\":\"ok\"}",
	    "<b>&amp;'\"=</b>ok");
	/* Dotted and {{.}} forms escape too. */
	expect(set, "{{a.b}}|{{#l}}{{.}}{{/l}}",
	    "{\"a\":{\"b\":\"<\"},\"l\":[\">\",\"&\"]}", "&lt;|&gt;&amp;");
}

static void
test_values(void **state)
{
	struct template_set	*set = *state;

	expect(set, "[{{s}}|{{i}}|{{n}}|{{t}}|{{f}}|{{z}}|{{m}}|{{o}}|{{a}}]",
	    "{\"s\":\"str\",\"i\":1234,\"n\":-9223372036854775807,"
	    "\"t\":true,\"f\":false,\"z\":null,\"o\":{\"x\":1},\"a\":[1]}",
	    "[str|1234|-9223372036854775807|true|false||||]");
	expect(set, "{{r}}", "{\"r\":1.5}", "1.5");
	expect(set, "{{ s }}|{{\ts\t}}", "{\"s\":\"sp\"}", "sp|sp");
	expect(set, "{{s}}", NULL, "");
	expect(set, "", "{}", "");
	expect(set, "plain", NULL, "plain");
	expect(set, "{{.}}", "\"top\"", "top");
	expect(set, "a } b }} c { d", "{}", "a } b }} c { d");
}

static void
test_dotted(void **state)
{
	struct template_set	*set = *state;

	expect(set, "{{a.b.c}}", "{\"a\":{\"b\":{\"c\":\"deep\"}}}", "deep");
	expect(set, "[{{a.b.x}}]", "{\"a\":{\"b\":{\"c\":1}}}", "[]");
	expect(set, "[{{a.s.x}}]", "{\"a\":{\"s\":\"str\"}}", "[]");
	/*
	 * Only the first segment walks outward: "a.c" found "a" in the
	 * item, so the outer a.c is not used.
	 */
	expect(set, "{{#l}}[{{a.c}}]{{/l}}",
	    "{\"a\":{\"c\":\"outer\"},\"l\":[{\"a\":{\"d\":1}},{}]}",
	    "[][outer]");
	expect(set, "{{#a.b}}{{c}}{{/a.b}}", "{\"a\":{\"b\":{\"c\":\"in\"}}}",
	    "in");
}

static void
test_sections(void **state)
{
	struct template_set	*set = *state;
	const char		*accounts =
	    "{\"accounts\":[{\"iban\":\"DE01\",\"balances\":[{\"amount\":"
	    "\"1.00\"},{\"amount\":\"2.00\"}]},{\"iban\":\"NL02\","
	    "\"balances\":[]}]}";

	/* Arrays of objects, nested. */
	expect(set, "{{#accounts}}<{{iban}}:{{#balances}}({{amount}})"
	    "{{/balances}}{{^balances}}none{{/balances}}>{{/accounts}}",
	    accounts, "<DE01:(1.00)(2.00)><NL02:none>");
	/* Object: pushed once. */
	expect(set, "{{#psu}}{{name}}{{/psu}}", "{\"psu\":{\"name\":\"Anna\"}}",
	    "Anna");
	expect(set, "{{#psu}}x{{/psu}}", "{\"psu\":{}}", "x");
	/* True, non-empty string, non-zero number: once, same context. */
	expect(set, "{{#t}}{{v}}{{/t}}{{#s}}{{v}}{{/s}}{{#n}}{{v}}{{/n}}"
	    "{{#r}}{{v}}{{/r}}",
	    "{\"t\":true,\"s\":\"x\",\"n\":-1,\"r\":0.5,\"v\":\"V\"}",
	    "VVVV");
	/* Falsy: nothing. */
	expect(set, "[{{#f}}x{{/f}}{{#z}}x{{/z}}{{#m}}x{{/m}}{{#e}}x{{/e}}"
	    "{{#s}}x{{/s}}{{#n}}x{{/n}}{{#r}}x{{/r}}]",
	    "{\"f\":false,\"z\":null,\"e\":[],\"s\":\"\",\"n\":0,\"r\":0.0}",
	    "[]");
	/* Array of scalars with {{.}}. */
	expect(set, "{{#l}}{{.}},{{/l}}", "{\"l\":[1,\"two\",true,null]}",
	    "1,two,true,,");
	/* Same section name nested. */
	expect(set, "{{#a}}{{#a}}{{b}}{{/a}}{{/a}}",
	    "{\"a\":{\"a\":{\"b\":\"in\"},\"b\":\"out\"}}", "in");
	/* Section on the current item. */
	expect(set, "{{#l}}{{#.}}[{{.}}]{{/.}}{{/l}}",
	    "{\"l\":[\"a\",\"\",\"b\"]}", "[a][b]");
	/* Sibling sections and text around them. */
	expect(set, "a{{#t}}b{{/t}}c{{#f}}d{{/f}}e", "{\"t\":1,\"f\":0}",
	    "abce");
}

static void
test_inverted(void **state)
{
	struct template_set	*set = *state;

	expect(set, "{{^f}}F{{/f}}{{^z}}Z{{/z}}{{^m}}M{{/m}}{{^e}}E{{/e}}"
	    "{{^s}}S{{/s}}{{^n}}N{{/n}}",
	    "{\"f\":false,\"z\":null,\"e\":[],\"s\":\"\",\"n\":0}",
	    "FZMESN");
	expect(set, "[{{^t}}x{{/t}}{{^l}}x{{/l}}{{^o}}x{{/o}}{{^s}}x{{/s}}]",
	    "{\"t\":true,\"l\":[0],\"o\":{},\"s\":\"a\"}", "[]");
	expect(set, "{{#l}}{{^ok}}bad:{{name}} {{/ok}}{{/l}}",
	    "{\"l\":[{\"name\":\"a\",\"ok\":true},{\"name\":\"b\"}]}",
	    "bad:b ");
}

static void
test_context_stack(void **state)
{
	struct template_set	*set = *state;

	/* Missing in the item: found outside; present: shadows. */
	expect(set, "{{#l}}{{title}}:{{name}};{{/l}}",
	    "{\"title\":\"T\",\"l\":[{\"name\":\"a\"},"
	    "{\"name\":\"b\",\"title\":\"own\"}]}", "T:a;own:b;");
	/* Three levels deep reaching the root. */
	expect(set, "{{#a}}{{#b}}{{#c}}{{root}}{{x}}{{/c}}{{/b}}{{/a}}",
	    "{\"root\":\"R\",\"a\":{\"x\":\"A\",\"b\":{\"c\":[{}]}}}", "RA");
	/* A found null stops the walk (it does not fall through). */
	expect(set, "{{#l}}[{{v}}]{{/l}}",
	    "{\"v\":\"outer\",\"l\":[{\"v\":null}]}", "[]");
	/* Scalars on the stack are skipped by name lookup. */
	expect(set, "{{#l}}{{v}}{{/l}}", "{\"v\":\"o\",\"l\":[1,2]}", "oo");
}

static void
test_comments(void **state)
{
	struct template_set	*set = *state;

	expect(set, "a{{! a comment }}b{{!}}c{{! {x} { }}d", "{}", "abcd");
	expect(set, "{{!\nmulti\nline\n}}x", "{}", "x");
}

static void
test_partials(void **state)
{
	struct template_set	*set = *state;
	char			*out;
	size_t			 len;
	json_t			*ctx;

	assert_int_equal(reg(set, "layout/header", "<h1>{{title}}</h1>"), 0);
	assert_int_equal(reg(set, "item", "<li>{{name}}{{> badge}}</li>"), 0);
	assert_int_equal(reg(set, "badge", "{{#new}}*{{/new}}"), 0);
	assert_int_equal(reg(set, "page", "{{> layout/header}}<ul>{{#items}}"
	    "{{>item}}{{/items}}</ul>{{> later}}"), 0);
	/* Referenced before it exists: resolved at render time. */
	assert_int_equal(template_set_validate(set), -1);
	assert_non_null(strstr(set->error, "later"));
	assert_int_equal(reg(set, "later", "!"), 0);
	assert_int_equal(template_set_validate(set), 0);

	ctx = json_pack("{s:s, s:[{s:s, s:b}, {s:s}]}", "title", "A&B",
	    "items", "name", "x", "new", 1, "name", "<y>");
	assert_non_null(ctx);
	assert_int_equal(template_render(set, "page", ctx, &out, &len), 0);
	assert_string_equal(out, "<h1>A&amp;B</h1><ul><li>x*</li>"
	    "<li>&lt;y&gt;</li></ul>!");
	free(out);
	json_decref(ctx);
}

static void
test_partial_depth(void **state)
{
	struct template_set	*set = *state;
	char			 name[16], text[64], *out;
	size_t			 len;
	int			 i;

	/* p0 -> p1 -> ... -> p8: eight levels of inclusion are allowed. */
	for (i = 0; i <= TEMPLATE_PARTIAL_DEPTH; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		if (i < TEMPLATE_PARTIAL_DEPTH)
			snprintf(text, sizeof(text), "%d{{>p%d}}", i, i + 1);
		else
			snprintf(text, sizeof(text), "%d", i);
		assert_int_equal(reg(set, name, text), 0);
	}
	assert_int_equal(template_set_validate(set), 0);
	assert_int_equal(template_render(set, "p0", NULL, &out, &len), 0);
	assert_string_equal(out, "012345678");
	free(out);

	/* One more level is refused, by validate and by render. */
	assert_int_equal(reg(set, "deeper", "d{{>p0}}"), 0);
	assert_int_equal(template_set_validate(set), -1);
	assert_non_null(strstr(set->error, "deeper"));
	assert_int_equal(template_render(set, "deeper", NULL, &out, &len), -1);
	assert_null(out);
	assert_int_equal(template_render(set, "p0", NULL, &out, &len), 0);
	free(out);
}

static void
test_partial_recursion(void **state)
{
	struct template_set	*set = *state;
	char			*out;
	size_t			 len;

	assert_int_equal(reg(set, "self", "x{{>self}}"), 0);
	assert_int_equal(template_set_validate(set), -1);
	assert_non_null(strstr(set->error, "itself"));
	assert_int_equal(template_render(set, "self", NULL, &out, &len), -1);
	template_set_free(set);

	assert_int_equal(reg(set, "a", "{{#x}}{{>b}}{{/x}}"), 0);
	assert_int_equal(reg(set, "b", "{{>a}}"), 0);
	assert_int_equal(template_set_validate(set), -1);
	/* At runtime the guard stops it too (x is true: the loop runs). */
	{
		json_t	*ctx = json_pack("{s:b}", "x", 1);

		assert_int_equal(template_render(set, "a", ctx, &out, &len),
		    -1);
		json_decref(ctx);
	}
	template_set_free(set);

	/* Unknown partial at render time. */
	assert_int_equal(reg(set, "m", "{{>missing}}"), 0);
	assert_int_equal(template_render(set, "m", NULL, &out, &len), -1);
	assert_int_equal(template_set_validate(set), -1);
}

static void
test_compile_errors(void **state)
{
	struct template_set	*set = *state;
	static const char	*bad[] = {
		"{{name", "{{name}", "x {{", "{{", "}}{{",
		"{{#a}}", "{{#a}}{{#b}}{{/b}}", "{{/a}}", "{{#a}}{{/b}}",
		"{{#a}}{{#b}}{{/a}}{{/b}}", "{{^a}}{{/b}}",
		"{{#a}}{{/a}}{{/a}}",
		"{{}}", "{{ }}", "{{{x}}}", "{{&x}}", "{{=<% %>=}}",
		"{{a..b}}", "{{.a}}", "{{a.}}", "{{a b}}", "{{#}}", "{{/}}",
		"{{>}}", "{{> a b}}", "{{a<b}}", "{{..}}", "{{#a.}}{{/a.}}",
		"{{a\"}}", "{{\xc3\xa9}}", "{{ {{x}} }}",
	};
	char			 name[16], deep[512];
	size_t			 i;
	int			 off;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu", i);
		set->error[0] = '\0';
		if (reg(set, name, bad[i]) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_true(strlen(set->error) > 0);
	}
	/* A failed register leaves nothing behind. */
	assert_int_equal(set->count, 0);
	{
		char	*out;
		size_t	 len;

		assert_int_equal(template_render(set, "bad0", NULL, &out,
		    &len), -1);
		assert_int_equal(template_render(set, "nope", NULL, &out,
		    &len), -1);
	}

	/* The message has the template name and the line of the tag. */
	assert_int_equal(reg(set, "lines", "ok\n\n{{#a}}\n{{/b}}"), -1);
	assert_non_null(strstr(set->error, "lines"));
	assert_non_null(strstr(set->error, "line 4"));
	assert_int_equal(reg(set, "open", "x\n{{#a}}\n"), -1);
	assert_non_null(strstr(set->error, "line 2"));

	/* Duplicate name. */
	assert_int_equal(reg(set, "dup", "a"), 0);
	assert_int_equal(reg(set, "dup", "b"), -1);
	assert_int_equal(reg(set, "", "b"), -1);

	/* Section nesting limit. */
	for (i = 0, off = 0; i < TEMPLATE_SECTION_DEPTH; i++)
		off += snprintf(deep + off, sizeof(deep) - off, "{{#a}}");
	for (i = 0; i < TEMPLATE_SECTION_DEPTH; i++)
		off += snprintf(deep + off, sizeof(deep) - off, "{{/a}}");
	assert_int_equal(reg(set, "deep32", deep), 0);
	for (i = 0, off = 0; i <= TEMPLATE_SECTION_DEPTH; i++)
		off += snprintf(deep + off, sizeof(deep) - off, "{{#a}}");
	for (i = 0; i <= TEMPLATE_SECTION_DEPTH; i++)
		off += snprintf(deep + off, sizeof(deep) - off, "{{/a}}");
	assert_int_equal(reg(set, "deep33", deep), -1);
}

static void
test_utf8(void **state)
{
	struct template_set	*set = *state;

	expect(set, "Grüße € 日本 {{s}} ✓",
	    "{\"s\":\"Straße <Zürich> 😀\"}",
	    "Grüße € 日本 Straße &lt;Zürich&gt; 😀 ✓");
	/* Invalid UTF-8 in template text is passed through, not fixed. */
	expect(set, "\xff\xfe{{s}}", "{\"s\":\"\\u00e9\"}", "\xff\xfe\xc3\xa9");
}

static void
test_not_nul_terminated(void **state)
{
	struct template_set	*set = *state;
	const char		 text[] = { 'a', '{', '{', 'x', '}', '}' };
	char			*out;
	size_t			 len;
	json_t			*ctx = json_pack("{s:s}", "x", "X");

	assert_int_equal(template_register(set, "n", text, sizeof(text)), 0);
	assert_int_equal(template_render(set, "n", ctx, &out, &len), 0);
	assert_string_equal(out, "aX");
	free(out);
	/* The length is honoured: a cut-off tag is unterminated. */
	assert_int_equal(template_register(set, "n2", text, 5), -1);
	json_decref(ctx);
}

static double
now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e6 + ts.tv_nsec / 1e3);
}

#if defined(__SANITIZE_ADDRESS__)
#define SPEED_LIMIT_US	500.0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPEED_LIMIT_US	500.0
#endif
#endif
#ifndef SPEED_LIMIT_US
#define SPEED_LIMIT_US	50.0
#endif

static void
test_speed(void **state)
{
	struct template_set	*set = *state;
	char			 page[4096], *out;
	size_t			 len, off = 0;
	json_t			*ctx;
	double			 t0, per;
	int			 i;

	off += snprintf(page + off, sizeof(page) - off,
	    "<!doctype html><html lang=\"{{lang}}\"><head>"
	    "<meta charset=\"utf-8\">"
	    "<title>{{t.title}}</title><link rel=\"stylesheet\" "
	    "href=\"/assets/site.css\"></head><body>{{> header}}<main>"
	    "<form method=\"post\" action=\"/oauth/login\">"
	    "<input type=\"hidden\" name=\"csrf\" value=\"{{csrf}}\">"
	    "<input type=\"hidden\" name=\"req\" value=\"{{req}}\">"
	    "{{#error}}<p class=\"error\">{{error}}</p>{{/error}}"
	    "<label>{{t.user}}<input name=\"user\" value=\"{{user}}\">"
	    "</label><label>{{t.password}}<input type=\"password\" "
	    "name=\"password\"></label>"
	    "{{#langs}}<a href=\"?lang={{code}}\">{{name}}</a>{{/langs}}"
	    "<button>{{t.submit}}</button></form></main>");
	while (off < 2900)
		off += snprintf(page + off, sizeof(page) - off,
		    "<p class=\"small\">{{t.footer}} &middot; %zu</p>\n", off);
	off += snprintf(page + off, sizeof(page) - off, "</body></html>");
	assert_int_equal(reg(set, "header",
	    "<header><img src=\"/assets/logo.svg\" alt=\"{{t.bank}}\">"
	    "{{^tpp}}{{/tpp}}{{tpp}}</header>"), 0);
	assert_int_equal(reg(set, "login", page), 0);
	assert_int_equal(template_set_validate(set), 0);

	ctx = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[{s:s,s:s},{s:s,s:s},"
	    "{s:s,s:s}], s:{s:s,s:s,s:s,s:s,s:s,s:s}}",
	    "lang", "de", "csrf", "k1.1700000000.abc.def", "req", "xyz",
	    "user", "anna", "tpp", "Fintech <GmbH>",
	    "langs", "code", "en", "name", "English", "code", "de", "name",
	    "Deutsch", "code", "nl", "name", "Nederlands",
	    "t", "title", "Anmelden", "user", "Benutzer", "password",
	    "Passwort", "submit", "Weiter", "footer", "Ihre Bank",
	    "bank", "Bank");
	assert_non_null(ctx);

	for (i = 0; i < 100; i++) {	/* warm up */
		assert_int_equal(template_render(set, "login", ctx, &out,
		    &len), 0);
		free(out);
	}
	t0 = now_us();
	for (i = 0; i < 2000; i++) {
		assert_int_equal(template_render(set, "login", ctx, &out,
		    &len), 0);
		free(out);
	}
	per = (now_us() - t0) / 2000;
	print_message("login page (%zu bytes of template): %.2f us/render\n",
	    off, per);
	assert_true(per < SPEED_LIMIT_US);
	json_decref(ctx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dotted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inverted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_stack, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_comments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_depth, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_partial_recursion, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_compile_errors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_nul_terminated, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_speed, setup, teardown),
	};

	return (cmocka_run_group_tests_name("template", tests, NULL, NULL));
}
