/*
 * Chooses the page language: "en", "de" or "nl".
 */
#ifndef PSD2_I18N_PICK_H
#define PSD2_I18N_PICK_H

/*
 * An explicit choice (query parameter or cookie; either may be NULL)
 * wins when it names a supported language (case-insensitive). Otherwise
 * the Accept-Language header (may be NULL) decides per RFC 9110 section
 * 12.5.4: the supported primary language with the highest q-value
 * (ties: first listed), "*" standing for every language not named, q=0
 * meaning "not this one". Default "en". Returns a static string.
 */
const char	*i18n_pick(const char *accept_language,
		    const char *explicit_choice);

#endif
