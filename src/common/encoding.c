/*
 * Strict RFC 4648 codecs, hex and form-urlencoding. Inputs are hostile
 * (query strings, tokens, key files): every read is bounded by the given
 * length and every write by outlen.
 */
#include <limits.h>
#include <string.h>

#include "encoding.h"

static const char	b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char	b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char	b32_alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
static const char	hex_lower[] = "0123456789abcdef";
static const char	hex_upper[] = "0123456789ABCDEF";

/* Output lengths are returned as int: refuse anything that cannot be. */
static int
fits(size_t need, size_t outlen)
{
	return (need <= outlen && need <= INT_MAX);
}

static int
b64_value(char c, int url)
{
	if (c >= 'A' && c <= 'Z')
		return (c - 'A');
	if (c >= 'a' && c <= 'z')
		return (c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (c - '0' + 52);
	if (c == (url ? '-' : '+'))
		return (62);
	if (c == (url ? '_' : '/'))
		return (63);
	return (-1);
}

static int
b64_encode(const uint8_t *in, size_t inlen, char *out, size_t outlen,
    const char *alpha, int pad)
{
	size_t		i, o, need;
	uint32_t	v;

	if (inlen > (SIZE_MAX - 2) / 4)
		return (-1);
	need = pad ? BASE64_ENCODED_LEN(inlen) : BASE64URL_ENCODED_LEN(inlen);
	if (!fits(need + 1, outlen))
		return (-1);

	for (i = 0, o = 0; i + 2 < inlen; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];
		out[o++] = alpha[(v >> 18) & 63];
		out[o++] = alpha[(v >> 12) & 63];
		out[o++] = alpha[(v >> 6) & 63];
		out[o++] = alpha[v & 63];
	}
	if (inlen - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[o++] = alpha[(v >> 18) & 63];
		out[o++] = alpha[(v >> 12) & 63];
		if (pad) {
			out[o++] = '=';
			out[o++] = '=';
		}
	} else if (inlen - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = alpha[(v >> 18) & 63];
		out[o++] = alpha[(v >> 12) & 63];
		out[o++] = alpha[(v >> 6) & 63];
		if (pad)
			out[o++] = '=';
	}
	out[o] = '\0';
	return ((int)o);
}

/* Decodes n (no padding) characters; the tail must have zero spare bits. */
static int
b64_decode_data(const char *in, size_t n, uint8_t *out, size_t outlen,
    int url)
{
	size_t		i, o, rem, need;
	uint32_t	v;
	int		c;

	rem = n % 4;
	if (rem == 1)
		return (-1);
	need = n / 4 * 3 + (rem == 2 ? 1 : rem == 3 ? 2 : 0);
	if (!fits(need, outlen))
		return (-1);

	v = 0;
	for (i = 0, o = 0; i < n; i++) {
		if ((c = b64_value(in[i], url)) == -1)
			return (-1);
		v = v << 6 | (uint32_t)c;
		if (i % 4 == 3) {
			out[o++] = (uint8_t)(v >> 16);
			out[o++] = (uint8_t)(v >> 8);
			out[o++] = (uint8_t)v;
			v = 0;
		}
	}
	if (rem == 2) {
		if (v & 0x0f)
			return (-1);
		out[o++] = (uint8_t)(v >> 4);
	} else if (rem == 3) {
		if (v & 0x03)
			return (-1);
		out[o++] = (uint8_t)(v >> 10);
		out[o++] = (uint8_t)(v >> 2);
	}
	return ((int)o);
}

int
base64_encode(const void *in, size_t inlen, char *out, size_t outlen)
{
	return (b64_encode(in, inlen, out, outlen, b64_std, 1));
}

int
base64url_encode(const void *in, size_t inlen, char *out, size_t outlen)
{
	return (b64_encode(in, inlen, out, outlen, b64_url, 0));
}

int
base64_decode(const char *in, size_t inlen, uint8_t *out, size_t outlen)
{
	size_t		pad = 0;

	/* Padded form: whole quads only, at most two '=' at the very end. */
	if (inlen % 4 != 0)
		return (-1);
	if (inlen > 0 && in[inlen - 1] == '=')
		pad++;
	if (inlen > 1 && in[inlen - 2] == '=')
		pad++;
	return (b64_decode_data(in, inlen - pad, out, outlen, 0));
}

int
base64url_decode(const char *in, size_t inlen, uint8_t *out, size_t outlen)
{
	return (b64_decode_data(in, inlen, out, outlen, 1));
}

static int
b32_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return (c - 'A');
	if (c >= 'a' && c <= 'z')
		return (c - 'a');
	if (c >= '2' && c <= '7')
		return (c - '2' + 26);
	return (-1);
}

int
base32_encode(const void *in, size_t inlen, char *out, size_t outlen)
{
	const uint8_t	*p = in;
	size_t		 i, o;
	uint32_t	 buf = 0;
	int		 bits = 0;

	if (inlen > SIZE_MAX / 8 - 1)
		return (-1);
	if (!fits(BASE32_ENCODED_LEN(inlen) + 1, outlen))
		return (-1);

	for (i = 0, o = 0; i < inlen; i++) {
		buf = buf << 8 | p[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = b32_alpha[(buf >> (bits - 5)) & 31];
			bits -= 5;
		}
		buf &= (1u << bits) - 1;
	}
	if (bits > 0)
		out[o++] = b32_alpha[(buf << (5 - bits)) & 31];
	out[o] = '\0';
	return ((int)o);
}

/* Valid lengths of the last (partial) 8-character group. */
static int
b32_tail_ok(size_t rem)
{
	return (rem == 0 || rem == 2 || rem == 4 || rem == 5 || rem == 7);
}

int
base32_decode(const char *in, size_t inlen, uint8_t *out, size_t outlen)
{
	size_t		i, o, n, pad = 0;
	uint32_t	buf = 0;
	int		bits = 0, c;

	while (pad < inlen && in[inlen - pad - 1] == '=')
		pad++;
	n = inlen - pad;
	if (!b32_tail_ok(n % 8))
		return (-1);
	/* Padding, when present, must complete the group exactly. */
	if (pad > 0 && (n % 8 == 0 || n % 8 + pad != 8))
		return (-1);
	if (!fits(n * 5 / 8, outlen))
		return (-1);

	for (i = 0, o = 0; i < n; i++) {
		if ((c = b32_value(in[i])) == -1)
			return (-1);
		buf = buf << 5 | (uint32_t)c;
		bits += 5;
		if (bits >= 8) {
			out[o++] = (uint8_t)(buf >> (bits - 8));
			bits -= 8;
			buf &= (1u << bits) - 1;
		}
	}
	if (buf != 0)
		return (-1);
	return ((int)o);
}

int
hex_encode(const void *in, size_t inlen, char *out, size_t outlen)
{
	const uint8_t	*p = in;
	size_t		 i;

	if (inlen > (SIZE_MAX - 1) / 2 || !fits(inlen * 2 + 1, outlen))
		return (-1);
	for (i = 0; i < inlen; i++) {
		out[i * 2] = hex_lower[p[i] >> 4];
		out[i * 2 + 1] = hex_lower[p[i] & 0x0f];
	}
	out[inlen * 2] = '\0';
	return ((int)(inlen * 2));
}

int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

int
hex_decode(const char *in, size_t inlen, uint8_t *out, size_t outlen)
{
	size_t		i;
	int		hi, lo;

	if (inlen % 2 != 0 || !fits(inlen / 2, outlen))
		return (-1);
	for (i = 0; i < inlen; i += 2) {
		if ((hi = hex_digit(in[i])) == -1 ||
		    (lo = hex_digit(in[i + 1])) == -1)
			return (-1);
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return ((int)(inlen / 2));
}

/* Offsets of the four dashes of the text form. */
static int
uuid_dash(size_t i)
{
	return (i == 8 || i == 13 || i == 18 || i == 23);
}

int
uuid_decode(const char *s, uint8_t *out)
{
	size_t		i, o;
	int		hi, lo;

	if (s == NULL)
		return (-1);
	/* Stops at the NUL: a short string fails before reading past it. */
	for (i = 0, o = 0; i < UUID_TEXT_LEN; i++) {
		if (uuid_dash(i)) {
			if (s[i] != '-')
				return (-1);
			continue;
		}
		if ((hi = hex_digit(s[i])) == -1 ||
		    (lo = hex_digit(s[i + 1])) == -1)
			return (-1);
		if (out != NULL)
			out[o] = (uint8_t)(hi << 4 | lo);
		o++;
		i++;
	}
	return (s[UUID_TEXT_LEN] == '\0' ? 0 : -1);
}

void
uuid_encode(const uint8_t in[16], char out[UUID_TEXT_LEN + 1])
{
	size_t		i, o;

	for (i = 0, o = 0; i < 16; i++) {
		if (uuid_dash(o))
			out[o++] = '-';
		out[o++] = hex_lower[in[i] >> 4];
		out[o++] = hex_lower[in[i] & 0x0f];
	}
	out[o] = '\0';
}

int
form_decode(const char *in, size_t inlen, char *out, size_t outlen)
{
	size_t		i, o;
	int		hi, lo;
	char		c;

	for (i = 0, o = 0; i < inlen; i++) {
		c = in[i];
		if (c == '+')
			c = ' ';
		else if (c == '%') {
			if (inlen - i < 3 ||
			    (hi = hex_digit(in[i + 1])) == -1 ||
			    (lo = hex_digit(in[i + 2])) == -1)
				return (-1);
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0')
			return (-1);
		if (!fits(o + 2, outlen))
			return (-1);
		out[o++] = c;
	}
	if (outlen == 0)
		return (-1);
	out[o] = '\0';
	return ((int)o);
}

static int
is_unreserved(unsigned char c)
{
	return ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~');
}

int
form_encode(const char *in, size_t inlen, char *out, size_t outlen)
{
	size_t		i, o;
	unsigned char	c;

	for (i = 0, o = 0; i < inlen; i++) {
		c = (unsigned char)in[i];
		if (is_unreserved(c)) {
			if (!fits(o + 2, outlen))
				return (-1);
			out[o++] = (char)c;
			continue;
		}
		if (!fits(o + 4, outlen))
			return (-1);
		out[o++] = '%';
		out[o++] = hex_upper[c >> 4];
		out[o++] = hex_upper[c & 0x0f];
	}
	if (outlen == 0)
		return (-1);
	out[o] = '\0';
	return ((int)o);
}

int
form_count(const char *in, size_t inlen, const char *name)
{
	const char	*field, *end, *eq, *stop;
	char		 decoded[64];
	int		 n;

	n = 0;
	stop = in + inlen;
	for (field = in; field < stop; field = end + 1) {
		if ((end = memchr(field, '&', (size_t)(stop - field))) == NULL)
			end = stop;
		if ((eq = memchr(field, '=', (size_t)(end - field))) == NULL)
			eq = end;
		if (form_decode(field, (size_t)(eq - field), decoded,
		    sizeof(decoded)) >= 0 && strcmp(decoded, name) == 0)
			n++;
		if (end == stop)
			break;
	}
	return (n);
}

int
row_id_text(const char *s)
{
	size_t	i;

	if (s == NULL)
		return (0);
	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++)
		;
	return (i > 0 && i <= 18 && s[i] == '\0');
}
