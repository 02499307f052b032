/*
 * Executing a payment that passed SCA (ACTC): the one interface between
 * payment initiation and the bank's ledger. The sandbox's implementation
 * (booking.c) books in psd2gate's own tables with pis_book()
 * (src/db/functions/60_pis.sql): in one transaction the debtor's
 * available balance falls and a booked transaction appears (ACSC), or
 * the payment is RJCT insufficient funds. A production connection to the
 * core banking system replaces booking.c, keeping these calls and the
 * rule that a payment moves from ACTC exactly once.
 *
 * Both run on the decider's connection (pgconn.c), in the decider's
 * worker; ACTC has committed on its own before either is called.
 */
#ifndef PSD2_PIS_BOOKING_H
#define PSD2_PIS_BOOKING_H

/* Books one ACTC payment (payment_actc notification); a payment that is
 * no longer ACTC is left alone. */
void	booking_request(const char *payment_id);

/*
 * Books every ACTC payment still waiting (a crash between ACTC and its
 * booking, a notification lost), then calls done(arg) once the bookings
 * are queued. Returns -1 (done is not called) when the connection is
 * down.
 */
int	booking_sweep(void (*done)(void *), void *arg);

#endif
