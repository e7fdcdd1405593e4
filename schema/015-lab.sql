-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 15: the patch author's bench (`mmhitm lab`).
-- A lab is a protocol: one reproducer of mmhitm-load at a list of
-- configurations, each run `runs` times on each of `boots` boots of two
-- kernels, the base and the patched. Its state is these rows, so it
-- survives the reboots it needs: `mmhitm lab run` on a boot runs what that
-- boot still lacks. Each run keeps its time span, so the HITM and work
-- mmhitmd recorded during it are found by span (the intervals it cut at
-- the run's edges), not by interval.

CREATE TABLE labs (
	lab_id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE,
	reproducer	TEXT NOT NULL,		-- mmhitm-load's command: 'ctxswitch', ...
	path		TEXT NOT NULL,		-- the path it reproduces: 'P1'
	runs		INTEGER NOT NULL,	-- runs of each configuration per boot
	boots		INTEGER NOT NULL,	-- boots of each kernel
	duration_ns	INTEGER,		-- each run's --duration; NULL: --loops
	loops		INTEGER,		-- each run's --loops, or NULL
	created_ns	INTEGER NOT NULL
);

-- The configurations, in the table's order. `at` is the row's number (P1:
-- CPUs, P2: processes, P3 and P4: threads); a control (P1: one process per
-- CPU, --private-mm) sits beside the configuration with its `at`.
CREATE TABLE lab_configs (
	lab_id		INTEGER NOT NULL REFERENCES labs ON DELETE CASCADE,
	config		INTEGER NOT NULL,	-- 0, 1, ...
	at		INTEGER NOT NULL,
	control		INTEGER NOT NULL DEFAULT 0,
	args		TEXT NOT NULL,		-- mmhitm-load's arguments after the command
	PRIMARY KEY (lab_id, config)
) WITHOUT ROWID;

-- Each boot a lab ran on: its kernel (uname -r and -v), the side that
-- kernel is ('base' or 'patched'), and its place among that kernel's boots.
CREATE TABLE lab_boots (
	lab_id		INTEGER NOT NULL REFERENCES labs ON DELETE CASCADE,
	boot_uuid	TEXT NOT NULL,		-- /proc/sys/kernel/random/boot_id
	kernel_release	TEXT NOT NULL,
	kernel_version	TEXT NOT NULL,
	side		TEXT NOT NULL CHECK (side IN ('base', 'patched')),
	seq		INTEGER NOT NULL,	-- 1: this kernel's first boot in the lab
	started_ns	INTEGER NOT NULL,
	done_ns		INTEGER,		-- every run done; NULL: not yet
	PRIMARY KEY (lab_id, boot_uuid)
) WITHOUT ROWID;

-- One row per run, written once it ended: the span it ran in (wall clock)
-- and the reproducer's result. value is NULL when the run failed or was
-- cut short, and error says why; such a run is run again.
CREATE TABLE lab_runs (
	lab_id		INTEGER NOT NULL,
	boot_uuid	TEXT NOT NULL,
	config		INTEGER NOT NULL,
	run		INTEGER NOT NULL,	-- 1..runs
	start_ns	INTEGER NOT NULL,
	end_ns		INTEGER NOT NULL,
	value		REAL,
	metric		TEXT,			-- 'context_switches_per_s_per_cpu'
	unit		TEXT,			-- '/s/CPU'
	higher_is_better INTEGER,
	error		TEXT,
	PRIMARY KEY (lab_id, boot_uuid, config, run),
	FOREIGN KEY (lab_id, boot_uuid) REFERENCES lab_boots ON DELETE CASCADE
) WITHOUT ROWID;

-- Every run with its lab, configuration and boot.
CREATE VIEW lab_results AS
SELECT	l.name AS lab, l.reproducer, l.path, c.config, c.at, c.control, c.args,
	b.side, b.kernel_release, b.seq AS boot, r.boot_uuid, r.run,
	strftime('%Y-%m-%dT%H:%M:%SZ', r.start_ns / 1000000000, 'unixepoch') AS start,
	(r.end_ns - r.start_ns) / 1e9 AS seconds, r.value, r.metric, r.unit,
	r.higher_is_better, r.error, r.start_ns, r.end_ns
FROM lab_runs r
JOIN labs l USING (lab_id)
JOIN lab_configs c ON c.lab_id = r.lab_id AND c.config = r.config
JOIN lab_boots b ON b.lab_id = r.lab_id AND b.boot_uuid = r.boot_uuid;

-- The intervals of a run: those of its boot that lie mostly inside its
-- span (mmhitm lab asks mmhitmd to end an interval at each edge of a run,
-- so the run's own intervals lie wholly in it, and a longer interval
-- around several runs belongs to none of them).
CREATE VIEW lab_run_intervals AS
SELECT	r.lab_id, r.boot_uuid, r.config, r.run, i.interval_id
FROM lab_runs r
JOIN boots b ON b.boot_uuid = r.boot_uuid
JOIN intervals i ON i.boot_id = b.boot_id
WHERE i.end_ns > r.start_ns AND i.start_ns < r.end_ns
  AND 2 * (min(i.end_ns, r.end_ns) - max(i.start_ns, r.start_ns)) > i.end_ns - i.start_ns;
