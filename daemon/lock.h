/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_LOCK_H
#define MMHITMD_LOCK_H

/*
 * One daemon per database and per tracefs instance. Two flock()s, held
 * for the daemon's lifetime and released by the kernel however it ends:
 *
 *	<db path>.lock			beside the database
 *	/run/mmhitm/<instance>.lock	($RUNTIME_DIRECTORY/<instance>.lock
 *					 when /run/mmhitm can't be made)
 *
 * Each file holds the holder's PID and a newline, for the refusal message.
 * Readers test the database's with flock(LOCK_SH | LOCK_NB).
 */

#define LOCK_RUN_DIR "/run/mmhitm"

struct daemon_locks;

/*
 * Takes both locks, the database's first. -EBUSY when another daemon holds
 * either (logged, naming its PID; nothing of it is touched), other -errno
 * when a lock file can't be made. Caller frees with daemon_locks_free().
 */
int daemon_locks_acquire(const char *db_path, const char *instance, struct daemon_locks **ret);
/* Releases both; NULL is fine. */
void daemon_locks_free(struct daemon_locks *l);

#endif
