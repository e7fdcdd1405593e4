#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Attribution end to end on this machine: mmhitmd learns the real
# mm_structs of processes this test starts, the real vmemmap base and the
# contended locks; the test finds which of those locks are lru_locks from
# their stacks (an instance of its own); then it writes perf.data with
# HITM samples at those real addresses (+ BTF field offsets) with real
# kallsyms IPs and callchains of the path functions (its own writer,
# checked against perf script), imports it, analyzes it, and checks every
# sample landed in the path it was meant for and unknown addresses stayed
# unresolved. Prints the attribution accuracy.

. "$(dirname "$0")/lib.sh"
require_root
require_tracefs
for p in "$O/mmhitmd" "$O/mmhitm" "$HELPER"; do
	[ -x "$p" ] || { echo "build first: make all $HELPER"; exit 1; }
done
command -v python3 >/dev/null || skip "python3 is not installed"
"$O/mmhitm" import --help >/dev/null 2>&1 || { echo "FAIL: $O/mmhitm has no working 'import'"; exit 1; }
[ -r /proc/kallsyms ] && [ "$(awk 'NR == 1 {print $1}' /proc/kallsyms)" != 0000000000000000 ] ||
	skip "/proc/kallsyms shows no addresses"

WORK=$(mktemp -d /tmp/mmhitm-test-analyze.XXXXXX)
DB=$WORK/t.db
INST=mmhitm-test-an-$$
LOCKS=mmhitm-test-anlk-$$
cleanup() {
	[ -n "$OLDPID" ] && kill "$OLDPID" 2>/dev/null
	for i in "$INST" "$LOCKS"; do
		d=$TRACING/instances/$i
		[ -d "$d" ] || continue
		echo 0 > "$d/events/lock/contention_begin/enable" 2>/dev/null
		echo '!stacktrace' > "$d/events/lock/contention_begin/trigger" 2>/dev/null
		rmdir "$d"
	done
	[ -n "$KEEP" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# Which contended spinlocks are lru_locks: their stacks say so. (Raw
# pointers in this instance's text output: hash-ptr off.)
L=$TRACING/instances/$LOCKS
mkdir "$L" || skip "cannot create a tracefs instance"
echo 0 > "$L/options/hash-ptr" 2>/dev/null || skip "tracefs cannot show raw pointers (no hash-ptr option)"
echo 'flags == 1' > "$L/events/lock/contention_begin/filter"
echo stacktrace > "$L/events/lock/contention_begin/trigger" || skip "no stacktrace trigger"
echo 4096 > "$L/buffer_size_kb"
echo 1 > "$L/events/lock/contention_begin/enable"

"$HELPER" waitsig >"$WORK/old.out" &
OLDPID=$!
wait_until 5 grep -q pid "$WORK/old.out"

"$O/mmhitmd" --foreground --record-mode continuous --db "$DB" --interval 1s --drain-interval 200ms --duration 120s \
	--instance "$INST" 2>"$WORK/daemon.log" &
DPID=$!
wait_until 20 sh -c "sqlite3 '$DB' 'SELECT count(*) FROM intervals' 2>/dev/null | grep -qv '^0$'" ||
	{ cat "$WORK/daemon.log"; fail "daemon did not start"; finish; }
kill -USR1 $OLDPID
"$HELPER" fork 8 >"$WORK/fork.out" || fail "helper fork"
# Contention on the lruvec lock: MADV_DONTNEED drains and fresh tmpfs pages,
# on every CPU at once; again (up to 3 rounds) until some is seen.
for round in 1 2 3; do
	helpers=
	for i in 1 2 3; do
		"$HELPER" dontneed 20000 >/dev/null &
		helpers="$helpers $!"
		"$HELPER" activate 3000 >/dev/null &
		helpers="$helpers $!"
	done
	wait $helpers	# ours, not another job's helpers
	grep -q folio_lruvec_lock "$L/trace" && break
done
"$HELPER" pwrite 20000 >/dev/null || fail "helper pwrite"
wait_until 10 sh -c "sqlite3 '$DB' 'SELECT count(*) FROM mm_objects WHERE tgid = $OLDPID' | grep -qv '^0$'"
sleep 4		# room for the samples' times after the forks
kill -TERM $DPID
wait $DPID
check "daemon exit status" $? -eq 0
echo 0 > "$L/events/lock/contention_begin/enable"

# lock address -> slow path function, for stacks through folio_lruvec_lock*()
awk '/contention_begin:/ { addr = $(NF - 1); slow = ""; next }
     /=> / && $2 ~ /spin_lock_slowpath$/ { slow = $2 }
     /=> / && $2 ~ /^folio_lruvec_lock/ && addr != "" && slow != "" { print addr, slow; addr = "" }' \
	"$L/trace" | sort | uniq -c | sort -rn >"$WORK/lru_locks"
lru_locks=$(awk '{printf "%s%s", (NR > 1 ? "," : ""), $2}' "$WORK/lru_locks")
slow=$(awk 'NR == 1 {print $3}' "$WORK/lru_locks")
[ -n "$slow" ] || slow=$(grep -q ' __pv_queued_spin_lock_slowpath$' /proc/kallsyms &&
	echo __pv_queued_spin_lock_slowpath || echo native_queued_spin_lock_slowpath)
echo "lru_lock contention seen at: ${lru_locks:-none} (slow path $slow)"
# (a one-CPU machine never contends, nor one whose CPUs never run at the
# same time: the lruvec groups and P4's lock samples are then left out, said so)
if [ ! -s "$WORK/lru_locks" ] && [ "$(nproc)" -ge 2 ]; then
	if ! lock_storms_possible; then
		echo "not on this machine: its CPUs never contend a spinlock (perf counted $LOCK_PROBE lock:contention_begin in a 1 s lockstorm)"
	else
		fail "no lru_lock contention in 3 rounds on $(nproc) CPUs"
	fi
fi

# --- the samples -------------------------------------------------------------
fork_pids=$(awk '/^pid/ {printf "%s%s", n++ ? "," : "", $2}' "$WORK/fork.out")
python3 tests/integration/hitm_scenario.py write "$DB" /proc/kallsyms "$WORK/hitm.perf.data" \
	"$WORK/expect.json" --old-pid "$OLDPID" --fork-pids "$fork_pids" \
	--lru-locks "$lru_locks" --slowpath "$slow" || { fail "scenario"; finish; }
nsamples=$(python3 -c "import json; print(json.load(open('$WORK/expect.json'))['samples'])")

# Our writer against perf's own reader.
if command -v perf >/dev/null; then
	perf script -i "$WORK/hitm.perf.data" -F ip,addr -G 2>/dev/null |
		awk 'NF == 2' >"$WORK/script.out"
	check "perf script reads every sample we wrote" "$(wc -l <"$WORK/script.out")" -eq "$nsamples"
	python3 - "$WORK/expect.json" "$WORK/script.out" <<-'EOF' || fail "perf script shows other ip/addr pairs"
	import collections, json, sys
	e = json.load(open(sys.argv[1]))
	want = collections.Counter()
	for g in e["groups"]:
	    want[(g["addr"], g["ip"])] += g["n"]
	got = collections.Counter()
	for line in open(sys.argv[2]):
	    a, ip = line.split()
	    got[(int(a, 16), int(ip, 16))] += 1
	sys.exit(0 if got == want else 1)
	EOF
fi

# --- import, analyze, check -------------------------------------------------
"$O/mmhitm" import "$WORK/hitm.perf.data" --db "$DB" --kallsyms /proc/kallsyms --interval 100ms \
	>"$WORK/import.out" 2>&1 || { cat "$WORK/import.out"; fail "import"; finish; }
"$O/mmhitm" analyze --db "$DB" >"$WORK/analyze.out" 2>&1 || { cat "$WORK/analyze.out"; fail "analyze"; finish; }
cat "$WORK/analyze.out"
python3 tests/integration/hitm_scenario.py check "$DB" "$WORK/expect.json" || fail "samples landed elsewhere"

imp=$(q "SELECT boot_id FROM boots WHERE source = 'import'")
live=$(q "SELECT boot_id FROM boots WHERE source = 'live'")
check_str "the import was resolved against the live boot's objects" \
	"$(q "SELECT object_boots FROM analysis_state WHERE boot_id = $imp")" "$imp $live"
check_str "vmemmap calibrated from the live boot's pairs" \
	"$(q "SELECT printf('0x%x', vmemmap_base) FROM analysis_state WHERE boot_id = $imp")" \
	"$(q "SELECT vmemmap_base FROM vmemmap_calibration WHERE boot_id = $live ORDER BY pairs DESC LIMIT 1")"
# The same boot (the file carries this kernel's build id): import read the
# vmemmap base from /proc/kcore, or knew it from the fixed layout of a
# kernel without vmemmap_base; the daemon's pairs calibrated the same one.
check_str "import knew this boot's vmemmap base, the one the pairs imply" \
	"$(q "SELECT printf('0x%x', vmemmap_base) FROM boots WHERE boot_id = $imp")" \
	"$(q "SELECT vmemmap_base FROM vmemmap_calibration WHERE boot_id = $live ORDER BY pairs DESC LIMIT 1")"
check "on the recording host, import took its BTF without --btf" \
	"$(q "SELECT count(*) FROM btf_layouts WHERE boot_id = $imp")" -gt 10
check "imported intervals normalized by the live boot's counters" \
	"$(q "SELECT count(*) FROM path_intervals p JOIN intervals i USING (interval_id) WHERE i.boot_id = $imp AND p.path = 'P4' AND p.work_source LIKE 'tlb:tlb_flush of boot $live%'")" -ge 1
# Joined by the boot id alone: under another hostname the time-and-host
# rule cannot match; the running boot's id (import's default here) joins
# the live boot, and --boot-id none leaves the import on its own.
grep -q "joins boot $live, recorded live by mmhitmd" "$WORK/import.out" ||
	fail "import does not say it joins the live boot: $(cat "$WORK/import.out")"
for how in default none; do
	cp "$DB" "$WORK/join-$how.db"
	if [ $how = none ]; then set -- --boot-id none; else set --; fi
	"$O/mmhitm" import "$WORK/hitm.perf.data" --db "$WORK/join-$how.db" --hostname elsewhere \
		--interval 100ms "$@" >"$WORK/join.out" 2>&1 || { cat "$WORK/join.out"; fail "import as elsewhere"; }
	"$O/mmhitm" analyze --db "$WORK/join-$how.db" >/dev/null 2>&1 || fail "analyze join-$how"
	j=$(sqlite3 "$WORK/join-$how.db" "SELECT boot_id FROM boots b JOIN hosts USING (host_id)
		WHERE hostname = 'elsewhere'")
	got=$(sqlite3 "$WORK/join-$how.db" "SELECT object_boots FROM analysis_state WHERE boot_id = $j")
	if [ $how = default ]; then
		check_str "another hostname, the same boot id: joins the live boot" "$got" "$j $live"
	else
		check_str "another hostname, --boot-id none: on its own" "$got" "$j"
	fi
done

check "live intervals have P1..P4 rows with work and NULL HITM (no PMU here)" \
	"$(q "SELECT count(*) FROM path_intervals p JOIN intervals i USING (interval_id) WHERE i.boot_id = $live AND p.path = 'P4' AND p.work > 0 AND p.lcl_hitm IS NULL")" -ge 1
if [ -n "$lru_locks" ]; then
	check "the lruvec was anchored at its contended lock" \
		"$(q "SELECT count(*) FROM anchored_objects WHERE struct = 'lruvec' AND lock_object_id IS NOT NULL")" -ge 1
fi

# Incremental and idempotent: a second run finds nothing new and changes nothing.
dump() { q "SELECT interval_id, line_addr, offset, ip, callchain_id, object_type, object_addr, field, path, rule FROM line_attribution ORDER BY 1, 2, 3, 4, 5"; }
before=$(dump | md5sum)
"$O/mmhitm" analyze --db "$DB" | grep -q " 0 new intervals, 0 sampled lines" || fail "second analyze did work"
check_str "second analyze changed nothing" "$(dump | md5sum)" "$before"
"$O/mmhitm" analyze --db "$DB" --rebuild >/dev/null || fail "rebuild"
check_str "--rebuild gives the same attribution" "$(dump | md5sum)" "$before"

# The typed top lines.
"$O/mmhitm" top --db "$DB" --limit 12 >"$WORK/top.out" 2>&1 || fail "top"
sed -n '1,24p' "$WORK/top.out"
for t in mm_struct page; do
	check "top shows a typed $t line" "$(grep -c "  $t  " "$WORK/top.out")" -ge 1
done
[ -n "$lru_locks" ] && check "top shows a typed lruvec line" "$(grep -c '  lruvec  ' "$WORK/top.out")" -ge 1
check "top names the owning process" "$(grep -c " $OLDPID mmhitm-test-hel" "$WORK/top.out")" -ge 1

# top's time range: an empty one says so; a bad time is a usage error.
"$O/mmhitm" top --db "$DB" --since @0 --until now --no-detail | grep -q "mm_struct" || fail "top --since @0"
"$O/mmhitm" top --db "$DB" --since 2099-01-01 --no-detail | grep -q "no attributed kernel samples" ||
	fail "top in the future is not empty"
"$O/mmhitm" top --db "$DB" --since yesterday-ish >/dev/null 2>&1
check "top with a bad time exits 2" $? -eq 2

# Rules as data: an override file that does not parse is refused with its
# line; one that disables P4 changes the digest, analyze warns until
# --rebuild, and the rebuild moves the drain's lock samples to other:lruvec.
printf 'rule ok P1 object=page\nrule bad P9 object=page\n' >"$WORK/bad.rules"
"$O/mmhitm" analyze --db "$DB" --rules "$WORK/bad.rules" >/dev/null 2>"$WORK/bad.err"
check "a bad rules file fails analyze" $? -ne 0
check "and says where" "$(grep -c 'bad.rules:2' "$WORK/bad.err")" -ge 1
printf '# no P4 for this test\ndisable p4-drain-lock\n' >"$WORK/nop4.rules"
"$O/mmhitm" analyze --db "$DB" --rules "$WORK/nop4.rules" >/dev/null 2>"$WORK/nop4.err"
check "a changed rule set is warned about" "$(grep -c 'rebuild' "$WORK/nop4.err")" -ge 1
imp_p4() { q "SELECT coalesce(sum(lcl_hitm + rmt_hitm), 0) FROM path_intervals p JOIN intervals i USING (interval_id) WHERE i.boot_id = $imp AND p.path = 'P4'"; }
p4=$(imp_p4)
# P4's samples here are the drain's on the contended lru_lock.
if [ -n "$lru_locks" ]; then
	check "without --rebuild the old attribution stays" "$p4" -gt 0
else
	echo "not on this run: no lru_lock contention, so no P4 samples to move"
fi
"$O/mmhitm" analyze --db "$DB" --rules "$WORK/nop4.rules" --rebuild >/dev/null 2>&1
check "the rebuild with P4 disabled leaves no P4" "$(imp_p4)" -eq 0
"$O/mmhitm" analyze --db "$DB" --rebuild >/dev/null 2>&1
check "the defaults again" "$(imp_p4)" -eq "$p4"

# The BTF offsets the rules rely on, against bpftool's dump of this kernel.
if command -v bpftool >/dev/null && [ -r /sys/kernel/btf/vmlinux ]; then
	python3 tests/integration/btf_check.py "$DB" /sys/kernel/btf/vmlinux >"$WORK/btf.out" 2>&1 ||
		{ cat "$WORK/btf.out"; fail "btf_layouts differ from bpftool"; }
fi
check_str "integrity" "$(q 'PRAGMA integrity_check')" ok
finish
