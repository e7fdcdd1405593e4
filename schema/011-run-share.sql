-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 11: the multiplexing share of each count. A perf
-- counter that could not always be scheduled (more events than counters)
-- counts for part of the time it is enabled, and its count is scaled up
-- by time_enabled / time_running. run_share is time_running over
-- time_enabled across the interval's counting (its slices, windowed),
-- summed over the CPUs: 1.0 for a count that was counted all the time it
-- says, below 1 for one scaled from that share. Tracepoints, which is all
-- mmhitmd counts, never multiplex (software context); rows of other
-- methods ('free', 'sample', 'derived') and rows written before this
-- version are 1.0.

ALTER TABLE event_counts ADD COLUMN run_share REAL NOT NULL DEFAULT 1.0;

DROP VIEW event_rates;
CREATE VIEW event_rates AS
SELECT	i.interval_id, i.boot_id,
	strftime('%Y-%m-%dT%H:%M:%SZ', i.start_ns / 1000000000, 'unixepoch') AS start,
	(i.end_ns - i.start_ns) / 1e9 AS seconds,
	n.name AS event, c.count,
	c.count * 1e9 / max(i.end_ns - i.start_ns, 1) AS per_second,
	c.method, c.counted, sqrt(c.variance) AS stderr,
	CASE c.method WHEN 'window' THEN i.armed_ns * 1.0 / max(i.end_ns - i.start_ns, 1)
		      ELSE 1.0 END AS armed_share,
	c.run_share, c.run_share < 1 AS scaled
FROM event_counts c JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id);
