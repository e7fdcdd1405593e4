-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 4: bounded storage.
--
-- Raw intervals are kept for a while (retention_raw), their per-line and
-- /proc detail for less (retention_detail); before an interval is deleted
-- its counts are added into per-hour rollups, which are kept much longer
-- (retention_rollup). An interval is filed under the hour it starts in.

CREATE TABLE hourly_events (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	hour_ns		INTEGER NOT NULL,		-- start of the UTC hour
	event_id	INTEGER NOT NULL REFERENCES event_names,
	count		INTEGER NOT NULL,
	seconds		REAL NOT NULL,			-- recorded time behind count
	PRIMARY KEY (boot_id, hour_ns, event_id)
) WITHOUT ROWID;

CREATE TABLE hourly_paths (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	hour_ns		INTEGER NOT NULL,
	path		TEXT NOT NULL,
	lcl_hitm	INTEGER,			-- NULL: not measured
	rmt_hitm	INTEGER,
	peer		INTEGER,
	samples		INTEGER,
	work		REAL,
	PRIMARY KEY (boot_id, hour_ns, path)
) WITHOUT ROWID;

CREATE TABLE hourly_health (
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	hour_ns		INTEGER NOT NULL,
	intervals	INTEGER NOT NULL,
	seconds		REAL NOT NULL,
	cpu_ns		INTEGER NOT NULL,		-- the daemon's own CPU time
	max_rss_kb	INTEGER,
	events_lost	INTEGER NOT NULL,
	dropped_intervals INTEGER NOT NULL,
	PRIMARY KEY (boot_id, hour_ns)
) WITHOUT ROWID;

-- What retention removed, and why: budgets should be visible, not silent.
CREATE TABLE retention_log (
	ts_ns		INTEGER NOT NULL,
	reason		TEXT NOT NULL,			-- 'age' or 'size'
	intervals	INTEGER NOT NULL,		-- deleted (rolled up first)
	detail_intervals INTEGER NOT NULL,		-- whose detail was dropped
	hours		INTEGER NOT NULL,		-- rollup hours deleted
	bytes_before	INTEGER NOT NULL,
	bytes_after	INTEGER NOT NULL
);

-- Hourly event counts over the whole history: rollups of deleted
-- intervals plus the raw intervals still kept.
CREATE VIEW hourly_event_rates AS
SELECT	boot_id, hour_ns,
	strftime('%Y-%m-%dT%H:00:00Z', hour_ns / 1000000000, 'unixepoch') AS hour,
	event, sum(count) AS count, sum(seconds) AS seconds,
	sum(count) / nullif(sum(seconds), 0) AS per_second
FROM (
	SELECT h.boot_id, h.hour_ns, n.name AS event, h.count, h.seconds
	FROM hourly_events h JOIN event_names n USING (event_id)
	UNION ALL
	SELECT i.boot_id, i.start_ns - i.start_ns % 3600000000000, n.name, c.count,
	       (i.end_ns - i.start_ns) / 1e9
	FROM event_counts c JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id)
)
GROUP BY boot_id, hour_ns, event;

-- Set once the interval's per-line and /proc detail has been dropped.
ALTER TABLE intervals ADD COLUMN detail_dropped INTEGER NOT NULL DEFAULT 0;
