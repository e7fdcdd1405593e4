-- SPDX-License-Identifier: GPL-2.0
--
-- The cluster's tables, what `mmhitm ship` sends. `mmhitm ship --init`
-- runs this file on the server it is given, statement by statement, with
-- {db} and {cluster} replaced; without ZooKeeper there is no ON CLUSTER
-- DDL, so run it once against every server of the cluster.
--
-- Each table is a local ReplacingMergeTree (<name>_local) on every shard
-- plus a Distributed table <name> over the cluster, sharded by host
-- (cityHash64(machine_id)): every row of a host is on one shard, so a
-- per-host join or aggregate is local to a shard and a resent row lands
-- where its first copy did.
--
-- Exactly once: the ORDER BY key is the row's natural key (host, boot,
-- interval start, ...), never a local SQLite id, and `batch` (the
-- shipper's batch number, growing per table) is the version. A batch sent
-- again after a crash between send and acknowledge has the same key and
-- the same batch and collapses into one row; a row sent again later
-- (`mmhitm ship --resend`, after `mmhitm analyze --rebuild`) has a higher
-- batch and replaces the old one. ReplacingMergeTree collapses only when
-- parts merge, so every query must stay exact before that: read with FINAL
-- (SELECT ... FROM {db}.intervals FINAL), or GROUP BY the key and take
-- argMax(column, batch).
--
-- Works on ClickHouse 18.16 (Debian 12) and current releases: no window
-- functions, no experimental types, MergeTree's PARTITION BY/ORDER BY
-- syntax. Times are ns since the epoch (Int64), kernel addresses Int64 as
-- in SQLite (negative); NULL where SQLite has NULL (not measured).

CREATE DATABASE IF NOT EXISTS {db};

-- One row per host (/etc/machine-id).
CREATE TABLE IF NOT EXISTS {db}.hosts_local (
	machine_id	String,
	hostname	String,
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch) ORDER BY machine_id;
CREATE TABLE IF NOT EXISTS {db}.hosts AS {db}.hosts_local
	ENGINE = Distributed({cluster}, {db}, hosts_local, cityHash64(machine_id));

-- One row per boot, resent while last_seen_ns grows (the newest batch wins).
CREATE TABLE IF NOT EXISTS {db}.boots_local (
	machine_id	String,
	boot_uuid	String,
	source		String,
	boot_time_ns	Nullable(Int64),
	first_seen_ns	Int64,
	last_seen_ns	Int64,
	kernel_release	String,
	kernel_version	String,
	kernel_build_id	Nullable(String),
	arch		String,
	nr_cpus_online	Int32,
	cache_line_size	Int32,
	page_size	Int32,
	pmu_kind	String,
	pmu_detail	Nullable(String),
	lru_gen		String,
	btf		Nullable(String),
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch) ORDER BY (machine_id, boot_uuid);
CREATE TABLE IF NOT EXISTS {db}.boots AS {db}.boots_local
	ENGINE = Distributed({cluster}, {db}, boots_local, cityHash64(machine_id));

-- The kernel symbols a boot's records need (the patch map's `ksym` rules
-- look for a symbol a patch adds).
CREATE TABLE IF NOT EXISTS {db}.ksyms_local (
	machine_id	String,
	boot_uuid	String,
	addr		Int64,
	size		Nullable(Int64),
	name		String,
	module		Nullable(String),
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch) ORDER BY (machine_id, boot_uuid, addr);
CREATE TABLE IF NOT EXISTS {db}.ksyms AS {db}.ksyms_local
	ENGINE = Distributed({cluster}, {db}, ksyms_local, cityHash64(machine_id));

-- One row per recording interval, with the recorder's health and what the
-- memory sampler did (sampled = 0: no sampling row, no PMU).
CREATE TABLE IF NOT EXISTS {db}.intervals_local (
	machine_id	String,
	boot_uuid	String,
	start_ns	Int64,
	end_ns		Int64,
	partial		UInt8,
	learn_records	Int64,
	events_lost	Int64,
	dropped_intervals Int64,
	detail_dropped	UInt8,
	cpu_user_ns	Nullable(Int64),
	cpu_sys_ns	Nullable(Int64),
	rss_kb		Nullable(Int64),
	db_bytes	Nullable(Int64),
	ctxt		Nullable(Int64),
	forks		Nullable(Int64),
	armed_ns	Nullable(Int64),
	slices		Nullable(Int64),
	armed		Nullable(String),
	est_cost_ns	Nullable(Int64),
	window_note	Nullable(String),
	sampled		UInt8,
	active_ns	Nullable(Int64),
	samples		Nullable(Int64),
	samples_lost	Nullable(Int64),
	throttled	Nullable(Int64),
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(start_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, start_ns);
CREATE TABLE IF NOT EXISTS {db}.intervals AS {db}.intervals_local
	ENGINE = Distributed({cluster}, {db}, intervals_local, cityHash64(machine_id));

-- Tracepoint and derived counts per interval (event_rates' columns).
CREATE TABLE IF NOT EXISTS {db}.event_counts_local (
	machine_id	String,
	boot_uuid	String,
	start_ns	Int64,
	event		String,
	count		Int64,
	method		String,
	counted		Nullable(Int64),
	variance	Float64,
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(start_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, start_ns, event);
CREATE TABLE IF NOT EXISTS {db}.event_counts AS {db}.event_counts_local
	ENGINE = Distributed({cluster}, {db}, event_counts_local, cityHash64(machine_id));

-- Non-zero /proc/vmstat changes per interval.
CREATE TABLE IF NOT EXISTS {db}.vmstat_deltas_local (
	machine_id	String,
	boot_uuid	String,
	start_ns	Int64,
	name		String,
	delta		Int64,
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(start_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, start_ns, name);
CREATE TABLE IF NOT EXISTS {db}.vmstat_deltas AS {db}.vmstat_deltas_local
	ENGINE = Distributed({cluster}, {db}, vmstat_deltas_local, cityHash64(machine_id));

-- Per analyzed interval and path: HITM and the path's work (path_rates'
-- inputs; hitm_per_work = (lcl_hitm + rmt_hitm + peer) * per / work with
-- per from the paths table of the SQLite schema).
CREATE TABLE IF NOT EXISTS {db}.path_intervals_local (
	machine_id	String,
	boot_uuid	String,
	start_ns	Int64,
	end_ns		Int64,
	path		String,
	lcl_hitm	Nullable(Int64),
	rmt_hitm	Nullable(Int64),
	peer		Nullable(Int64),
	samples		Nullable(Int64),
	work		Nullable(Float64),
	work_source	Nullable(String),
	work_stderr	Nullable(Float64),
	work_share	Nullable(Float64),
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(start_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, start_ns, path);
CREATE TABLE IF NOT EXISTS {db}.path_intervals AS {db}.path_intervals_local
	ENGINE = Distributed({cluster}, {db}, path_intervals_local, cityHash64(machine_id));

-- Attributed HITM lines: line_attribution with its mem_lines counts and the
-- owning process of an mm_struct, per analyzed interval.
CREATE TABLE IF NOT EXISTS {db}.hitm_lines_local (
	machine_id	String,
	boot_uuid	String,
	start_ns	Int64,
	line_addr	Int64,
	offset		Int32,
	ip		Int64,
	callchain	String,
	object_type	Nullable(String),
	field		Nullable(String),
	symbol		Nullable(String),
	path		String,
	rule		Nullable(String),
	grade		Nullable(String),	-- how the line was typed (object, layout, path)
	tgid		Nullable(Int64),
	comm		Nullable(String),
	loads		Int64,
	stores		Int64,
	lcl_hitm	Int64,
	rmt_hitm	Int64,
	lcl_peer	Int64,
	rmt_peer	Int64,
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(start_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, start_ns, line_addr, offset, ip, callchain);
CREATE TABLE IF NOT EXISTS {db}.hitm_lines AS {db}.hitm_lines_local
	ENGINE = Distributed({cluster}, {db}, hitm_lines_local, cityHash64(machine_id));
