/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CONFIG_H
#define MMHITM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_DEFAULT_PATH "/etc/mmhitm/mmhitm.conf"
#define CONFIG_DEFAULT_DB "/var/lib/mmhitm/mmhitm.db"

/*
 * mmhitmd's settings. Each field has one entry in config.c's option table,
 * which gives its config-file key, its command-line flag (--key, with '-'
 * for '_'), its default, its bounds and its help text.
 */
struct config {
	char *db_path;			/* db */
	int64_t interval_ns;		/* interval: one transaction each */
	int64_t duration_ns;		/* duration: 0 runs until stopped */
	char *instance;			/* instance: our tracefs instance */
	uint64_t buffer_size_kb;	/* buffer_size_kb: per CPU, learning events */
	int64_t drain_ns;		/* drain_interval: how often the ring buffer is read */
	uint64_t page_pair_shift;	/* page_pair_shift: learn 1 pfn in 2^N */
	uint64_t max_page_pairs;	/* max_page_pairs: per boot */
	uint64_t max_locks;		/* max_locks: lock addresses in memory (LRU) */
	uint64_t max_held_records;	/* max_held_records: stream records between drains */
	bool learn_mm;
	bool learn_pages;
	bool learn_locks;
	int64_t switch_sample_ns;	/* sched_switch sampling per window slice; 0: none */
	char *record_mode;		/* "windowed" or "continuous" */
	int64_t window_ns;		/* armed time per interval (windowed) */
	uint64_t window_slices;		/* ... in this many slices */
	double overhead_budget;		/* fraction of the host's CPU time */
	double fleet_share;		/* fraction of intervals with windows */
	int64_t spike_check_ns;		/* free counters read this often for spikes; 0: never */
	uint64_t spike_factor;		/* a spike: rate over this x the median; 0: off */
	uint64_t spike_min_rate;	/* ... and over this many events/s per CPU */
	int64_t spike_window_ns;	/* the extra window a spike opens */
	int64_t spike_holdoff_ns;	/* at most one extra window this often */
	double quiet_cpu;		/* host busy under this share of a CPU: quiet */
	int64_t quiet_learn_ns;		/* a quiet host's window (learning) this often */
	char *count_events;		/* count_events: extra "sys:event" list */
	int64_t retention_detail_ns;	/* per-line and /proc detail */
	int64_t retention_raw_ns;	/* whole intervals */
	int64_t retention_rollup_ns;	/* hourly rollups */
	uint64_t max_db_size;		/* bytes; 0: no budget */
	uint64_t cpu_budget_pct;	/* of one CPU; warn above it (the process only) */
	char *metrics_file;		/* OpenMetrics textfile; "" for none */
	char *sample_events;		/* "" the PMU's, "none" no sampling */
	uint64_t sample_freq;		/* Hz per CPU while sampling */
	uint64_t sample_period;		/* events per sample; 0: use sample_freq */
	int64_t sample_window_ns;	/* sample this long ... */
	int64_t sample_every_ns;	/* ... out of every this long */
	uint64_t sample_budget_ppm;	/* CPU share the sampling may cost */
	bool keep_user_lines;		/* store user-space samples per line */
	bool analyze;			/* attribute after every interval */
	int64_t stop_retry_ns;		/* stop_retry: final write retried this long */
	bool snapshots;			/* snapshots: the flight recorder */
	char *snapshot_dir;		/* snapshot_dir: where its trace.dat files go */
	uint64_t snapshot_max_count;	/* snapshot_max_count: files kept there */
	uint64_t snapshot_max_size;	/* snapshot_max_size: bytes kept there */
	uint64_t snapshot_buffer_kb;	/* snapshot_buffer_kb: its ring, per CPU */
	char *ship_url;			/* mmhitm ship's cluster; "" for none */
	char *ship_credentials;		/* "user:password" file, root-only; "" for none */
	bool ship_required;		/* retention keeps what ship has not sent */
	int64_t ship_rollup_ns;		/* grain of the roll-ups ship sends; 0: none */
	int log_level;
};

static inline bool config_windowed(const struct config *c)
{
	return c->record_mode && c->record_mode[0] == 'w';
}

/* Fills in the defaults. Caller frees the strings with config_done(). */
void config_init(struct config *c);
void config_done(struct config *c);

/*
 * Sets one option by key from a string, as the file or a flag gives it.
 * On error returns -EINVAL (unknown key: -ENOENT) and writes why to err;
 * a key or value with a control character is refused without quoting it
 * (a terminal would act on an escape sequence in the message).
 */
int config_set(struct config *c, const char *key, const char *value, char *err, size_t errlen);

/*
 * Reads a config file: "key = value" lines, '#' comments, blank lines.
 * A missing file is fine unless must_exist. Every bad line is logged as
 * "path:line: why" (a line with a NUL byte or a control character, a key
 * set twice are bad lines too); returns -EINVAL if there was any.
 */
int config_load(struct config *c, const char *path, bool must_exist);

/* Cross-option checks after everything is set. Logs; returns -EINVAL. */
int config_verify(const struct config *c);

/* Prints the effective configuration in the file format. */
void config_dump(const struct config *c, FILE *f);

/* The option table, for building getopt_long options and --help. */
struct config_option_info {
	const char *key;
	const char *arg;	/* placeholder for help, e.g. "DURATION" */
	const char *help;
};
const struct config_option_info *config_option_info(unsigned int i);	/* NULL past the end */

struct option;
/*
 * A getopt_long() table: the n_fixed entries of fixed, then each config
 * key twice, as --key-with-dashes and --key_as_in_the_file, with val =
 * base + its index; zero-terminated. Caller frees with
 * config_longopts_free().
 */
struct option *config_longopts_new(const struct option *fixed, size_t n_fixed, int base);
void config_longopts_free(struct option *o);

/* The database the mmhitm commands read: $MMHITM_DB, else the daemon's default. */
const char *default_db_path(void);

/* The value `mmhitm snapshot` sends with SIGUSR1 (sigqueue) to ask mmhitmd
 * for a flight-recorder snapshot: a request, not a bare signal. "SNAP". */
#define FLIGHT_REQUEST_MAGIC 0x534e4150

#endif
