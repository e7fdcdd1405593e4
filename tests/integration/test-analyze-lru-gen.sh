#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# P1 and P2 need an LRU_GEN kernel (mm_struct.lru_gen.bitmap, the aging
# walk's functions), which this machine's is not. Given a database mmhitmd
# recorded on one (MMHITM_LRU_GEN_DB, e.g. the one tests/kernels'
# test-lru-gen leaves from Debian's 6.1 cloud kernel under QEMU), this
# writes perf.data with HITM samples at that recording's real addresses
# (its processes' mm_structs, its vmemmap) with the real IPs of the
# symbols the daemon stored for that boot, imports it into a copy, analyzes,
# and checks where every sample landed, P1 and P2 included.

. "$(dirname "$0")/lib.sh"
[ -n "$MMHITM_LRU_GEN_DB" ] ||
	skip "no recording of an LRU_GEN kernel: set MMHITM_LRU_GEN_DB (tests/kernels' test-lru-gen makes one)"
[ -r "$MMHITM_LRU_GEN_DB" ] || { echo "cannot read $MMHITM_LRU_GEN_DB"; exit 1; }
command -v python3 >/dev/null || skip "python3 is not installed"
[ -x "$O/mmhitm" ] || { echo "build first"; exit 1; }

WORK=$(mktemp -d /tmp/mmhitm-test-lrugen.XXXXXX)
trap '[ -n "$KEEP" ] || rm -rf "$WORK"' EXIT
DB=$WORK/t.db
cp "$MMHITM_LRU_GEN_DB" "$DB"
"$O/mmhitm" status --db "$DB" >/dev/null 2>&1 || { fail "not a database"; finish; }
check_str "the recorded kernel has MGLRU's mm_struct.lru_gen.bitmap" \
	"$(q "SELECT count(*) FROM btf_layouts WHERE struct = 'mm_struct' AND field = 'lru_gen.bitmap'")" 1

python3 tests/integration/hitm_scenario.py write "$DB" "db:$WORK/kallsyms" "$WORK/hitm.perf.data" \
	"$WORK/expect.json" || { fail "scenario"; finish; }
"$O/mmhitm" import "$WORK/hitm.perf.data" --db "$DB" --kallsyms "$WORK/kallsyms" --interval 100ms \
	>"$WORK/import.out" 2>&1 || { cat "$WORK/import.out"; fail "import"; finish; }
"$O/mmhitm" analyze --db "$DB" || fail "analyze"
python3 tests/integration/hitm_scenario.py check "$DB" "$WORK/expect.json" || fail "samples landed elsewhere"
for p in P1 P2; do
	check "$p samples were written and landed in $p" \
		"$(q "SELECT count(*) FROM line_attribution a JOIN intervals i USING (interval_id) JOIN boots b USING (boot_id) WHERE b.source = 'import' AND a.path = '$p'")" -ge 1
done
finish
