-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 12: what retention looks for after every
-- interval, found by range instead of by scanning the history. Its age
-- steps ask for intervals ending before a cutoff (whose detail is still
-- kept, for the detail step) and for rollup hours before one; with
-- nothing due, each is now an index seek that finds no row, where it
-- read every interval and every rollup row kept (weeks of intervals,
-- 400 days of rollups by default) once a minute.

CREATE INDEX intervals_detail_kept ON intervals (start_ns) WHERE detail_dropped = 0;
CREATE INDEX hourly_events_by_hour ON hourly_events (hour_ns);
CREATE INDEX hourly_paths_by_hour ON hourly_paths (hour_ns);
CREATE INDEX hourly_health_by_hour ON hourly_health (hour_ns);

-- And what analysis looks for after every interval: whether a boot has
-- intervals after the last one analyzed, a seek on (boot_id, rowid), so
-- that the boots of a host's past cost nothing once analyzed.
CREATE INDEX intervals_by_boot_id ON intervals (boot_id);

-- The rows a newly learned object can type: the unresolved ones and those
-- typed by the code path alone, at its addresses. Every interval that
-- learns an mm_struct or a lock looks for them, one seek per object.
CREATE INDEX line_attribution_unsettled ON line_attribution (line_addr)
	WHERE path = 'unresolved' OR grade = 'path';
