/* Periodic purge of expired codes, tokens, sessions and counters. */
#ifndef PSD2_HOUSEKEEPING_H
#define PSD2_HOUSEKEEPING_H

void	housekeeping_start(void);

#endif
