-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 5: the analysis tables as `mmhitm analyze`
-- writes them (version 3 was their draft). Everything here is derived from
-- the raw tables and rebuilt by `mmhitm analyze --rebuild`, so the draft's
-- tables are dropped, not converted. The paths table of version 3 stays.

DROP VIEW top_lines;
DROP VIEW path_rates;
DROP TABLE line_attribution;
DROP TABLE path_intervals;
DROP TABLE analysis_state;

-- Where analysis of a boot stands, and with which rules.
CREATE TABLE analysis_state (
	boot_id		INTEGER PRIMARY KEY REFERENCES boots ON DELETE CASCADE,
	last_interval_id INTEGER NOT NULL,	-- intervals up to here are analyzed
	rules_digest	TEXT NOT NULL,		-- a rules change means --rebuild
	mixed_rules	INTEGER NOT NULL DEFAULT 0, -- 1: later intervals used other rules
	analyzed_ns	INTEGER NOT NULL,
	vmemmap_base	INTEGER,		-- NULL: not calibrated
	struct_page_size INTEGER,
	calibration	TEXT,			-- 'N of M pairs agree ...', or why none
	object_boots	TEXT,			-- boots whose learned objects were used ('1 3')
	knowledge	TEXT			-- what was known (objects, symbols) at the last run:
						-- when it grows, unresolved rows are retried
);

-- Objects the analyzer located from anchors (rules.conf): a sample whose
-- context proves it touched STRUCT.FIELD puts the object at address minus
-- the field's offset. lruvecs are found this way.
CREATE TABLE anchored_objects (
	anchored_object_id INTEGER PRIMARY KEY,
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	struct		TEXT NOT NULL,		-- 'lruvec'
	addr		INTEGER NOT NULL,	-- the object's start
	size		INTEGER NOT NULL,	-- BTF sizeof
	lock_object_id	INTEGER REFERENCES lock_objects ON DELETE SET NULL, -- its contended lock, if seen
	evidence	TEXT NOT NULL,		-- anchor names that placed it, e.g. 'lruvec-lru-lock'
	samples		INTEGER NOT NULL,	-- anchoring mem_lines rows
	first_interval_id INTEGER,
	UNIQUE (boot_id, struct, addr)
);

-- Each sampled kernel (line, offset, ip, callchain) typed and attributed.
CREATE TABLE line_attribution (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	line_addr	INTEGER NOT NULL,
	offset		INTEGER NOT NULL,
	ip		INTEGER NOT NULL,
	callchain_id	INTEGER NOT NULL,
	object_type	TEXT,			-- 'mm_struct', 'page', 'lruvec'; NULL: unknown
	object_ref	INTEGER,		-- mm_objects.mm_object_id, the pfn, or
						-- anchored_objects.anchored_object_id
	object_addr	INTEGER,		-- the object's start
	object_offset	INTEGER,		-- data address - object_addr
	field		TEXT,			-- 'lru_gen.bitmap', 'flags', 'lru_lock', 'lists[4]'
	field_offset	INTEGER,		-- byte offset inside the field
	symbol		TEXT,			-- ip as symbol+0xoff [module]; NULL: not in ksyms
	path		TEXT NOT NULL,		-- 'P1'..'P4', 'other:<object>', 'unresolved'
	rule		TEXT,			-- the rule that matched (rules.conf name)
	reason		TEXT,			-- how the address was typed, or why it was not
	PRIMARY KEY (interval_id, line_addr, offset, ip, callchain_id)
) WITHOUT ROWID;
CREATE INDEX line_attribution_by_path ON line_attribution (path, interval_id);

-- Callchains as symbols, innermost first ('a+0x1f <- b+0x40 <- ...').
CREATE TABLE callchain_symbols (
	callchain_id	INTEGER PRIMARY KEY REFERENCES callchains ON DELETE CASCADE,
	symbols		TEXT NOT NULL
);

-- Per interval and path: the HITM attributed and the path's own work.
-- HITM columns are NULL when the interval had no sampling (no PMU): not
-- measured is not zero. Rows for P1..P4 exist for every analyzed interval
-- (with work even when HITM is NULL); other:* and unresolved rows only
-- where samples landed.
CREATE TABLE path_intervals (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	path		TEXT NOT NULL,		-- 'P1'..'P4', 'other:<object>', 'unresolved'
	lcl_hitm	INTEGER,
	rmt_hitm	INTEGER,
	peer		INTEGER,		-- lcl_peer + rmt_peer
	samples		INTEGER,		-- memory samples attributed here (loads + stores + noparse)
	work		REAL,			-- units of paths.work_unit; NULL: not counted
						-- (or other/unresolved)
	work_source	TEXT,			-- the counter behind work, e.g. 'sched:sched_switch'
	PRIMARY KEY (interval_id, path)
) WITHOUT ROWID;

CREATE VIEW path_rates AS
SELECT	p.interval_id, i.boot_id, h.hostname, b.kernel_release,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	p.path, p.lcl_hitm + p.rmt_hitm + p.peer AS hitm,
	p.lcl_hitm, p.rmt_hitm, p.peer, p.samples,
	(p.lcl_hitm + p.rmt_hitm + p.peer) * 1.0 / nullif((SELECT sum(q.lcl_hitm + q.rmt_hitm + q.peer)
		FROM path_intervals q WHERE q.interval_id = p.interval_id), 0) AS share,
	p.work, t.work_unit,
	(p.lcl_hitm + p.rmt_hitm + p.peer) * t.per / nullif(p.work, 0) AS hitm_per_work,
	t.per AS per_work_units,
	i.start_ns, i.end_ns, p.work_source
FROM path_intervals p
JOIN intervals i USING (interval_id)
JOIN boots b USING (boot_id)
JOIN hosts h USING (host_id)
LEFT JOIN paths t USING (path);

CREATE VIEW top_lines AS
SELECT	i.boot_id, printf('0x%016x', a.line_addr) AS line,
	a.object_type, a.field, m.tgid, m.comm, a.path,
	sum(l.lcl_hitm) AS lcl_hitm, sum(l.rmt_hitm) AS rmt_hitm,
	sum(l.lcl_peer + l.rmt_peer) AS peer,
	sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS hitm,
	sum(l.loads) AS loads, sum(l.stores) AS stores,
	group_concat(DISTINCT a.symbol) AS symbols,
	a.line_addr, min(i.start_ns) AS first_ns, max(i.end_ns) AS last_ns,
	printf('0x%016x', a.object_addr) AS object, group_concat(DISTINCT a.rule) AS rules
FROM line_attribution a
JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)
JOIN intervals i USING (interval_id)
LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref
GROUP BY i.boot_id, a.line_addr, a.object_type, a.object_ref, a.object_addr, a.field, a.path;
