/*
 * Payee names an authenticator shows (device/PROTOCOL.md, section 5.3.2).
 * Pure C, no allocation, no Unicode library.
 *
 * The allowed characters are Latin letters, digits, space and punctuation
 * only, all precomposed:
 *	U+0020..U+007E	printable ASCII
 *	U+00A1..U+00FF	Latin-1 letters and signs, without U+00AD (soft hyphen)
 *	U+0100..U+017E	Latin Extended-A, without U+0149 (deprecated)
 *	U+0218..U+021B	S, s, T, t with comma below (Romanian)
 * Each is NFC-stable with combining class 0, so a string of them is NFC.
 * Everything else is refused: controls, NBSP, format characters (zero
 * width, bidirectional overrides and isolates, BOM), combining marks,
 * other scripts, private use, noncharacters, surrogates. No space may
 * lead, trail or follow another space.
 *
 * A payee name must also read unambiguously next to the display's own
 * labels (protocol version 3): no word AMOUNT, IBAN, PAY, PAYEE or PIN
 * (any case), at most 4 digits, no word that starts with two letters and
 * two digits (an IBAN's start), no '.' or ',' between two digits.
 */
#ifndef PSD2_DEVTEXT_H
#define PSD2_DEVTEXT_H

#include <stddef.h>

#define DEVTEXT_PAYEE_MAX	70	/* UTF-8 bytes, after NFC */
#define DEVTEXT_INPUT_MAX	1024	/* what normalize reads at most */

#define DEVTEXT_OK		0
#define DEVTEXT_UTF8		1	/* not well-formed UTF-8 */
#define DEVTEXT_LENGTH		2	/* empty, or over 70 bytes in NFC */
#define DEVTEXT_CHAR		3	/* a character outside the set */
#define DEVTEXT_SPACE		4	/* leading, trailing or double space */
#define DEVTEXT_LABEL		5	/* a payee name with a display label */
#define DEVTEXT_NUMBER		6	/* a payee name with an IBAN-like or
					 * amount-like run */
#define DEVTEXT_DIGITS_MAX	4	/* digits a payee name may hold */

/*
 * The device's rule: 1 if utf8[0..len) is a payee name exactly as it may
 * be signed and shown (in the set, hence NFC; 1..70 bytes), 0 otherwise.
 */
int	devtext_payee_ok(const char *utf8, size_t len);

/*
 * The service's rule at initiation: NFC-normalises in[0..inlen) and
 * checks the result as devtext_payee_ok() does. On DEVTEXT_OK, out holds
 * the NUL-terminated NFC name (*outn bytes), which is what the service
 * stores, sends and verifies; outlen must be at least 71. Otherwise out
 * is "" and the code says why. Equal to "NFC, then the set", because the
 * only compositions that can end in the set are those in devtext_gen.py;
 * then the display rules (DEVTEXT_LABEL, DEVTEXT_NUMBER).
 */
int	devtext_payee_normalize(const char *in, size_t inlen, char *out,
	    size_t outlen, size_t *outn);

/*
 * The text rule for any text people read (src/common/textrule.h): NFC,
 * the set, spacing, 1..maxchars characters whose UTF-8 fits out. Codes
 * DEVTEXT_OK, _UTF8, _LENGTH, _CHAR, _SPACE, the first failing check in
 * the order of PROTOCOL.md 5.3.2 deciding. devtext_payee_normalize() is this rule with the
 * 70-byte limit, then DEVTEXT_LABEL, then DEVTEXT_NUMBER.
 */
int	devtext_normalize(const char *in, size_t inlen, size_t maxchars,
	    char *out, size_t outlen, size_t *outn);

const char	*devtext_error(int);

#endif
