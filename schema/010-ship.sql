-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm ship: what the cluster has. One row per cluster table; written
-- only by `mmhitm ship`, and only after ClickHouse acknowledged (HTTP 200)
-- the batch, so a crash between send and acknowledge sends the batch again
-- (the cluster deduplicates it: schema/clickhouse/001-tables.sql).

CREATE TABLE ship_cursors (
	tbl		TEXT PRIMARY KEY,	-- the cluster table, e.g. 'intervals'
	last_key	INTEGER NOT NULL,	-- shipped through this key: interval_id,
						-- or last_seen_ns for hosts/boots/ksyms
	batch		INTEGER NOT NULL,	-- the last batch acknowledged
	rows		INTEGER NOT NULL,	-- rows acknowledged, all batches
	shipped_ns	INTEGER NOT NULL	-- when the last batch was acknowledged
) WITHOUT ROWID;

-- Retention with ship_required: what the size budget forced it to delete
-- before it was shipped (intervals).
ALTER TABLE retention_log ADD COLUMN unshipped INTEGER NOT NULL DEFAULT 0;
