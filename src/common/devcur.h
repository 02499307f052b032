/*
 * Currencies an authenticator can display (device/PROTOCOL.md, section
 * 5.3.1): the ISO 4217 minor units of each code in the protocol's display
 * table, and the one display format of an amount. Pure C. The service
 * calls devcur_displayable() before it creates a challenge, so that it
 * never sends a currency a device would refuse.
 */
#ifndef PSD2_DEVCUR_H
#define PSD2_DEVCUR_H

#include <stddef.h>
#include <stdint.h>

/* "92 233 720 368 547 758.07 EUR" and a NUL fit. */
#define DEVCUR_FORMAT_MAX	40

/* Minor units (0, 2 or 3) of a code in the table; -1 for any other. */
int	devcur_minor_units(const char *code);
/* 1 if code (3 letters, NUL-terminated) is in the display table. */
int	devcur_displayable(const char *code);
/*
 * The amount as a device shows it: integer part in groups of three
 * separated by a space, a '.' and exactly the currency's minor-unit
 * digits (none for 0), a space, the code: 1234567 EUR is "12 345.67 EUR",
 * JPY "1 234 567 JPY", BHD "1 234.567 BHD". Returns the length written
 * (NUL-terminated), or 0 for a code outside the table or a short buffer.
 */
size_t	devcur_format(uint64_t amount_minor, const char *code, char *out,
	    size_t outlen);

#endif
