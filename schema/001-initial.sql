-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 1.
--
-- Conventions:
--  * Times are integers, nanoseconds since the Unix epoch (UTC), named *_ns.
--  * Kernel addresses are stored as their 64 bits in a signed INTEGER, so
--    0xffff888100000000 reads back negative; printf('0x%016x', addr) shows
--    it as hex, and ordering within the kernel half is preserved.
--  * Tables are the storage; the views at the end are the public query
--    surface and keep their names and columns across migrations.
--  * Per-interval rows hang off intervals with ON DELETE CASCADE, so
--    retention deletes intervals and nothing is left dangling.

CREATE TABLE hosts (
	host_id		INTEGER PRIMARY KEY,
	machine_id	TEXT NOT NULL UNIQUE,	-- /etc/machine-id
	hostname	TEXT NOT NULL
);

-- One row per kernel boot mmhitmd recorded (or per imported perf.data file).
-- A change of kernel between consecutive boots of a host is a rollout.
CREATE TABLE boots (
	boot_id			INTEGER PRIMARY KEY,
	host_id			INTEGER NOT NULL REFERENCES hosts,
	boot_uuid		TEXT NOT NULL,	-- /proc/sys/kernel/random/boot_id
	source			TEXT NOT NULL DEFAULT 'live', -- 'live' or 'import'
	boot_time_ns		INTEGER,	-- btime from /proc/stat
	first_seen_ns		INTEGER NOT NULL,
	last_seen_ns		INTEGER NOT NULL,
	kernel_release		TEXT NOT NULL,	-- uname -r
	kernel_version		TEXT NOT NULL,	-- uname -v
	kernel_build_id		TEXT,		-- GNU build-id from /sys/kernel/notes
	arch			TEXT NOT NULL,
	nr_cpus_online		INTEGER NOT NULL,
	nr_cpus_possible	INTEGER,
	cache_line_size		INTEGER NOT NULL,
	page_size		INTEGER NOT NULL,
	pmu_kind		TEXT NOT NULL,	-- 'intel-pebs', 'amd-ibs', 'arm-spe' or 'none'
	pmu_detail		TEXT,		-- the events used, or why there is no PMU
	lru_gen			TEXT NOT NULL,	-- 'on', 'off' or 'absent' (no CONFIG_LRU_GEN)
	lru_gen_features	TEXT,		-- /sys/kernel/mm/lru_gen/enabled, e.g. 0x0007
	btf			TEXT,		-- 'vmlinux', or why BTF is missing
	UNIQUE (host_id, boot_uuid)
);

-- Every tracepoint mmhitmd wanted on a boot: whether the kernel had it and
-- how it was used ('count': counted in the kernel; 'learn': streamed,
-- filtered, to learn objects).
CREATE TABLE boot_events (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	event		TEXT NOT NULL,		-- 'system:name'
	role		TEXT NOT NULL,		-- 'count' or 'learn'
	available	INTEGER NOT NULL,	-- 1 when in use
	detail		TEXT,			-- kernel filter, or why unavailable
	PRIMARY KEY (boot_id, event, role)
) WITHOUT ROWID;

-- Layout of the kernel fields attribution needs, from the boot's BTF.
-- field '' is the struct itself (offset 0, size = sizeof).
CREATE TABLE btf_layouts (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	struct		TEXT NOT NULL,		-- 'mm_struct', 'page', 'folio', 'lruvec'
	field		TEXT NOT NULL,		-- dotted path: 'lru_gen.bitmap'
	offset		INTEGER NOT NULL,	-- bytes from the struct start
	size		INTEGER NOT NULL,	-- bytes
	bit_offset	INTEGER NOT NULL DEFAULT 0,
	bit_size	INTEGER NOT NULL DEFAULT 0, -- non-zero for bitfields
	type		TEXT,
	PRIMARY KEY (boot_id, struct, field)
) WITHOUT ROWID;

-- Kernel symbols a boot's recorded addresses need (not the whole kallsyms).
CREATE TABLE ksyms (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	addr		INTEGER NOT NULL,
	size		INTEGER,		-- distance to the next symbol
	name		TEXT NOT NULL,
	module		TEXT,			-- NULL for vmlinux
	PRIMARY KEY (boot_id, addr)
) WITHOUT ROWID;

-- One row per recording interval (one transaction each).
CREATE TABLE intervals (
	interval_id	INTEGER PRIMARY KEY,
	boot_id		INTEGER NOT NULL REFERENCES boots,
	start_ns	INTEGER NOT NULL,
	end_ns		INTEGER NOT NULL,
	partial		INTEGER NOT NULL DEFAULT 0,	-- shorter than configured
	-- the collector's own health
	learn_records	INTEGER NOT NULL DEFAULT 0,	-- learning records read
	events_lost	INTEGER NOT NULL DEFAULT 0,	-- mm/page learning events overrun or dropped
	dropped_intervals INTEGER NOT NULL DEFAULT 0,	-- interval slots folded into this row
							-- (not written: disk full, DB locked)
	cpu_user_ns	INTEGER,			-- mmhitmd's own CPU time in the interval
	cpu_sys_ns	INTEGER,
	rss_kb		INTEGER,			-- mmhitmd's RSS at the end
	db_bytes	INTEGER,			-- database size before this interval
	-- system-wide, from /proc/stat
	ctxt		INTEGER,			-- context switches
	forks		INTEGER
);
CREATE INDEX intervals_by_boot ON intervals (boot_id, start_ns);
CREATE INDEX intervals_by_time ON intervals (start_ns);

CREATE TABLE event_names (
	event_id	INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE		-- 'system:name'
);

-- Counts of tracepoint hits in an interval, counted in the kernel.
CREATE TABLE event_counts (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	event_id	INTEGER NOT NULL REFERENCES event_names,
	count		INTEGER NOT NULL,
	PRIMARY KEY (interval_id, event_id)
) WITHOUT ROWID;

CREATE TABLE vmstat_names (
	vmstat_id	INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE
);

-- Non-zero /proc/vmstat changes over an interval (counters only rise;
-- gauges such as nr_free_pages can go down).
CREATE TABLE vmstat_deltas (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	vmstat_id	INTEGER NOT NULL REFERENCES vmstat_names,
	delta		INTEGER NOT NULL,
	PRIMARY KEY (interval_id, vmstat_id)
) WITHOUT ROWID;

-- MGLRU generations per memcg and node at the end of an interval, from
-- /sys/kernel/debug/lru_gen. max_seq advances once per aging pass.
CREATE TABLE lru_gen_progress (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	memcg_id	INTEGER NOT NULL,
	node		INTEGER NOT NULL,
	memcg_path	TEXT,
	min_seq		INTEGER NOT NULL,
	max_seq		INTEGER NOT NULL,
	max_seq_delta	INTEGER NOT NULL,	-- aging passes during the interval
	PRIMARY KEY (interval_id, memcg_id, node)
) WITHOUT ROWID;

-- mm_struct objects learned from kmem_cache_alloc/free ('fork', 'exec')
-- and from mmap_lock events of objects older than the daemon ('mmap_lock').
-- An address is one object only for [alloc_ns, free_ns); where NULLs leave
-- two rows of one address overlapping (a daemon restart), the row with the
-- latest first_seen_ns at or before a time is the one alive then.
CREATE TABLE mm_objects (
	mm_object_id	INTEGER PRIMARY KEY,
	boot_id		INTEGER NOT NULL REFERENCES boots,
	addr		INTEGER NOT NULL,
	tgid		INTEGER,
	comm		TEXT,
	memcg_id	INTEGER,		-- mmap_lock events' memcg_id field, where the kernel has it
	memcg_path	TEXT,			-- mmap_lock events' memcg_path field (older kernels)
	learned_from	TEXT NOT NULL,		-- 'fork', 'exec', 'mmap_lock'; 'alloc': owner unknown
	alloc_ns	INTEGER,		-- NULL: allocated before it was watched
	free_ns		INTEGER,		-- NULL: not freed while watched
	first_seen_ns	INTEGER NOT NULL,
	last_seen_ns	INTEGER NOT NULL,
	UNIQUE (boot_id, addr, first_seen_ns)
);

-- (folio, pfn) pairs from pagemap events: the vmemmap base is
-- folio - pfn * sizeof(struct page) for every one of them.
CREATE TABLE page_pairs (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	pfn		INTEGER NOT NULL,
	folio_addr	INTEGER NOT NULL,
	seen_ns		INTEGER NOT NULL,
	PRIMARY KEY (boot_id, pfn)
) WITHOUT ROWID;

-- Lock addresses from lock:contention_begin; the callchain, when one was
-- captured, tells what the lock is (folio_batch_move_lru: lruvec.lru_lock).
CREATE TABLE lock_objects (
	lock_object_id	INTEGER PRIMARY KEY,
	boot_id		INTEGER NOT NULL REFERENCES boots,
	addr		INTEGER NOT NULL,
	flags		INTEGER NOT NULL,	-- LCB_F_* of the first contention
	contentions	INTEGER NOT NULL,	-- streamed contention_begin records
	callchain	TEXT,			-- hex IPs, innermost first
	first_seen_ns	INTEGER NOT NULL,
	last_seen_ns	INTEGER NOT NULL,
	UNIQUE (boot_id, addr)
);

-- ---------------------------------------------------------------------
-- Views: the public query surface (see README).
-- ---------------------------------------------------------------------

CREATE VIEW boot_summary AS
SELECT	b.boot_id, h.hostname, h.machine_id, b.boot_uuid, b.source,
	b.kernel_release, b.kernel_version, b.kernel_build_id, b.arch,
	b.nr_cpus_online AS cpus, b.cache_line_size, b.page_size,
	b.pmu_kind, b.pmu_detail, b.lru_gen, b.lru_gen_features, b.btf,
	strftime('%Y-%m-%dT%H:%M:%SZ', b.first_seen_ns / 1000000000, 'unixepoch') AS first_seen,
	strftime('%Y-%m-%dT%H:%M:%SZ', b.last_seen_ns / 1000000000, 'unixepoch') AS last_seen,
	(SELECT count(*) FROM intervals i WHERE i.boot_id = b.boot_id) AS intervals
FROM boots b JOIN hosts h USING (host_id);

CREATE VIEW interval_summary AS
SELECT	i.interval_id, i.boot_id, h.hostname, b.kernel_release,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	(i.end_ns - i.start_ns) / 1e9 AS seconds,
	i.partial, i.learn_records, i.events_lost, i.dropped_intervals,
	(i.cpu_user_ns + i.cpu_sys_ns) / 1e9 AS daemon_cpu_s,
	i.rss_kb AS daemon_rss_kb, i.db_bytes, i.ctxt, i.forks,
	i.start_ns, i.end_ns
FROM intervals i JOIN boots b USING (boot_id) JOIN hosts h USING (host_id);

CREATE VIEW event_rates AS
SELECT	i.interval_id, i.boot_id,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	(i.end_ns - i.start_ns) / 1e9 AS seconds,
	n.name AS event, c.count,
	c.count * 1e9 / max(i.end_ns - i.start_ns, 1) AS per_second
FROM event_counts c JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id);

CREATE VIEW vmstat_changes AS
SELECT	i.interval_id, i.boot_id,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	n.name, d.delta,
	d.delta * 1e9 / max(i.end_ns - i.start_ns, 1) AS per_second
FROM vmstat_deltas d JOIN intervals i USING (interval_id) JOIN vmstat_names n USING (vmstat_id);

CREATE VIEW event_availability AS
SELECT	boot_id, event, role, available, detail FROM boot_events;

CREATE VIEW mm_structs AS
SELECT	m.mm_object_id, m.boot_id, printf('0x%016x', m.addr) AS address,
	m.tgid, m.comm, m.memcg_id, m.memcg_path, m.learned_from,
	strftime('%Y-%m-%dT%H:%M:%SZ', m.alloc_ns / 1000000000, 'unixepoch') AS allocated,
	strftime('%Y-%m-%dT%H:%M:%SZ', m.free_ns / 1000000000, 'unixepoch') AS freed,
	m.free_ns IS NULL AS live, m.addr, m.alloc_ns, m.free_ns, m.first_seen_ns, m.last_seen_ns
FROM mm_objects m;

-- Every (folio, pfn) pair votes for a vmemmap base; one base with all the
-- votes is a consistent calibration.
CREATE VIEW vmemmap_calibration AS
SELECT	p.boot_id, printf('0x%016x', p.folio_addr - p.pfn * l.size) AS vmemmap_base,
	l.size AS struct_page_size, count(*) AS pairs,
	p.folio_addr - p.pfn * l.size AS base
FROM page_pairs p
JOIN btf_layouts l ON l.boot_id = p.boot_id AND l.struct = 'page' AND l.field = ''
GROUP BY p.boot_id, base;

CREATE VIEW lock_addresses AS
SELECT	lock_object_id, boot_id, printf('0x%016x', addr) AS address, flags,
	contentions, callchain,
	strftime('%Y-%m-%dT%H:%M:%SZ', first_seen_ns / 1000000000, 'unixepoch') AS first_seen,
	addr
FROM lock_objects;

CREATE VIEW lru_gen_aging AS
SELECT	i.interval_id, i.boot_id,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	g.memcg_id, g.memcg_path, g.node, g.min_seq, g.max_seq,
	g.max_seq_delta AS aging_passes
FROM lru_gen_progress g JOIN intervals i USING (interval_id);

CREATE VIEW field_layouts AS
SELECT	boot_id, struct, field, offset, printf('0x%x', offset) AS hex_offset,
	size, bit_offset, bit_size, type
FROM btf_layouts;
