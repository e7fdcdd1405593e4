-- SPDX-License-Identifier: GPL-2.0
--
-- Roll-ups: what `mmhitm report --source clickhouse://` reads. A fleet of
-- 10,000 hosts at 60 s intervals is ~100 M intervals a week; the weekly
-- verdicts need far less, so `mmhitm ship` also sends each host's intervals
-- summed into buckets of grain_s seconds (ship_rollup, 10 minutes by
-- default), and the report computes from those. `mmhitm report --rollup`
-- on SQLite files computes from the same buckets, so both sources give the
-- same numbers.
--
-- A bucket is [bucket_ns, bucket_ns + grain_s) of one boot, aligned to the
-- epoch: bucket_ns = intDiv(start_ns, grain_ns) * grain_ns of the intervals
-- it holds (an interval belongs to the bucket its start falls in). Only
-- final buckets are sent: the boot has an interval starting at or after
-- the bucket's end (or the host booted again), and every interval of the
-- bucket is analyzed; so a bucket is written once, or again with a higher
-- batch after `analyze --rebuild` and `ship --resend`. common/rollup.c
-- is the one definition (ship and report --rollup). Same exactly-once
-- rules as 001-tables.sql: read with FINAL (on 18.16, FINAL over the
-- Distributed table needs the batch column in the select list: select
-- from a subquery that keeps it).

-- One row per bucket: the intervals' health and sampling summed.
CREATE TABLE IF NOT EXISTS {db}.interval_rollup_local (
	machine_id	String,
	boot_uuid	String,
	grain_s		UInt32,
	bucket_ns	Int64,
	start_ns	Int64,		-- first interval's start
	end_ns		Int64,		-- last interval's end
	intervals	UInt32,		-- intervals summed
	partial		UInt32,		-- of those, partial ones
	not_analyzed	UInt32,		-- of those, without path rows
	events_lost	Int64,
	dropped_intervals Int64,
	sampled		UInt32,		-- intervals with a sampling row
	active_ns	Int64,		-- their sampling active time, summed
	samples_lost	Int64,
	throttled	Int64,
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(bucket_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, grain_s, bucket_ns);
CREATE TABLE IF NOT EXISTS {db}.interval_rollup AS {db}.interval_rollup_local
	ENGINE = Distributed({cluster}, {db}, interval_rollup_local, cityHash64(machine_id));

-- One row per bucket and path: HITM and work summed over the bucket's
-- analyzed intervals. When any interval measured both, hitm and work (and
-- work_seconds) are summed over those intervals only: a window's HITM is
-- never divided by the work of intervals without a window. Otherwise hitm
-- is NULL when no interval measured HITM (no PMU), and work is NULL when
-- some measured HITM (no rate in the bucket) or none measured the path's
-- work. The rate is hitm * per / work with per from the path table, as
-- path_rates computes it per interval.
CREATE TABLE IF NOT EXISTS {db}.path_rollup_local (
	machine_id	String,
	boot_uuid	String,
	grain_s		UInt32,
	bucket_ns	Int64,
	path		String,
	intervals	UInt32,		-- analyzed intervals with a row for the path
	hitm		Nullable(Int64),	-- lcl_hitm + rmt_hitm + peer
	samples		Nullable(Int64),
	work		Nullable(Float64),
	work_seconds	Float64,	-- summed length of the intervals with work
	batch		UInt64
) ENGINE = ReplacingMergeTree(batch)
	PARTITION BY toYYYYMM(toDateTime(intDiv(bucket_ns, 1000000000)))
	ORDER BY (machine_id, boot_uuid, grain_s, bucket_ns, path);
CREATE TABLE IF NOT EXISTS {db}.path_rollup AS {db}.path_rollup_local
	ENGINE = Distributed({cluster}, {db}, path_rollup_local, cityHash64(machine_id));
