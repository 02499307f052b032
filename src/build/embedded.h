/* Files compiled into the binary by psd2-embed (see src/build/embed.c). */
#ifndef PSD2_EMBEDDED_H
#define PSD2_EMBEDDED_H

#include <stddef.h>

struct embedded_file {
	const char		*name;
	const unsigned char	*data;	/* NUL-terminated for convenience */
	size_t			 len;
};

extern const struct embedded_file	embedded_files[];
extern const size_t			embedded_count;

#endif
