-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 14: every rate says what it is per, and why it
-- is missing. A path's work comes from the first of its work sources a
-- boot records, and the sources count different things (P1: mmhitmd's
-- same-mm switches, or all switches from a trace.dat or a recorder
-- without the estimator), so the unit belongs to the source, not to the
-- path: paths.work_unit was the first source's unit, given to all.

-- Each work source's unit, from the path table (common/paths.conf `unit`
-- and `unit_of`); mmhitm analyze fills it as it fills `paths`. For the
-- rows analyzed before this version; later ones carry their unit.
CREATE TABLE path_work_units (
	path		TEXT NOT NULL,		-- 'P1'
	source		TEXT NOT NULL,		-- 'sched:sched_switch'
	work_unit	TEXT NOT NULL,		-- 'all context switches'
	PRIMARY KEY (path, source)
) WITHOUT ROWID;

-- The unit of the row's work, from its source; NULL: no work counted.
-- Rows analyzed before version 14 have none: path_rates looks it up in
-- path_work_units by the source's name, the first word of work_source
-- ('tlb:tlb_flush of boot 3 over the same time'), until --rebuild.
ALTER TABLE path_intervals ADD COLUMN work_unit TEXT;

-- work_unit is now the unit of the row's own work source. no_rate says
-- why hitm_per_work is NULL, which it is unless the interval both sampled
-- HITM and counted the path's work: never a rate of two recordings.
DROP VIEW path_rates;
CREATE VIEW path_rates AS
SELECT	p.interval_id, i.boot_id, h.hostname, b.kernel_release,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	p.path, p.lcl_hitm + p.rmt_hitm + p.peer AS hitm,
	p.lcl_hitm, p.rmt_hitm, p.peer, p.samples,
	(p.lcl_hitm + p.rmt_hitm + p.peer) * 1.0 / nullif((SELECT sum(q.lcl_hitm + q.rmt_hitm + q.peer)
		FROM path_intervals q WHERE q.interval_id = p.interval_id), 0) AS share,
	p.work,
	CASE WHEN p.work IS NULL THEN NULL WHEN p.work_unit IS NOT NULL THEN p.work_unit
		ELSE (SELECT u.work_unit FROM path_work_units u WHERE u.path = p.path AND
		u.source = substr(p.work_source, 1, instr(p.work_source || ' ', ' ') - 1)) END AS work_unit,
	(p.lcl_hitm + p.rmt_hitm + p.peer) * t.per / nullif(p.work, 0) AS hitm_per_work,
	t.per AS per_work_units,
	i.start_ns, i.end_ns, p.work_source, p.work_stderr, p.work_share,
	CASE WHEN t.path IS NULL THEN 'not a path of the table'
	     WHEN p.lcl_hitm IS NULL AND p.work IS NULL THEN 'no HITM sampled, no work counted'
	     WHEN p.lcl_hitm IS NULL THEN 'no HITM sampled'
	     WHEN p.work IS NULL THEN 'no work counted'
	     WHEN p.work = 0 THEN 'no work done' END AS no_rate
FROM path_intervals p
JOIN intervals i USING (interval_id)
JOIN boots b USING (boot_id)
JOIN hosts h USING (host_id)
LEFT JOIN paths t USING (path);
