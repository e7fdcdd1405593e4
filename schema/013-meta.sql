-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 13: what a database says about itself, as keys
-- and values. mmhitmd and mmhitm write no row here today. The one key
-- read is 'simulated': the database was generated, not recorded, and its
-- value names the generator (tests/integration/fleetgen.py writes
-- 'fleetgen.py'); `mmhitm report` labels the hosts it reads from such a
-- database as simulated, in every format.

CREATE TABLE meta (
	key	TEXT PRIMARY KEY,
	value	TEXT NOT NULL
) WITHOUT ROWID;
