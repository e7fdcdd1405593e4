-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 6: windowed recording. Between windows mmhitmd
-- arms nothing in the kernel and reads only the counters the kernel keeps
-- anyway; tracepoints are counted in short windows (slices of each
-- interval) and scaled to the interval, with the variance of the scaled
-- estimate. Rows written before this version, and by record_mode =
-- continuous, were counted all along (method 'continuous', variance 0).

ALTER TABLE intervals ADD COLUMN armed_ns INTEGER;	-- time the windows were armed; NULL: continuous
ALTER TABLE intervals ADD COLUMN slices INTEGER;	-- window slices in the interval
ALTER TABLE intervals ADD COLUMN armed TEXT;		-- what was armed: counters learn switch pmu
ALTER TABLE intervals ADD COLUMN est_cost_ns INTEGER;	-- estimated cost of the windows: mmhitmd's CPU
							-- in them plus events x the calibrated price
ALTER TABLE intervals ADD COLUMN window_note TEXT;	-- why no or a shorter window (budget, fleet share)

-- How each count was obtained:
--   'continuous'  counted in the kernel for the whole interval (exact)
--   'window'      counted in the interval's windows, scaled to the interval;
--                 `counted` holds the raw count, `variance` the estimate's
--   'free'        a counter the kernel keeps anyway (/proc), exact
--   'sample'      raw counts of the sched_switch samples
--   'derived'     computed from others (same-mm switches), with its variance
ALTER TABLE event_counts ADD COLUMN method TEXT NOT NULL DEFAULT 'continuous';
ALTER TABLE event_counts ADD COLUMN counted INTEGER;
ALTER TABLE event_counts ADD COLUMN variance REAL NOT NULL DEFAULT 0;

DROP VIEW interval_summary;
CREATE VIEW interval_summary AS
SELECT	i.interval_id, i.boot_id, h.hostname, b.kernel_release,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	(i.end_ns - i.start_ns) / 1e9 AS seconds,
	i.partial, i.learn_records, i.events_lost, i.dropped_intervals,
	(i.cpu_user_ns + i.cpu_sys_ns) / 1e9 AS daemon_cpu_s,
	i.rss_kb AS daemon_rss_kb, i.db_bytes, i.ctxt, i.forks,
	i.start_ns, i.end_ns,
	coalesce(i.armed_ns * 1.0 / max(i.end_ns - i.start_ns, 1), 1.0) AS armed_share,
	i.slices, i.armed, i.est_cost_ns / 1e9 AS est_cost_s, i.window_note
FROM intervals i JOIN boots b USING (boot_id) JOIN hosts h USING (host_id);

DROP VIEW event_rates;
CREATE VIEW event_rates AS
SELECT	i.interval_id, i.boot_id,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	(i.end_ns - i.start_ns) / 1e9 AS seconds,
	n.name AS event, c.count,
	c.count * 1e9 / max(i.end_ns - i.start_ns, 1) AS per_second,
	c.method, c.counted, sqrt(c.variance) AS stderr,
	CASE c.method WHEN 'window' THEN i.armed_ns * 1.0 / max(i.end_ns - i.start_ns, 1)
		      ELSE 1.0 END AS armed_share
FROM event_counts c JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id);

-- The precision of each path's work, from the counts it came from (also
-- when an import borrows a live boot's): its standard error and the share
-- of the interval it was counted in (1: all along). Derived rows, filled
-- by mmhitm analyze (--rebuild fills them for earlier intervals).
ALTER TABLE path_intervals ADD COLUMN work_stderr REAL;
ALTER TABLE path_intervals ADD COLUMN work_share REAL;

DROP VIEW path_rates;
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
	i.start_ns, i.end_ns, p.work_source, p.work_stderr, p.work_share
FROM path_intervals p
JOIN intervals i USING (interval_id)
JOIN boots b USING (boot_id)
JOIN hosts h USING (host_id)
LEFT JOIN paths t USING (path);
