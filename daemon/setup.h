/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_SETUP_H
#define MMHITMD_SETUP_H

struct config;
struct daemon;

/*
 * Sets the daemon up in steps, from d->opts and d->cfg (d->sigfd and
 * d->sleep_on_signals set): the database (waiting, with backoff, while it
 * cannot be written yet; -ECANCELED when a signal stops the wait), the
 * boot's identity and row, the counted tracepoints (windowed: and the
 * calibrated price of one), the learning streams and flight recorder,
 * the sampler, attribution, and the recorder's first baseline. Returns
 * 0, or -errno, logged; daemon_teardown() undoes what was done either way.
 */
int daemon_setup(struct daemon *d);
/* Stops and frees everything; the tracefs instances go before the locks. */
void daemon_teardown(struct daemon *d);
/*
 * SIGHUP: adopts what a running daemon can of the configuration c (read
 * again from the file and the flags) and says what waits for a restart.
 * Takes c.
 */
void daemon_reload(struct daemon *d, struct config *c);

#endif
