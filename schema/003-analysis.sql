-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 3: what `mmhitm analyze` derives from the raw
-- tables. Everything here can be deleted and rebuilt (`analyze --rebuild`).

-- The four paths DESIGN.md tracks and the unit of work each is normalized by.
CREATE TABLE paths (
	path		TEXT PRIMARY KEY,	-- 'P1'..'P4'
	title		TEXT NOT NULL,
	work_unit	TEXT NOT NULL,		-- what `work` counts
	per		REAL NOT NULL		-- rates are HITM per this many units
);
INSERT INTO paths VALUES
 ('P1', 'mglru: redundant mm->lru_gen.bitmap store in lru_gen_use_mm()',
	'same-mm context switches', 1000),
 ('P2', 'mglru: folio->flags cmpxchg when nothing changes (aging walk)',
	'aging passes', 1),
 ('P3', 'swap: active flag set when staged in the activate batch',
	'folio activations', 1000),
 ('P4', 'maybe_lru_add_drain(): drain only when enough folios are pending',
	'TLB flushes and zaps', 1000);

-- Where analysis of a boot stands, and with which rules.
CREATE TABLE analysis_state (
	boot_id		INTEGER PRIMARY KEY REFERENCES boots ON DELETE CASCADE,
	last_interval_id INTEGER NOT NULL,	-- intervals up to here are analyzed
	rules_digest	TEXT NOT NULL,		-- a rules change means --rebuild
	analyzed_ns	INTEGER NOT NULL,
	vmemmap_base	INTEGER,		-- NULL: not calibrated
	struct_page_size INTEGER,
	calibration	TEXT			-- 'N of M pairs agree', or why none
);

-- Each sampled (line, offset, ip, callchain) typed and attributed.
CREATE TABLE line_attribution (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	line_addr	INTEGER NOT NULL,
	offset		INTEGER NOT NULL,
	ip		INTEGER NOT NULL,
	callchain_id	INTEGER NOT NULL,
	object_type	TEXT,			-- 'mm_struct', 'page', 'lruvec'; NULL: unknown
	object_ref	INTEGER,		-- mm_objects.mm_object_id, pfn, lock_objects.lock_object_id
	field		TEXT,			-- 'lru_gen.bitmap', 'flags', 'lru_lock', ...
	field_offset	INTEGER,		-- byte offset inside the field
	symbol		TEXT,			-- ip as symbol+0xoff
	path		TEXT NOT NULL,		-- 'P1'..'P4', 'other:<object>', 'unresolved'
	reason		TEXT,			-- the rule that matched, or why unresolved
	PRIMARY KEY (interval_id, line_addr, offset, ip, callchain_id)
) WITHOUT ROWID;

-- Per interval and path: the HITM attributed and the path's own work.
-- HITM columns are NULL when the interval had no sampling (no PMU): not
-- measured is not zero.
CREATE TABLE path_intervals (
	interval_id	INTEGER NOT NULL REFERENCES intervals ON DELETE CASCADE,
	path		TEXT NOT NULL,		-- 'P1'..'P4', 'other:<object>', 'unresolved'
	lcl_hitm	INTEGER,
	rmt_hitm	INTEGER,
	peer		INTEGER,
	samples		INTEGER,		-- every memory sample attributed here
	work		REAL,			-- units of paths.work_unit; NULL for other/unresolved
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
	i.start_ns, i.end_ns
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
	a.line_addr, min(i.start_ns) AS first_ns, max(i.end_ns) AS last_ns
FROM line_attribution a
JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)
JOIN intervals i USING (interval_id)
LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref
GROUP BY i.boot_id, a.line_addr, a.object_type, a.field, a.path;
