-- SPDX-License-Identifier: GPL-2.0
--
-- mmhitm schema, version 7: graded attribution, and the kernel layout of
-- a boot that no (folio, pfn) pair calibrates (an imported recording).
--
-- Every attributed line says how its address was typed:
--   'object'  inside an object learned on that boot (an mm_struct alive in
--             the interval, an lruvec at a contended lock address)
--   'layout'  typed from the kernel's memory layout: struct page from the
--             vmemmap base (calibrated from pairs, given, or read from the
--             running kernel) and sizeof(struct page), kernel static data
--             from kallsyms, user space, plus the field offset from BTF
--   'path'    the code path alone identifies it (the sampled IP's function
--             and callchain, the offset in the cache line matching the
--             field's BTF offset); the object itself is unknown
-- NULL for lines no rule attributed (unresolved).
ALTER TABLE line_attribution ADD COLUMN grade TEXT;

-- The kernel's direct-map and vmemmap bases when known without pairs:
-- given to mmhitm import (--vmemmap-base, --page-offset) or read from the
-- running kernel on the same boot; layout_source says which.
ALTER TABLE boots ADD COLUMN vmemmap_base INTEGER;
ALTER TABLE boots ADD COLUMN page_offset INTEGER;
ALTER TABLE boots ADD COLUMN layout_source TEXT;

DROP VIEW top_lines;
CREATE VIEW top_lines AS
SELECT	i.boot_id, printf('0x%016x', a.line_addr) AS line,
	a.object_type, a.field, m.tgid, m.comm, a.path,
	sum(l.lcl_hitm) AS lcl_hitm, sum(l.rmt_hitm) AS rmt_hitm,
	sum(l.lcl_peer + l.rmt_peer) AS peer,
	sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS hitm,
	sum(l.loads) AS loads, sum(l.stores) AS stores,
	group_concat(DISTINCT a.symbol) AS symbols,
	a.line_addr, min(i.start_ns) AS first_ns, max(i.end_ns) AS last_ns,
	printf('0x%016x', a.object_addr) AS object, group_concat(DISTINCT a.rule) AS rules,
	group_concat(DISTINCT a.grade) AS grades
FROM line_attribution a
JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)
JOIN intervals i USING (interval_id)
LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref
GROUP BY i.boot_id, a.line_addr, a.object_type, a.object_ref, a.object_addr, a.field, a.path;

-- Per path and grade: what each path's HITM rests on.
CREATE VIEW path_grades AS
SELECT	i.boot_id, a.path, coalesce(a.grade, 'none') AS grade,
	sum(l.lcl_hitm + l.rmt_hitm) AS hitm, count(*) AS rows
FROM line_attribution a
JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)
JOIN intervals i USING (interval_id)
GROUP BY i.boot_id, a.path, coalesce(a.grade, 'none');
