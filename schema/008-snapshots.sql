-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 8: flight-recorder snapshots. mmhitmd records the
-- window's learning events a second time into a tracefs instance of their
-- own in overwrite mode; on a trigger it saves that ring as a trace-cmd
-- trace.dat (trace-cmd report, KernelShark, mmhitm import read it) into a
-- bounded directory. One row per snapshot saved.

CREATE TABLE snapshots (
	snapshot_id	INTEGER PRIMARY KEY,
	boot_id		INTEGER NOT NULL REFERENCES boots ON DELETE CASCADE,
	trigger		TEXT NOT NULL,		-- 'SIGUSR1', 'request' (mmhitm snapshot), 'lock-storm'
	start_ns	INTEGER NOT NULL,	-- wall clock: the ring holds events from here
	end_ns		INTEGER NOT NULL,	-- ... to the trigger (the oldest may be overwritten)
	trace_offset_ns	INTEGER NOT NULL,	-- wall clock minus the file's (CLOCK_BOOTTIME):
						-- add to a trace-cmd report time (in ns)
	path		TEXT NOT NULL,
	bytes		INTEGER NOT NULL,
	removed_ns	INTEGER			-- when the directory's limits removed the file
);
CREATE INDEX snapshots_by_boot ON snapshots (boot_id, end_ns);
