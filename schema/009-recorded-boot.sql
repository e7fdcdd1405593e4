-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 9: an imported recording joined to the kernel
-- boot it was recorded in. `mmhitm import --boot-id UUID` (by default, on
-- the recording host, the running boot's /proc/sys/kernel/random/boot_id)
-- stores that boot's id; when mmhitmd recorded the same boot into this
-- database, the analyzer types the recording's lines with that boot's
-- learned objects, pairs and layout (analysis_state.object_boots).

ALTER TABLE boots ADD COLUMN recorded_boot_uuid TEXT;	-- imports: the boot_id recorded in
