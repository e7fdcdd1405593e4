#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm import against perf itself, on every real fixture and on files
# real perf records here: the sample count per event equals perf script's,
# the pseudo-boot carries the file's host and kernel, the intervals cover
# its time range, every memory sample is in the sampling rows and every
# kernel one in mem_lines; --kallsyms, --btf and the overrides store what
# they say. Then malformed copies (truncations, corrupt header and attr
# sizes, a corrupt record, a COMPRESSED record, a real perf record -z file)
# must each fail with a message naming the file offset and leave the
# database byte for byte as it was.

. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
FIX=$FIXTURES
MMHITM=$O/mmhitm
TMP=$(mktemp -d /tmp/mmhitm-test-import-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/import.db

# "event<TAB>count" per event with samples, sorted
perf_counts() {
	perf script -i "$1" -F event 2>/dev/null | sed 's/^ *//; s/: *$//' | sort | uniq -c |
		sed 's/^ *\([0-9]*\) \(.*\)$/\2	\1/' | sort
}
import_counts() {
	sed -n "s/^  event '\(.*\)': \([0-9]*\) samples.*/\1	\2/p" "$1" | awk -F'	' '$2 > 0' | sort
}
header() {	# FILE FIELD: a line of perf report --header-only
	perf report --header-only -i "$1" 2>/dev/null | sed -n "s/^# $2 *: //p" | head -1
}
u64_at() {	# FILE OFFSET
	od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '
}
le64() {	# N: its 8 little-endian bytes as printf octal escapes
	awk -v n="$1" 'BEGIN { for (i = 0; i < 8; i++) { printf "\\%03o", n % 256; n = int(n / 256) } }'
}
patch() {	# FILE OFFSET PRINTF-BYTES
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
db_state() {	# the logical content and the bytes of the file
	echo "dump $(sqlite3 "$DB" .dump | md5sum | cut -d' ' -f1)" \
	     "file $(md5sum < "$DB" | cut -d' ' -f1)"
}

# check_import FILE [ARGS]: imports and compares with perf script
check_import() {
	f=$1; shift
	name=$(basename "$f")
	before=$(q "SELECT count(*) FROM boots" 2>/dev/null || echo 0)
	if ! "$MMHITM" import "$f" --db "$DB" "$@" >"$TMP/out" 2>"$TMP/err"; then
		fail "$name: import failed: $(cat "$TMP/err")"
		return 1
	fi
	cat "$TMP/out"
	perf_counts "$f" >"$TMP/want"
	import_counts "$TMP/out" >"$TMP/got"
	if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got"; then
		pass "$name: samples per event equal perf script's: $(tr '\t\n' '=,' <"$TMP/got")"
	else
		fail "$name: samples per event differ: perf script: $(tr '\t\n' '=,' <"$TMP/want")" \
		     "import: $(tr '\t\n' '=,' <"$TMP/got")"
	fi
	check "$name: one new boot" "$(q "SELECT count(*) FROM boots")" -eq $((before + 1))
	B=$(q "SELECT max(boot_id) FROM boots")
	check_str "$name: source" "$(q "SELECT source FROM boots WHERE boot_id = $B")" import

	# every memory sample in the sampling rows, every kernel one in mem_lines
	total=$(awk -F'	' '{ s += $2 } END { print s + 0 }' "$TMP/got")
	kern=$(sed -n "s/^  event '.*': [0-9]* samples (\([0-9]*\) kernel.*/\1/p" "$TMP/out" |
		awk '{ s += $1 } END { print s + 0 }')
	check "$name: sampling.samples" \
		"$(q "SELECT sum(samples) FROM sampling JOIN intervals USING (interval_id) WHERE boot_id = $B")" -eq "$total"
	check "$name: sampling.samples_kernel" \
		"$(q "SELECT sum(samples_kernel) FROM sampling JOIN intervals USING (interval_id) WHERE boot_id = $B")" -eq "$kern"
	stored=$(q "SELECT coalesce(sum(loads + stores + noparse), 0) FROM mem_lines JOIN intervals USING (interval_id) WHERE boot_id = $B AND kernel = 1")
	check "$name: kernel samples in mem_lines" "$stored" -eq "$kern"

	# the intervals cover the samples' time range (perf script's first..last)
	times=$(perf script -i "$f" -F time --ns 2>/dev/null | tr -d ' :' | sort -n | sed -n '1p;$p' | tr '\n' ' ')
	set -- $times
	if [ $# -eq 2 ]; then
		want_span=$(echo "$2 $1" | awk '{ printf "%.0f", ($1 - $2) * 1e9 + 1 }')
		got_span=$(q "SELECT max(end_ns) - min(start_ns) FROM intervals WHERE boot_id = $B")
		diff=$(( got_span - want_span ))
		[ "$diff" -lt 0 ] && diff=$(( -diff ))
		check "$name: intervals span the samples (ns, perf script rounds)" "$diff" -le 1000
	fi
	return 0
}

# --- the real fixtures -------------------------------------------------------

n=0
for f in "$FIX"/*.perf.data; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	check_import "$f" || continue
	name=$(basename "$f")
	check_str "$name: hostname from the file" \
		"$(q "SELECT hostname FROM boots JOIN hosts USING (host_id) WHERE boot_id = $B")" \
		"$(header "$f" hostname)"
	check_str "$name: kernel from the file" \
		"$(q "SELECT kernel_release FROM boots WHERE boot_id = $B")" "$(header "$f" "os release")"
	check_str "$name: CPUs from the file" \
		"$(q "SELECT nr_cpus_online FROM boots WHERE boot_id = $B")" "$(header "$f" "nrcpus online")"
	check_str "$name: Intel PEBS recognized" "$(q "SELECT pmu_kind FROM boots WHERE boot_id = $B")" intel-pebs
done
# perf 4.4, 5.4 and 5.17 files ship with the repository (tests/fixtures/PROVENANCE)
check "real perf.data fixtures in $FIX" "$n" -ge 3

C2C=$(fixture perfdata_prospar_c2c_record_userspace.perf.data) || exit 1
if [ -f "$C2C" ]; then
	# user-space samples are counted, stored per line only with --user
	check "c2c fixture: no user lines by default" \
		"$(q "SELECT count(*) FROM mem_lines l JOIN intervals i USING (interval_id) JOIN boots b USING (boot_id) WHERE b.kernel_release = '5.4.0-150-generic'")" -eq 0
	check_import "$C2C" --user --hostname fleet-17 --kernel-release 5.4.0-override --interval 10ms ||
		fail "c2c fixture with --user did not import"
	check_str "--hostname" "$(q "SELECT hostname FROM boots JOIN hosts USING (host_id) WHERE boot_id = $B")" fleet-17
	check_str "--kernel-release" "$(q "SELECT kernel_release FROM boots WHERE boot_id = $B")" 5.4.0-override
	# perf c2c report: Store Operations 18, Store L1D Hit 18 (the file's only samples)
	check "--user: stores per line" "$(q "SELECT sum(stores) FROM mem_lines JOIN intervals USING (interval_id) WHERE boot_id = $B")" -eq 18
	check "--user: L1D store hits" "$(q "SELECT sum(st_l1hit) FROM mem_lines JOIN intervals USING (interval_id) WHERE boot_id = $B")" -eq 18
	check "--user: line size from the file's CACHE feature" "$(q "SELECT cache_line_size FROM boots WHERE boot_id = $B")" -eq 64
	check "--user: lines are line-aligned" "$(q "SELECT count(*) FROM mem_lines JOIN intervals USING (interval_id) WHERE boot_id = $B AND (line_addr % 64 <> 0 OR offset >= 64)")" -eq 0
fi

# --- recorded here by real perf ----------------------------------------------

RECORDED=
if perf record -q -d -e page-faults -a -o "$TMP/pf.data" -- dd if=/dev/zero of=/dev/null bs=1M count=4 \
	>/dev/null 2>&1; then
	check_import "$TMP/pf.data" && RECORDED=1
else
	echo "note: perf record -d -e page-faults -a is not permitted here"
fi
if perf record -q -d -g -c 1 -e page-faults -a -o "$TMP/pfg.data" -- dd if=/dev/zero of=/dev/null bs=1M count=4 \
	>/dev/null 2>&1; then
	args="--kallsyms /proc/kallsyms"
	[ -r /sys/kernel/btf/vmlinux ] && args="$args --btf /sys/kernel/btf/vmlinux"
	if check_import "$TMP/pfg.data" $args; then
		grep "kernel symbols\|struct fields" "$TMP/out"
		check "recorded -g: kernel lines" "$(q "SELECT count(*) FROM mem_lines JOIN intervals USING (interval_id) WHERE boot_id = $B AND kernel = 1")" -gt 0
		check "recorded -g: callchains" "$(q "SELECT count(*) FROM callchains WHERE boot_id = $B")" -gt 0
		check "recorded -g: callchains are kernel frames" "$(q "SELECT count(*) FROM callchains WHERE boot_id = $B AND ips NOT LIKE '0xffff%'")" -eq 0
		check "--kallsyms: symbols stored" "$(q "SELECT count(*) FROM ksyms WHERE boot_id = $B")" -gt 0
		check "--kallsyms: every kernel IP is inside a stored symbol" \
			"$(q "SELECT count(*) FROM mem_lines l JOIN intervals i USING (interval_id) WHERE i.boot_id = $B AND l.kernel = 1 AND NOT EXISTS (SELECT 1 FROM ksyms k WHERE k.boot_id = $B AND l.ip >= k.addr AND l.ip < k.addr + k.size)")" -eq 0
		echo "symbols hit: $(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM ksyms WHERE boot_id = $B LIMIT 8)")"
		if [ -r /sys/kernel/btf/vmlinux ]; then
			check "--btf: struct page stored" "$(q "SELECT count(*) FROM btf_layouts WHERE boot_id = $B AND struct = 'page' AND field = ''")" -eq 1
		fi
		check_str "recorded: this host" "$(q "SELECT hostname FROM boots JOIN hosts USING (host_id) WHERE boot_id = $B")" "$(uname -n)"
		check_str "recorded: this kernel" "$(q "SELECT kernel_release FROM boots WHERE boot_id = $B")" "$(uname -r)"
		RECORDED=1
	fi
fi

# --- the same file twice -----------------------------------------------------

SRC=${RECORDED:+$TMP/pfg.data}
[ -n "$SRC" ] || SRC=$C2C
[ -f "$SRC" ] || skip "nothing to import: no fixtures and perf record not permitted"
state=$(db_state)
if "$MMHITM" import "$SRC" --db "$DB" >/dev/null 2>"$TMP/err"; then
	fail "a second import of the same file succeeded"
else
	check_str "a second import is refused" "$(grep -c "already imported" "$TMP/err")" 1
fi
check_str "a refused import changes nothing" "$(db_state)" "$state"

# --- malformed copies --------------------------------------------------------

# expect_error NAME FILE PATTERN: fails naming an offset, DB unchanged
expect_error() {
	state=$(db_state)
	if "$MMHITM" import "$2" --db "$DB" >/dev/null 2>"$TMP/err"; then
		fail "$1: imported a malformed file"
	else
		msg=$(cat "$TMP/err")
		case $msg in
		*offset*) pass "$1: $msg" ;;
		*) fail "$1: the error names no offset: $msg" ;;
		esac
		[ -z "$3" ] || grep -q "$3" "$TMP/err" || fail "$1: error lacks '$3'"
	fi
	check_str "$1: database unchanged" "$(db_state)" "$state"
}

size=$(stat -c %s "$SRC")
doff=$(u64_at "$SRC" 40)
dsize=$(u64_at "$SRC" 48)
aoff=$(u64_at "$SRC" 24)
for cut in 8 60 $((aoff + 40)) $((doff + 20)) $((doff + dsize / 2 + 3)) $((doff + dsize - 3)) $((size - 20)); do
	head -c "$cut" "$SRC" >"$TMP/cut.data"
	expect_error "truncated at $cut of $size bytes" "$TMP/cut.data" truncated
done

cp "$SRC" "$TMP/bad.data"; patch "$TMP/bad.data" $((aoff + 4)) '\000\002\000\000'
expect_error "attr.size corrupted (512)" "$TMP/bad.data" "attr.size"
cp "$SRC" "$TMP/bad.data"; patch "$TMP/bad.data" 16 '\007\000\000\000\000\000\000\000'
expect_error "header attr_size corrupted (7)" "$TMP/bad.data" attr_size
cp "$SRC" "$TMP/bad.data"; patch "$TMP/bad.data" 8 '\231\000\000\000\000\000\000\000'
expect_error "header size corrupted (0x99)" "$TMP/bad.data" "header size"
cp "$SRC" "$TMP/bad.data"; patch "$TMP/bad.data" 48 '\000\000\000\000\000\001\000\000'
expect_error "header data size corrupted (2^40)" "$TMP/bad.data" "data section"
cp "$SRC" "$TMP/bad.data"; patch "$TMP/bad.data" $((doff + 6)) '\004\000'
expect_error "first record's size corrupted (4)" "$TMP/bad.data" "less than"
# the header ends the data section inside a record (the feature table,
# which follows the data section, dropped: it would move with it)
half=$((dsize / 2 + 3))
cp "$SRC" "$TMP/bad.data"
patch "$TMP/bad.data" 48 "$(le64 $half)"
patch "$TMP/bad.data" 72 "$(le64 0)$(le64 0)$(le64 0)$(le64 0)"
expect_error "data section ending inside a record" "$TMP/bad.data" "truncated or corrupt"
cp "$SRC" "$TMP/bad.data"; patch "$TMP/bad.data" "$doff" '\121\000\000\000'
expect_error "a PERF_RECORD_COMPRESSED record" "$TMP/bad.data" "PERF_RECORD_COMPRESSED"
if perf record -q -z -d -e page-faults -a -o "$TMP/z.data" -- true >/dev/null 2>&1; then
	expect_error "perf record -z (zstd)" "$TMP/z.data" "compressed"
else
	echo "note: this perf cannot record -z"
fi

# a failure inside the transaction (here: an unreadable --kallsyms, after
# the boot, intervals and lines were inserted) rolls all of it back
state=$(db_state)
cp "$SRC" "$TMP/again.data"
printf 'x' >>"$TMP/again.data"	# another file: not refused as a duplicate
if "$MMHITM" import "$TMP/again.data" --db "$DB" --kallsyms "$TMP/nonexistent" >/dev/null 2>"$TMP/err"; then
	fail "an import with an unreadable --kallsyms succeeded"
else
	pass "failure inside the transaction: $(cat "$TMP/err")"
fi
check_str "a failure inside the transaction leaves the database unchanged" "$(db_state)" "$state"

# a failed import into a new database leaves no file behind
"$MMHITM" import "$TMP/bad.data" --db "$TMP/new.db" >/dev/null 2>&1
check_str "no database left by a failed first import" "$(ls "$TMP"/new.db* 2>/dev/null | wc -l)" 0

# one sample time with a flipped byte (tests/fixtures/corrupt/, 18 memory
# samples over 0.13 s): once a SIGSEGV or 75,060 empty intervals, now
# that sample is dropped and said so
for f in tests/fixtures/corrupt/c2c-sample-time-*.perf.data; do
	name=$(basename "$f" .perf.data)
	rm -f "$TMP"/outlier.db*
	DB=$TMP/outlier.db
	if "$MMHITM" import "$f" --db "$DB" --user >"$TMP/out" 2>"$TMP/err"; then
		check "$name: intervals" "$(q "SELECT count(*) FROM intervals")" -eq 1
		check "$name: samples stored" "$(q "SELECT sum(samples) FROM sampling")" -eq 17
		check "$name: summary says" "$(grep -c '1 memory samples dropped' "$TMP/out")" -eq 1
		check "$name: warning says" "$(grep -c '1 of 18 memory samples have times' "$TMP/err")" -eq 1
	else
		fail "$name: import failed (rc $?): $(cat "$TMP/err")"
	fi
done

finish
