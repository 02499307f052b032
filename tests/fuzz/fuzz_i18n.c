/*
 * libFuzzer: i18n_pick. Input is "<Accept-Language>\0<explicit choice>";
 * the answer is always one of the three languages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "i18n_pick.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*text, *choice;
	const char	*lang;

	if ((text = malloc(size + 2)) == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	text[size + 1] = '\0';
	choice = text + strlen(text) + 1;
	lang = i18n_pick(text, *choice ? choice : NULL);
	if (strcmp(lang, "en") != 0 && strcmp(lang, "de") != 0 &&
	    strcmp(lang, "nl") != 0)
		abort();
	if (i18n_pick(text, NULL) == NULL)
		abort();
	free(text);
	return (0);
}
