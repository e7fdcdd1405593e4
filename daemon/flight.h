/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_FLIGHT_H
#define MMHITMD_FLIGHT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "stream.h"

/*
 * The flight recorder: the window's learning events, recorded a second
 * time into a tracefs instance of their own ("<instance>-flight") in
 * overwrite mode, so that the last buffer's worth of them is still there
 * when something worth a look happens. The streams' instances are drained
 * as they are read and hold no history; this one is never read, only
 * saved: on a trigger (SIGUSR1, `mmhitm snapshot`, a lock-contention
 * storm) the daemon writes it as a trace.dat (tracedat.h) into a bounded
 * directory, for trace-cmd report, KernelShark or `mmhitm import`, and
 * the snapshot is listed in table snapshots.
 *
 * It is armed exactly when the learning streams are, with the same events
 * and filters, so between windows nothing more is armed (within a window,
 * a second instance's probe on each of those tracepoints is the extra
 * cost: on kernels with static calls, a call-site update at each arm and
 * disarm). A snapshot is written by a child process (forked, no exec, no
 * namespace: it runs under the shipped unit's hardening); its failure (a
 * full disk) is logged and never touches the recording.
 */

struct flight_config {
	const char *instance;		/* the daemon's; "-flight" is appended */
	uint64_t buffer_size_kb;	/* per CPU */
	const char *dir;		/* where snapshots go; "": beside db_path */
	const char *db_path;		/* the database: "<its dir>/snapshots" */
	uint64_t max_count;		/* snapshots kept in dir, oldest removed */
	uint64_t max_bytes;		/* their total size, likewise */
};

struct flight;

/*
 * Creates the instance with the learning events of sc (their filters as
 * the stream sets them), disarmed. NULL on failure (logged; the daemon
 * records without it). Caller frees with flight_free().
 */
struct flight *flight_new(const struct flight_config *fc, const struct stream_config *sc);
/* Removes the instance; a snapshot in progress is killed. NULL is fine. */
void flight_free(struct flight *f);

/* Arms (on) or disarms its events; a no-op while a snapshot is taken. */
int flight_arm(struct flight *f, bool on);

/*
 * Starts a snapshot: disarms, saves the ring as a trace.dat in a child. trigger is what asked ("SIGUSR1", "request", "lock-storm").
 * -EBUSY while one is in progress, -EAGAIN when a storm asked too soon
 * after the last storm snapshot (logged at most once per snapshot).
 */
int flight_request(struct flight *f, const char *trigger);

/*
 * Finishes a snapshot whose child is done (wait: waits for it): keeps the
 * file, trims the directory to its limits, lists it in db (boot_id), and
 * starts a fresh ring, armed again when armed is set. Returns 1 when a
 * snapshot finished, 0 when none did, -errno when it could not be listed
 * (the file is kept).
 */
int flight_poll(struct flight *f, sqlite3 *db, int64_t boot_id, bool armed, bool wait);

/* Whether a snapshot is being taken (the main loop polls sooner). */
bool flight_busy(const struct flight *f);

#endif
