-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 2: memory-access samples (perf c2c's view).
--
-- Samples are aggregated per interval and per (cache line, offset in the
-- line, IP, callchain), with one counter per perf c2c class (the fields of
-- perf's struct c2c_stats, tools/perf/util/mem-events.h), so attribution
-- can be re-run when the rules improve without keeping raw streams.

-- What the sampler did in an interval (live) or what an import read.
CREATE TABLE sampling (
	interval_id	INTEGER PRIMARY KEY REFERENCES intervals ON DELETE CASCADE,
	pmu_events	TEXT,			-- e.g. 'cpu/mem-loads,ldlat=30/P,cpu/mem-stores/P'
	active_ns	INTEGER NOT NULL DEFAULT 0,	-- time sampling was on (duty cycle)
	samples		INTEGER NOT NULL DEFAULT 0,	-- every sample read
	samples_kernel	INTEGER NOT NULL DEFAULT 0,
	samples_user	INTEGER NOT NULL DEFAULT 0,	-- counted, stored per line only if configured
	lost		INTEGER NOT NULL DEFAULT 0,	-- samples lost: PERF_RECORD_LOST(_SAMPLES)
	throttled	INTEGER NOT NULL DEFAULT 0,	-- PERF_RECORD_THROTTLE records
	dropped		INTEGER NOT NULL DEFAULT 0	-- samples not stored per line: the
							-- interval's aggregate was full
);

-- Kernel callchains, innermost first, as space-separated hex IPs
-- ('0xffffffff8123abcd 0xffffffff81...'): kernel frames only (perf's
-- context markers dropped), the sample's own IP not repeated, at most
-- the sampler's configured depth. Interned per boot: mem_lines point here.
CREATE TABLE callchains (
	callchain_id	INTEGER PRIMARY KEY,
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	ips		TEXT NOT NULL,
	UNIQUE (boot_id, ips)
);

CREATE TABLE mem_lines (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	line_addr	INTEGER NOT NULL,	-- data address & ~(cache_line_size - 1)
	offset		INTEGER NOT NULL,	-- byte offset in the line
	ip		INTEGER NOT NULL,
	callchain_id	INTEGER NOT NULL DEFAULT 0,	-- 0: none captured
	kernel		INTEGER NOT NULL,	-- 1: kernel IP
	-- perf c2c classes, counted as tools/perf/util/mem-events.c:
	-- c2c_decode_stats() counts them (common/mem-decode.c); a sample can
	-- count in several (a remote HITM load is loads and rmt_hitm ...)
	loads		INTEGER NOT NULL DEFAULT 0,
	stores		INTEGER NOT NULL DEFAULT 0,
	locks		INTEGER NOT NULL DEFAULT 0,
	lcl_hitm	INTEGER NOT NULL DEFAULT 0,
	rmt_hitm	INTEGER NOT NULL DEFAULT 0,
	lcl_peer	INTEGER NOT NULL DEFAULT 0,
	rmt_peer	INTEGER NOT NULL DEFAULT 0,
	ld_fbhit	INTEGER NOT NULL DEFAULT 0,
	ld_l1hit	INTEGER NOT NULL DEFAULT 0,
	ld_l2hit	INTEGER NOT NULL DEFAULT 0,
	ld_llchit	INTEGER NOT NULL DEFAULT 0,
	rmt_hit		INTEGER NOT NULL DEFAULT 0,
	lcl_dram	INTEGER NOT NULL DEFAULT 0,
	rmt_dram	INTEGER NOT NULL DEFAULT 0,
	ld_excl		INTEGER NOT NULL DEFAULT 0,	-- DRAM loads, MESI exclusive
	ld_shared	INTEGER NOT NULL DEFAULT 0,	-- DRAM loads, MESI shared
	ld_uncache	INTEGER NOT NULL DEFAULT 0,
	ld_io		INTEGER NOT NULL DEFAULT 0,
	ld_miss		INTEGER NOT NULL DEFAULT 0,
	ld_noadrs	INTEGER NOT NULL DEFAULT 0,
	st_l1hit	INTEGER NOT NULL DEFAULT 0,
	st_l1miss	INTEGER NOT NULL DEFAULT 0,
	st_na		INTEGER NOT NULL DEFAULT 0,
	st_uncache	INTEGER NOT NULL DEFAULT 0,
	st_noadrs	INTEGER NOT NULL DEFAULT 0,
	blk_data	INTEGER NOT NULL DEFAULT 0,
	blk_addr	INTEGER NOT NULL DEFAULT 0,
	noparse		INTEGER NOT NULL DEFAULT 0,
	-- load latency (cycles; PERF_SAMPLE_WEIGHT, or WEIGHT_STRUCT's
	-- var1_dw) over the loads of events that record one, as perf c2c
	-- averages them (builtin-c2c.c: compute_stats())
	weight_sum	INTEGER NOT NULL DEFAULT 0,
	weight_n	INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (interval_id, line_addr, offset, ip, callchain_id)
) WITHOUT ROWID;

CREATE VIEW hitm_lines AS
SELECT	l.interval_id, i.boot_id,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	printf('0x%016x', l.line_addr) AS line, l.offset, printf('0x%016x', l.ip) AS ip_hex,
	l.kernel, l.lcl_hitm, l.rmt_hitm, l.lcl_peer + l.rmt_peer AS peer,
	l.lcl_hitm + l.rmt_hitm AS hitm, l.loads, l.stores,
	CASE WHEN l.weight_n > 0 THEN l.weight_sum * 1.0 / l.weight_n END AS mean_weight,
	l.line_addr, l.ip, l.callchain_id
FROM mem_lines l JOIN intervals i USING (interval_id);
