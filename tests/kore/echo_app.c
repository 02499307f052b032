/*
 * echo_app: a tiny single-binary Kore application used by
 * tests/kore/test_kore_patches.py to check the project's Kore patches
 * (conf/kore-patches/). It is linked against the patched Kore objects
 * exactly like psd2gate itself.
 *
 * Usage: echo_app [-f] [-n] [-r] [-q] CONFIG
 *
 * The configuration is read from the file named by the first non-option
 * argument (or $KT_ECHO_CONF) in kore_parent_configure(); the built-in
 * configuration asset is empty.
 *
 * Routes (declared in the configuration):
 *   /echo    any method: 200, the request body echoed back, plus
 *            x-header-count (number of request headers, Host excluded),
 *            x-header-bytes (sum of strlen(name) + strlen(value)),
 *            x-method, x-body-length and, over mTLS, x-client-subject.
 *   /static  200 "ok"
 *
 * http_error_body_hook is set to answer every Kore error with a
 * Berlin Group style JSON body. Each worker arms a 60 s no-op timer.
 */

#include <sys/types.h>

#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kore.h>
#include <http.h>

int	page_echo(struct http_request *);
int	page_static(struct http_request *);
void	kore_parent_configure(int, char **);
void	kore_worker_configure(void);

static void	echo_error_body(struct connection *, int, struct kore_buf *,
		    const char **);
static void	echo_timer(void *, u_int64_t);

/* Single-binary mode: Kore writes this out and parses it after us. */
u_int8_t	asset_builtin_kore_conf[] = "\n";
u_int32_t	asset_len_builtin_kore_conf = 1;

void
kore_parent_configure(int argc, char **argv)
{
	FILE		*fp;
	const char	*path;

	kore_default_getopt(argc, argv);

	if (optind < argc)
		path = argv[optind];
	else
		path = getenv("KT_ECHO_CONF");

	if (path == NULL)
		fatal("usage: echo_app [-fnrq] CONFIG");

	if ((fp = fopen(path, "r")) == NULL)
		fatal("cannot open %s", path);

	kore_parse_config_file(fp);
	(void)fclose(fp);

	http_error_body_hook = echo_error_body;
}

void
kore_worker_configure(void)
{
	/* The hook pointer is inherited over fork(); set it again anyway. */
	http_error_body_hook = echo_error_body;

	/*
	 * An armed timer, as psd2gate's housekeeping has: the worker then
	 * sleeps until the timer instead of polling every 100 ms, which hid
	 * a pipelining stall (patch 0011).
	 */
	kore_timer_add(echo_timer, 60000, NULL, 0);
}

static void
echo_timer(void *arg, u_int64_t now)
{
	(void)arg;
	(void)now;
}

static void
echo_error_body(struct connection *c, int status, struct kore_buf *body,
    const char **content_type)
{
	const char	*code;

	(void)c;

	switch (status) {
	case 400:
		code = "FORMAT_ERROR";
		break;
	case 404:
		code = "RESOURCE_UNKNOWN";
		break;
	case 405:
		code = "SERVICE_INVALID";
		break;
	case 408:
		code = "TIMEOUT";
		break;
	case 411:
		code = "LENGTH_REQUIRED";
		break;
	case 413:
		code = "PAYLOAD_TOO_LARGE";
		break;
	case 414:
		code = "URI_TOO_LONG";
		break;
	case 431:
		code = "HEADERS_TOO_LARGE";
		break;
	default:
		code = status >= 500 ? "INTERNAL_SERVER_ERROR" : "FORMAT_ERROR";
		break;
	}

	kore_buf_appendf(body,
	    "{\"tppMessages\":[{\"category\":\"ERROR\",\"code\":\"%s\","
	    "\"text\":\"%d %s\"}]}", code, status, http_status_text(status));
	*content_type = "application/json";
}

int
page_static(struct http_request *req)
{
	http_response_header(req, "content-type", "text/plain");
	http_response(req, 200, "ok", 2);
	return (KORE_RESULT_OK);
}

int
page_echo(struct http_request *req)
{
	struct http_header	*hdr;
	struct kore_buf		*out;
	ssize_t			ret;
	size_t			count, bytes;
	char			buf[4096], num[32], subject[512];

	count = 0;
	bytes = 0;
	TAILQ_FOREACH(hdr, &req->req_headers, list) {
		count++;
		bytes += strlen(hdr->header) + strlen(hdr->value);
	}

	out = kore_buf_alloc(1024);
	for (;;) {
		ret = http_body_read(req, buf, sizeof(buf));
		if (ret == -1) {
			kore_buf_free(out);
			http_response(req, 500, NULL, 0);
			return (KORE_RESULT_OK);
		}
		if (ret == 0)
			break;
		kore_buf_append(out, buf, (size_t)ret);
	}

	(void)snprintf(num, sizeof(num), "%zu", count);
	http_response_header(req, "x-header-count", num);
	(void)snprintf(num, sizeof(num), "%zu", bytes);
	http_response_header(req, "x-header-bytes", num);
	(void)snprintf(num, sizeof(num), "%zu", out->offset);
	http_response_header(req, "x-body-length", num);
	http_response_header(req, "x-method", http_method_text(req->method));

	if (req->owner->cert != NULL) {
		X509_NAME_oneline(X509_get_subject_name(req->owner->cert),
		    subject, sizeof(subject));
		http_response_header(req, "x-client-subject", subject);
	}

	http_response_header(req, "content-type", "application/octet-stream");
	http_response(req, 200, out->data, out->offset);
	kore_buf_free(out);

	return (KORE_RESULT_OK);
}
