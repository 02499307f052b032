/*
 * Text encodings of bytes: base64 (RFC 4648 section 4, padded),
 * base64url (section 5, unpadded), base32 (section 6), hex and the
 * application/x-www-form-urlencoded component form.
 *
 * Conventions for every function here: input is (pointer, length) and
 * need not be NUL-terminated; output goes to a caller buffer of outlen
 * bytes; the return value is the output length, or -1 on malformed input
 * or a too small buffer. Encoders (and form_decode, whose output is text)
 * also write a terminating NUL, which must fit in outlen but is not
 * counted. Decoders are strict: no whitespace, no stray characters, no
 * wrong padding, no non-zero unused trailing bits, so that every value has
 * exactly one accepted encoding.
 */
#ifndef PSD2_ENCODING_H
#define PSD2_ENCODING_H

#include <stddef.h>
#include <stdint.h>

/* Encoded lengths, excluding the NUL. */
#define BASE64_ENCODED_LEN(n)		(((n) + 2) / 3 * 4)
#define BASE64URL_ENCODED_LEN(n)	(((n) * 4 + 2) / 3)
#define BASE32_ENCODED_LEN(n)		(((n) * 8 + 4) / 5)
#define HEX_ENCODED_LEN(n)		((n) * 2)
#define FORM_ENCODED_MAX(n)		((n) * 3)

/* Upper bound of a decoded length for n input characters. */
#define BASE64_DECODED_MAX(n)		((n) / 4 * 3 + 2)
#define BASE32_DECODED_MAX(n)		((n) * 5 / 8)

int	base64_encode(const void *in, size_t inlen, char *out, size_t outlen);
int	base64_decode(const char *in, size_t inlen, uint8_t *out,
	    size_t outlen);

int	base64url_encode(const void *in, size_t inlen, char *out,
	    size_t outlen);
int	base64url_decode(const char *in, size_t inlen, uint8_t *out,
	    size_t outlen);

/*
 * Encoder: upper case and without padding, the form otpauth:// URIs use.
 * Decoder: either case, padding optional but correct when present.
 */
int	base32_encode(const void *in, size_t inlen, char *out, size_t outlen);
int	base32_decode(const char *in, size_t inlen, uint8_t *out,
	    size_t outlen);

/* Encoder: lower case. Decoder: either case, even length. */
int	hex_encode(const void *in, size_t inlen, char *out, size_t outlen);
int	hex_decode(const char *in, size_t inlen, uint8_t *out, size_t outlen);
/* The value of one hex digit (either case), or -1: every hex reader's. */
int	hex_digit(int c);

#define UUID_TEXT_LEN	36

/*
 * The text form of a UUID, exactly 8-4-4-4-12 hex digits (either case)
 * and the NUL, into its 16 bytes; out may be NULL to check the form
 * only. Reads no byte past a NUL. Returns 0, or -1.
 */
int	uuid_decode(const char *s, uint8_t *out);
/* 16 bytes as 8-4-4-4-12 lower-case hex digits and a NUL. */
void	uuid_encode(const uint8_t in[16], char out[UUID_TEXT_LEN + 1]);

/*
 * One form component: '+' is a space, %XX any case. Rejects a malformed
 * '%' escape and any NUL (raw or %00), so the result is a safe C string.
 */
int	form_decode(const char *in, size_t inlen, char *out, size_t outlen);

/* Keeps RFC 3986 unreserved characters, %XX (upper case) for the rest. */
int	form_encode(const char *in, size_t inlen, char *out, size_t outlen);

/*
 * How many '&'-separated fields of a whole form-encoded text (a query
 * string or a form body) have the name name, however it is spelled
 * ("scope", "sco%70e"), with or without '=' and a value. Fields whose
 * name does not decode are not counted. Not a conversion: returns the
 * count, never -1.
 */
int	form_count(const char *in, size_t inlen, const char *name);

/*
 * A row id as a form sends it: 1 to 18 decimal digits, so always within
 * a bigint. 1, or 0 (NULL too).
 */
int	row_id_text(const char *s);

#endif
