#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mmhitm record's bundles (cli/bundle.c, cli/cmd-record.c), imported with
# no option:
#  - the foreign-attribution cases (c2c_cases.py at Debian's 6.1 and 6.12
#    layouts) packed with their recorded host's kallsyms, BTF and vmemmap
#    base: `mmhitm import BUNDLE` alone types them as the import given
#    --btf --kallsyms --vmemmap-base does, all P1-P4 HITM on the right path
#    and every line the same (mmhitm top);
#  - recorded here: no memory-sampling PMU, so `mmhitm record` says so and
#    fails; with --event page-faults (a software event with data addresses)
#    it records and packs the kallsyms lines the samples need (their
#    symbols and each one's successor), the BTF, bases and boot id; the
#    bundle imported into another database holds the same boot, bases and
#    lines as the perf.data imported here directly (where the import reads
#    them from the running kernel);
#  - a truncated bundle, one altered in its compressed bytes, one whose
#    member was swapped under an unchanged manifest, and one from a newer
#    mmhitm are refused with one line, and no database is left behind.

. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
MMHITM=$O/mmhitm
KERNELS=$TOP/tests/fixtures/kernels
TMP=$(mktemp -d /tmp/mmhitm-test-record-XXXXXX)
trap 'mountpoint -q "$TMP/small" && umount "$TMP/small"; rm -rf "$TMP"' EXIT
VMEMMAP=0xffffe3c580000000	# c2c_cases.py's recorded boot

# lines DB: every typed line, as mmhitm top prints them (no database name)
lines() {
	"$MMHITM" top --db "$1" --since @0 --all --limit 500 --csv 2>/dev/null | cut -d, -f2-
}

# --- the foreign cases, as bundles ------------------------------------------------
for k in "$KERNELS"/*/; do
	rel=$(basename "$k")
	python3 tests/integration/c2c_cases.py write "$k" "$TMP/$rel.data" "$TMP/$rel.json" >/dev/null ||
		{ fail "$rel: c2c_cases.py write"; continue; }
	"$MMHITM" record --perf-data "$TMP/$rel.data" --kallsyms "$k/kallsyms" --btf "$k/layout.btf" \
		--vmemmap-base $VMEMMAP --output "$TMP/$rel.bundle" >"$TMP/record.out" 2>&1 ||
		{ fail "$rel: record --perf-data: $(cat "$TMP/record.out")"; continue; }
	check_str "$rel: the bundle lists its members (tar)" \
		"$(tar tzf "$TMP/$rel.bundle" | tr '\n' ' ')" "MANIFEST perf.data kallsyms btf "
	"$MMHITM" import "$TMP/$rel.bundle" --db "$TMP/$rel-bundle.db" --interval 1s \
		>"$TMP/import.out" 2>"$TMP/import.err" || { fail "$rel: import BUNDLE: $(cat "$TMP/import.err")"; continue; }
	check "$rel: the bundle's import asks for nothing" \
		"$(grep -c 'pass --' "$TMP/import.err")" -eq 0
	"$MMHITM" analyze --db "$TMP/$rel-bundle.db" >/dev/null 2>&1 || fail "$rel: analyze (bundle)"
	python3 tests/integration/c2c_cases.py score "$TMP/$rel-bundle.db" "$TMP/$rel.json" >"$TMP/score.out" ||
		fail "$rel: score of the bundle's import"
	check "$rel: bundle: all P1-P4 HITM on the right path" \
		"$(grep -c 'right path \([0-9]*\) of \1 (100.0 %)' "$TMP/score.out")" -eq 1
	grep '^score' "$TMP/score.out" | sed 's/^/    /'
	# the same file imported with the inputs as options
	"$MMHITM" import "$TMP/$rel.data" --db "$TMP/$rel-given.db" --interval 1s --btf "$k/layout.btf" \
		--kallsyms "$k/kallsyms" --vmemmap-base $VMEMMAP >/dev/null 2>&1 || fail "$rel: import with options"
	"$MMHITM" analyze --db "$TMP/$rel-given.db" >/dev/null 2>&1
	lines "$TMP/$rel-given.db" >"$TMP/given.lines"
	lines "$TMP/$rel-bundle.db" >"$TMP/bundle.lines"
	check "$rel: typed lines" "$(wc -l <"$TMP/bundle.lines")" -ge 10
	check_str "$rel: the bundle's lines are the options' lines" \
		"$(cmp -s "$TMP/given.lines" "$TMP/bundle.lines" && echo same)" "same"
	check_str "$rel: its boot's bases and layout source" \
		"$(sqlite3 "$TMP/$rel-bundle.db" "SELECT printf('0x%x', vmemmap_base), layout_source FROM boots")" \
		"$VMEMMAP|given"
done

# --- a patch map given: the markers this kernel has, each path's state -------------
k=$(ls -d "$KERNELS"/6.12*/ | head -1)
printf 'lacks all release *\ncarries P2 ksym do_anonymous_page\ncarries P3 ksym no_such_marker\n' \
	>"$TMP/patches.conf"
"$MMHITM" record --perf-data "$TMP/$(basename "$k").data" --kallsyms "$k/kallsyms" --btf "$k/layout.btf" \
	--kernel-release "$(basename "$k")" --patches "$TMP/patches.conf" --output "$TMP/p.bundle" \
	>/dev/null 2>&1 || fail "record --patches"
tar xzOf "$TMP/p.bundle" MANIFEST >"$TMP/p.manifest"
check_str "--patches: the marker this kernel has, not the other" \
	"$(sed -n 's/^marker //p' "$TMP/p.manifest" | tr '\n' ' ')" "do_anonymous_page "
check_str "--patches: each path's state by the map" "$(sed -n 's/^patches //p' "$TMP/p.manifest")" \
	"P1 lacks, P2 carries, P3 lacks, P4 lacks"
"$MMHITM" import "$TMP/p.bundle" --db "$TMP/p.db" >/dev/null 2>"$TMP/p.err" || fail "import of p.bundle"
# (no sample hits do_anonymous_page: stored as the marker only)
check "--patches: the import stores the marker for the report" \
	"$(sqlite3 "$TMP/p.db" "SELECT count(*) FROM ksyms WHERE name = 'do_anonymous_page'")" -eq 1
check "--patches: ... which the same import without the bundle's marker lacks" \
	"$(sqlite3 "$TMP/$(basename "$k")-given.db" "SELECT count(*) FROM ksyms WHERE name = 'do_anonymous_page'")" -eq 0
check "--patches: and says what the map said" \
	"$(grep -c 'patch map said P1 lacks, P2 carries' "$TMP/p.err")" -eq 1

# --- samples that name no kernel address: an empty kallsyms, imported -------------
# (a user-space c2c recording, packed with this boot's context; CI's
# page-fault recording once named none and the import refused the bundle)
if [ "$(id -u)" = 0 ]; then
	"$MMHITM" record --perf-data "$FIXTURES/perfdata_prospar_c2c_record_userspace.perf.data" \
		--output "$TMP/user.bundle" >/dev/null 2>"$TMP/user.err" || fail "record (user space): $(cat "$TMP/user.err")"
	check "user space: the bundle's kallsyms is empty" "$(tar xzOf "$TMP/user.bundle" kallsyms | wc -c)" -eq 0
	"$MMHITM" import "$TMP/user.bundle" --db "$TMP/user.db" >/dev/null 2>"$TMP/user.err" ||
		fail "import of a bundle with no kernel symbol: $(cat "$TMP/user.err")"
	check "user space: imported, its boot and intervals" \
		"$(sqlite3 "$TMP/user.db" 'SELECT count(*) FROM intervals' 2>/dev/null || echo 0)" -ge 1
fi

# --- recorded here ---------------------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v perf >/dev/null 2>&1; then
	if "$MMHITM" record --duration 1s --output "$TMP/c2c.bundle" >"$TMP/c2c.out" 2>"$TMP/c2c.err"; then
		echo "note: this machine samples memory (perf c2c record worked): the no-PMU line is not tested"
	else
		check "no PMU: one line says so, and what --event can still record" \
			"$(grep -c 'No memory-sampling PMU here: .*--event page-faults' "$TMP/c2c.err")" -eq 1
		check_str "no PMU: no bundle left" "$(ls "$TMP" | grep -c '^c2c\.bundle')" "0"
	fi
	"$MMHITM" record --event page-faults --duration 2s --output "$TMP/pf.bundle" \
		>"$TMP/pf.out" 2>"$TMP/pf.err" || fail "record --event page-faults: $(cat "$TMP/pf.err")"
	tar xzOf "$TMP/pf.bundle" MANIFEST >"$TMP/pf.manifest"
	check_str "the manifest: this boot's id" "$(sed -n 's/^boot_id //p' "$TMP/pf.manifest")" \
		"$(cat /proc/sys/kernel/random/boot_id)"
	check_str "the manifest: this kernel" "$(sed -n 's/^kernel_release //p' "$TMP/pf.manifest")" "$(uname -r)"
	# only the lines the samples need (the same boot, symbols and lines below prove enough)
	check "the bundle's kallsyms: under a tenth of this boot's lines" \
		"$(tar xzOf "$TMP/pf.bundle" kallsyms | wc -l)" -lt "$(($(wc -l </proc/kallsyms) / 10))"
	"$MMHITM" import "$TMP/pf.bundle" --db "$TMP/pf-bundle.db" >"$TMP/pfb.out" 2>"$TMP/pfb.err" ||
		fail "import of the recorded bundle: $(cat "$TMP/pfb.err")"
	mkdir "$TMP/x" && tar xzf "$TMP/pf.bundle" -C "$TMP/x" perf.data
	"$MMHITM" import "$TMP/x/perf.data" --db "$TMP/pf-here.db" >/dev/null 2>&1 ||
		fail "import of its perf.data here"
	boot="SELECT hostname, kernel_release, recorded_boot_uuid, vmemmap_base, page_offset, layout_source,
		(SELECT count(*) FROM ksyms), (SELECT count(*) FROM mem_lines) FROM boots JOIN hosts USING (host_id)"
	check_str "bundle and here: the same boot, bases, symbols and lines" \
		"$(sqlite3 "$TMP/pf-bundle.db" "$boot")" "$(sqlite3 "$TMP/pf-here.db" "$boot")"
	# (a page fault's data address is a user address, a line only with
	# --user, and its IP the user's unless the kernel faulted: how many
	# kernel symbols and lines a machine gives varies; that the two
	# imports agree is the check, the foreign cases above the filter's)
	check "... with samples" "$(sed -n "s/.*event 'page-faults': \([0-9]*\) samples.*/\1/p" "$TMP/pfb.out")" -ge 1
	check_str "... and the same struct fields" \
		"$(sqlite3 "$TMP/pf-bundle.db" 'SELECT count(*) FROM btf_layouts' 2>&1)" \
		"$(sqlite3 "$TMP/pf-here.db" 'SELECT count(*) FROM btf_layouts' 2>&1)"
else
	echo "note: not root or no perf: nothing is recorded here (the bundles above still are tested)"
fi

# --- refused whole ---------------------------------------------------------------
B=$TMP/$(basename "$(ls -d "$KERNELS"/*/ | tail -1)").bundle
refused() {	# name file pattern: one line matching, no database
	"$MMHITM" import "$2" --db "$TMP/bad-$1.db" >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	check "$1: refused (exit)" "$rc" -ne 0
	check "$1: one line" "$(wc -l <"$TMP/bad.err")" -eq 1
	check "$1: it says why ($(cat "$TMP/bad.err"))" "$(grep -c "not a whole mmhitm bundle: $3; nothing imported" "$TMP/bad.err")" -eq 1
	check_str "$1: no database left" "$(test -e "$TMP/bad-$1.db" && echo left)" ""
}
size=$(stat -c %s "$B")
head -c $((size / 2)) "$B" >"$TMP/truncated.bundle"
refused truncated "$TMP/truncated.bundle" "truncated in .*"
cp "$B" "$TMP/flipped.bundle"
printf '\377' | dd of="$TMP/flipped.bundle" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
refused flipped "$TMP/flipped.bundle" "\(corrupt\|truncated\|a member's header\|member\|.*manifest\).*"
# a member altered under the manifest (re-packed with tar, as someone
# would): one byte, the same size; then one line more
mkdir "$TMP/re" && tar xzf "$B" -C "$TMP/re" &&
	sed -i '1s/^0/1/;t;1s/^./0/' "$TMP/re/kallsyms" &&
	tar czf "$TMP/altered.bundle" --format=ustar -C "$TMP/re" MANIFEST perf.data kallsyms btf
refused altered "$TMP/altered.bundle" "kallsyms: CRC-32 [0-9a-f]*, the manifest says [0-9a-f]* (altered)"
sed -i '1s/^/ffffffff00000000 T swapped_in\n/' "$TMP/re/kallsyms" &&
	tar czf "$TMP/swapped.bundle" --format=ustar -C "$TMP/re" MANIFEST perf.data kallsyms btf
refused swapped "$TMP/swapped.bundle" "kallsyms: [0-9]* bytes, the manifest says [0-9]*"
sed -i 's/^mmhitm-bundle 1$/mmhitm-bundle 9/' "$TMP/re/MANIFEST" &&
	tar xzf "$B" -C "$TMP/re" kallsyms &&
	tar czf "$TMP/newer.bundle" --format=ustar -C "$TMP/re" MANIFEST perf.data kallsyms btf
refused newer "$TMP/newer.bundle" "a bundle of version 9, newer than this mmhitm reads (1): update mmhitm"
sed -i 's/^mmhitm-bundle 9$/mmhitm-bundle 1/; s/^file kallsyms [0-9]* /file kallsyms 999999999 /' \
	"$TMP/re/MANIFEST" &&
	tar czf "$TMP/huge.bundle" --format=ustar -C "$TMP/re" MANIFEST perf.data kallsyms btf
refused huge "$TMP/huge.bundle" "the manifest gives kallsyms 999999999 bytes, more than the 256 MiB it may hold"
sed -i 's/^file kallsyms 999999999 /file kallsyms '"$(stat -c %s "$TMP/re/kallsyms")"' /; s/^boot_id .*/boot_id x; DROP TABLE boots/' \
	"$TMP/re/MANIFEST" &&
	tar czf "$TMP/bootid.bundle" --format=ustar -C "$TMP/re" MANIFEST perf.data kallsyms btf
refused bootid "$TMP/bootid.bundle" "the manifest's boot_id 'x; DROP TABLE boots' is not a UUID"
# record takes what import takes for a recorded boot
"$MMHITM" record --perf-data "$TMP/x.data" --boot-id bogus --output "$TMP/no.bundle" 2>"$TMP/opt.err"
check "record --boot-id bogus: refused as import refuses it" "$(grep -c "Invalid --boot-id 'bogus'" "$TMP/opt.err")" -eq 1
"$MMHITM" record --perf-data "$TMP/x.data" --vmemmap-base 0x1234 --output "$TMP/no.bundle" 2>"$TMP/opt.err"
check "record --vmemmap-base 0x1234: not a 1 GiB-aligned kernel address" \
	"$(grep -c "1 GiB-aligned kernel address" "$TMP/opt.err")" -eq 1
# no room where it is extracted (TMPDIR): said, and nothing written
mkdir "$TMP/small"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$TMP/small" 2>/dev/null; then
	TMPDIR=$TMP/small refused full "$B" "extracting it takes [0-9]* MiB in $TMP/small/mmhitm-import-[^,]*, 0 MiB are free (TMPDIR chooses another directory)"
	check_str "full: nothing left in TMPDIR" "$(ls -A "$TMP/small")" ""
	umount "$TMP/small"
else
	echo "note: cannot mount a small tmpfs (not root?): the full-TMPDIR refusal is not tested"
fi
finish
