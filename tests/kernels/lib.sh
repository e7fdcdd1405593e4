# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tests/kernels/test-*.sh: boots Debian's cloud kernels under
# QEMU with a busybox initramfs that carries the project's binaries, and a
# small ext4 virtio disk that brings the results back.
#
#   kernel_fetch SERIES      6.1 or 6.12: sets KPKG KDIR KVER VMLINUZ
#   initramfs_build OUT BIN...
#   disk_make IMG MIB [DIR]  an ext4 image, optionally filled from DIR
#   disk_pull IMG PATH DEST  copies PATH (file or dir) out of the image
#   disk_pull_db IMG NAME DEST  the same for a SQLite DB and its WAL
#   qemu_boot NAME SCENARIO TAG IMG [SECONDS]
#   rootfs_build             a cached Debian 12 userspace with systemd: sets ROOTFS
#   packages_clean_build     this tree's Debian packages, built in a clean
#                            Debian 12 chroot: sets DEBS
#   packages_at COMMIT       an earlier commit's, built once: sets DEBS_AT
#
# Environment (all optional):
#   O             build directory (default build); work files go to $O/kernels
#   KERNEL_CACHE  downloaded .debs and their extraction, shared by worktrees
#                 and kept by make clean (default ~/.cache/mmhitm/kernels)
#   KERNEL_OLD, KERNEL_NEW
#                 package names of the 6.1 and the 6.12 kernel (default: the
#                 newest linux-image-*-cloud-amd64-unsigned apt knows)
#   QEMU_ACCEL    tcg,thread=single (default), or kvm where it works
#   QEMU_MEM      guest memory in MiB (default 1024)
#   BOOT_TIMEOUT  seconds for the kernel to reach /init before TCG counts as
#                 too slow on this machine (default 90)
#   QEMU_APPEND   more kernel command line for qemu_boot
#   ROOTFS_CACHE  debootstrapped userspaces, one per package list, shared by
#                 worktrees like KERNEL_CACHE (default ~/.cache/mmhitm/rootfs)
#   DEBIAN_MIRROR where debootstrap gets them (default http://deb.debian.org/debian)
#   DEBIAN_SECURITY_MIRROR  bookworm-security, for the build chroot's
#                 linux-source-6.12 (default DEBIAN_MIRROR-security)

TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
O=${O:-build}
case $O in /*) ;; *) O=$TOP/$O ;; esac
KERNEL_CACHE=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmhitm/kernels}
# One TCG thread for both vCPUs: multi-threaded TCG oopsed a guest with
# int3 in kmem_cache_alloc_noprof while the daemon patched its tracepoints
# in (text_poke_bp) and another vCPU ran that code: cross-modifying code is
# not synchronized between TCG threads. As fast here (lru-gen: 40 s).
QEMU_ACCEL=${QEMU_ACCEL:-tcg,thread=single}
QEMU_MEM=${QEMU_MEM:-1024}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-90}
QEMU_APPEND=${QEMU_APPEND:-}
ROOTFS_CACHE=${ROOTFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmhitm/rootfs}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-${DEBIAN_MIRROR}-security}
KTESTS=$TOP/tests/kernels
BUSYBOX=${BUSYBOX:-/bin/busybox}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
note() { echo "== $*"; }

# Every check prints one line, so the log reads as the list of what the
# test proved; the first failing one ends the test.
check() {	# description shell-test-args...
	desc=$1; shift
	if [ "$@" ]; then
		echo "ok    $desc"
	else
		echo "FAIL  $desc  [test: $*]"
		exit 1
	fi
}

# The tools every scenario needs; a missing one is a skip, not a failure:
# make deps installs them.
require_tools() {	# tool...
	for t in qemu-system-x86_64 apt-get dpkg-deb mkfs.ext4 debugfs cpio \
		 modinfo flock timeout "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t not installed (make deps)"
	done
	[ -x "$BUSYBOX" ] || skip "$BUSYBOX missing (make deps: busybox-static)"
	ldd "$BUSYBOX" >/dev/null 2>&1 && skip "$BUSYBOX is dynamic; install busybox-static"
	:
}

# Work files of one test: $O/kernels/NAME, emptied first.
work_dir() {	# name
	WORK=$O/kernels/$1
	rm -rf "$WORK" && mkdir -p "$WORK" || fail "cannot create $WORK"
}

# --- kernels ---------------------------------------------------------------

kernel_pkg_re() {	# series -> ERE over package names
	case $1 in
	6.1)	echo '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' ;;
	6.12)	echo '^linux-image-6\.12\.[0-9]+\+deb[0-9]+-cloud-amd64-unsigned$' ;;
	*)	fail "unknown kernel series $1" ;;
	esac
}

# Prints the package to use for a series: the override, else the newest
# apt knows, else (offline, no apt lists) the newest already cached.
kernel_pkg() {	# series
	case $1 in
	6.1)	[ -n "${KERNEL_OLD:-}" ] && { echo "$KERNEL_OLD"; return; } ;;
	6.12)	[ -n "${KERNEL_NEW:-}" ] && { echo "$KERNEL_NEW"; return; } ;;
	esac
	re=$(kernel_pkg_re "$1")
	pkg=$(apt-cache search --names-only "$re" 2>/dev/null | cut -d' ' -f1 | sort -V | tail -n1)
	if [ -z "$pkg" ]; then
		pkg=$(ls "$KERNEL_CACHE" 2>/dev/null | sed -n 's/_.*\.deb$//p' |
			grep -E "$re" | sort -V | tail -n1)
	fi
	echo "$pkg"
}

# Downloads (once) and extracts (once) the kernel package of a series.
# Sets KPKG, KDIR (the extracted tree), KVER (uname -r) and VMLINUZ.
kernel_fetch() {	# series
	KPKG=$(kernel_pkg "$1")
	[ -n "$KPKG" ] || skip "no $1 cloud kernel package known to apt (apt-get update?) nor cached in $KERNEL_CACHE"
	mkdir -p "$KERNEL_CACHE" || skip "cannot create $KERNEL_CACHE"
	# Worktrees share the cache: one downloader/extractor at a time.
	exec 9>"$KERNEL_CACHE/.lock" && flock 9 || fail "cannot lock $KERNEL_CACHE"
	deb=$(ls "$KERNEL_CACHE/${KPKG}_"*.deb 2>/dev/null | sort -V | tail -n1)
	if [ -z "$deb" ]; then
		note "apt-get download $KPKG"
		# As root apt drops to _apt, which cannot write a private cache.
		sandbox=
		[ "$(id -u)" = 0 ] && sandbox="-o APT::Sandbox::User=root"
		if ! (cd "$KERNEL_CACHE" && apt-get download -q $sandbox "$KPKG") >"$KERNEL_CACHE/.apt.log" 2>&1; then
			sed 's/^/    /' "$KERNEL_CACHE/.apt.log"
			exec 9>&-
			skip "apt-get download $KPKG failed (offline or package gone)"
		fi
		deb=$(ls "$KERNEL_CACHE/${KPKG}_"*.deb 2>/dev/null | sort -V | tail -n1)
		[ -n "$deb" ] || { exec 9>&-; skip "apt-get download $KPKG left no .deb"; }
	fi
	KDIR=${deb%.deb}
	if [ ! -d "$KDIR" ]; then
		note "dpkg-deb -x $(basename "$deb")"
		if ! { rm -rf "$KDIR.tmp" && dpkg-deb -x "$deb" "$KDIR.tmp" && mv "$KDIR.tmp" "$KDIR"; }; then
			# Most likely an interrupted download: the next run fetches it again.
			rm -rf "$deb" "$KDIR.tmp"
			exec 9>&-
			fail "cannot extract $deb (removed it from the cache)"
		fi
	fi
	exec 9>&-
	KVER=$(ls "$KDIR/lib/modules" | head -n1)
	VMLINUZ=$KDIR/boot/vmlinuz-$KVER
	[ -n "$KVER" ] && [ -f "$VMLINUZ" ] || fail "$deb has no vmlinuz"
	echo "kernel $1: $KPKG ($KVER)"
}

# Prints the module files (relative to /lib/modules/KVER) that loading the
# named modules takes, dependencies first. Built-in ones are left out.
module_closure() {	# module...
	_mdir=$KDIR/lib/modules/$KVER
	_index=$WORK/modules-$KVER.index
	[ -f "$_index" ] || (cd "$_mdir" && find kernel -name '*.ko*') |
		awk '{ n = $0; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n); print n, $0 }' \
		> "$_index"
	_seen=" "
	for _m in "$@"; do
		module_visit "$_m"
	done
}

module_visit() {	# module
	local name file dep
	name=$(echo "$1" | tr - _)
	case $_seen in *" $name "*) return ;; esac
	_seen="$_seen$name "
	file=$(awk -v n="$name" '$1 == n { print $2; exit }' "$_index")
	if [ -z "$file" ]; then
		sed 's/.*\///; s/\.ko.*//; s/-/_/g' "$_mdir/modules.builtin" | grep -qx "$name" ||
			fail "module $name neither built into $KVER nor shipped with it"
		return
	fi
	for dep in $(modinfo -F depends "$_mdir/$file" | tr , ' '); do
		module_visit "$dep"
	done
	echo "$file"
}

# --- initramfs -------------------------------------------------------------

# Copies a program and the shared libraries ldd finds for it into a root.
copy_program() {	# root program
	mkdir -p "$1/usr/bin" && cp -L "$2" "$1/usr/bin/" || fail "cannot copy $2"
	ldd "$2" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		mkdir -p "$1$(dirname "$lib")" && cp -L "$lib" "$1$lib" || fail "cannot copy $lib"
	done
}

# Builds the initramfs for the kernel kernel_fetch chose: busybox, /init,
# the guest scenarios, the given programs with their libraries, and the
# virtio modules this kernel does not have built in.
initramfs_build() {	# out program...
	_out=$1; shift
	_root=$WORK/initramfs.d
	rm -rf "$_root" && mkdir -p "$_root"/bin "$_root"/dev "$_root"/proc "$_root"/sys \
		"$_root"/mnt "$_root"/tmp "$_root"/run "$_root"/etc "$_root/lib/modules/$KVER" ||
		fail "cannot create $_root"
	cp "$BUSYBOX" "$_root/bin/busybox" && cp "$KTESTS/init" "$_root/init" &&
		chmod 755 "$_root/init" && cp -r "$KTESTS/guest" "$_root/guest" || fail "cannot fill $_root"
	for p in "$@"; do
		copy_program "$_root" "$p"
	done
	: > "$_root/lib/modules/load.order"
	for f in $(module_closure virtio_pci virtio_blk); do
		name=$(basename "$f" | sed 's/\.ko.*//')
		src=$KDIR/lib/modules/$KVER/$f
		dst=$_root/lib/modules/$KVER/$name.ko
		case $f in
		*.ko.xz)  xz -dc "$src" > "$dst" ;;
		*.ko.zst) zstd -qdc "$src" > "$dst" ;;
		*.ko.gz)  gzip -dc "$src" > "$dst" ;;
		*)        cp "$src" "$dst" ;;
		esac || fail "cannot unpack $f"
		echo "$KVER/$name.ko" >> "$_root/lib/modules/load.order"
	done
	(cd "$_root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$_out" ||
		fail "cannot write $_out"
	echo "initramfs $(basename "$_out"): $(du -k "$_out" | cut -f1) KiB, modules: $(tr '\n' ' ' < "$_root/lib/modules/load.order")"
	rm -rf "$_root"
}

# --- disk ------------------------------------------------------------------

disk_make() {	# img mib [dir]
	rm -f "$1" && truncate -s "${2}M" "$1" &&
		mkfs.ext4 -q -F -L mmhitm -E root_owner="$(id -u):$(id -g)" ${3:+-d "$3"} "$1" ||
		fail "cannot make $1"
}

# debugfs reads the image without mounting it: no root, no loop devices.
disk_pull() {	# img path dest
	rm -rf "$3" && mkdir -p "$3" || fail "cannot create $3"
	debugfs -R "rdump $2 $3" "$1" >/dev/null 2>"$3.debugfs.log"
	[ -e "$3/$(basename "$2")" ] || { cat "$3.debugfs.log"; fail "no $2 on $1"; }
}

# The DB a scenario left, with its WAL if the writer did not close it.
disk_pull_db() {	# img name dest
	disk_pull "$1" "/$2" "$3"
	if debugfs -R "stat /$2-wal" "$1" 2>/dev/null | grep -q '^Inode:'; then
		echo "    note: /$2-wal left on the disk (writer did not close the DB)"
		debugfs -R "rdump /$2-wal $3" "$1" >/dev/null 2>&1
	fi
}

# --- a Debian userspace -----------------------------------------------------

# What test-systemd's guest runs: systemd as PID 1 and the shared libraries
# of mmhitmd and mmhitm (as on a fleet host: no procps, no udev), plus
# sqlite3 for the guest's own waits and trace-cmd to read its snapshots
# back where they were saved. The cache is keyed by this list.
ROOTFS_SUITE=bookworm
ROOTFS_PACKAGES="systemd systemd-sysv dbus libtracefs1 libtraceevent1 libtracecmd1 libsqlite3-0
	libbpf1 libsystemd0 libelf1 zlib1g libcurl4 sqlite3 trace-cmd"

# debootstraps (once) a minbase Debian 12 with ROOTFS_PACKAGES into
# ROOTFS_CACHE and sets ROOTFS to it. Callers copy it, never change it.
# Minutes the first time; no network after. Needs root (debootstrap, and
# files only root may read end up in the image).
rootfs_build() {
	[ "$(id -u)" = 0 ] || skip "debootstrap and the guest image need root"
	command -v debootstrap >/dev/null 2>&1 || skip "debootstrap not installed (make deps)"
	_list=$(echo $ROOTFS_PACKAGES | tr ' ' '\n' | LC_ALL=C sort -u | tr '\n' ' ')
	_key=$(echo "$ROOTFS_SUITE minbase $DEBIAN_MIRROR $_list" | sha256sum | cut -c1-12)
	ROOTFS=$ROOTFS_CACHE/$ROOTFS_SUITE-$_key
	mkdir -p "$ROOTFS_CACHE" || skip "cannot create $ROOTFS_CACHE"
	exec 9>"$ROOTFS_CACHE/.lock" && flock 9 || fail "cannot lock $ROOTFS_CACHE"
	# Moved into place only once complete: a directory is a whole one.
	if [ ! -d "$ROOTFS" ]; then
		note "debootstrap $ROOTFS_SUITE ($_list) from $DEBIAN_MIRROR into $ROOTFS"
		rm -rf "$ROOTFS.tmp"
		if ! debootstrap --variant=minbase --include="$(echo $_list | tr ' ' ,)" \
			"$ROOTFS_SUITE" "$ROOTFS.tmp" "$DEBIAN_MIRROR" >"$ROOTFS_CACHE/.debootstrap.log" 2>&1; then
			tail -n 15 "$ROOTFS_CACHE/.debootstrap.log" | sed 's/^/    /'
			rm -rf "$ROOTFS.tmp"
			exec 9>&-
			grep -q "Couldn't find these debs" "$ROOTFS_CACHE/.debootstrap.log" &&
				fail "debootstrap: a package of ROOTFS_PACKAGES does not exist in $ROOTFS_SUITE"
			skip "debootstrap $ROOTFS_SUITE from $DEBIAN_MIRROR failed (offline or mirror down)"
		fi
		# What a booted test never reads: half the size, a faster mkfs.
		rm -rf "$ROOTFS.tmp"/var/cache/apt/archives/*.deb "$ROOTFS.tmp"/var/lib/apt/lists/* \
			"$ROOTFS.tmp"/usr/share/doc/* "$ROOTFS.tmp"/usr/share/man/* \
			"$ROOTFS.tmp"/usr/share/locale/* "$ROOTFS.tmp"/usr/share/info/*
		mv "$ROOTFS.tmp" "$ROOTFS" || fail "cannot move $ROOTFS.tmp into place"
	fi
	exec 9>&-
	echo "rootfs: $ROOTFS ($(du -sm "$ROOTFS" | cut -f1) MiB, systemd $(cat "$ROOTFS"/var/lib/dpkg/status |
		awk '/^Package: systemd$/ { p = 1 } p && /^Version:/ { print $2; exit }'))"
}

# --- the Debian packages ----------------------------------------------------

# Sets DEBS to a directory holding this tree's packages as a clean Debian
# 12 builds them: a debootstrapped buildd chroot with only what
# debian/control's Build-Depends name (apt-get build-dep; kept in
# ROOTFS_CACHE, keyed by them), this tree's files copied in, and
# dpkg-buildpackage -us -uc -b. A Build-Depends the host has but the
# control file lacks fails here. Minutes the first time (the chroot and
# its packages, linux-source-6.12 among them), about two after.
packages_clean_build() {
	[ "$(id -u)" = 0 ] || skip "the build chroot needs root"
	command -v debootstrap >/dev/null 2>&1 || skip "debootstrap not installed (make deps-test)"
	_key=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*: /p' "$TOP/debian/control" | sha256sum | cut -c1-12)
	CHROOT=$ROOTFS_CACHE/$ROOTFS_SUITE-buildd-$_key
	mkdir -p "$ROOTFS_CACHE" || skip "cannot create $ROOTFS_CACHE"
	exec 9>"$ROOTFS_CACHE/.lock" && flock 9 || fail "cannot lock $ROOTFS_CACHE"
	if [ ! -d "$CHROOT" ]; then
		note "debootstrap --variant=buildd $ROOTFS_SUITE, then apt-get build-dep, into $CHROOT"
		rm -rf "$CHROOT.tmp"
		if ! debootstrap --variant=buildd "$ROOTFS_SUITE" "$CHROOT.tmp" "$DEBIAN_MIRROR" \
			>"$ROOTFS_CACHE/.buildd.log" 2>&1; then
			tail -n 15 "$ROOTFS_CACHE/.buildd.log" | sed 's/^/    /'
			rm -rf "$CHROOT.tmp"
			exec 9>&-
			skip "debootstrap $ROOTFS_SUITE from $DEBIAN_MIRROR failed (offline or mirror down)"
		fi
		# As an installed Debian 12 has them: linux-source-6.12 comes
		# from bookworm-security.
		mkdir -p "$CHROOT.tmp/tmp/bd/debian" && cp "$TOP/debian/control" "$CHROOT.tmp/tmp/bd/debian/" &&
			cp /etc/resolv.conf "$CHROOT.tmp/etc/resolv.conf" &&
			printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
				"$DEBIAN_MIRROR" "$ROOTFS_SUITE" "$DEBIAN_MIRROR" "$ROOTFS_SUITE" \
				"$DEBIAN_SECURITY_MIRROR" "$ROOTFS_SUITE" > "$CHROOT.tmp/etc/apt/sources.list" ||
			fail "cannot prepare $CHROOT.tmp"
		if ! { chroot "$CHROOT.tmp" apt-get update -q &&
		       chroot "$CHROOT.tmp" env DEBIAN_FRONTEND=noninteractive \
				apt-get build-dep -y -q --no-install-recommends /tmp/bd; } \
			>>"$ROOTFS_CACHE/.buildd.log" 2>&1; then
			tail -n 15 "$ROOTFS_CACHE/.buildd.log" | sed 's/^/    /'
			rm -rf "$CHROOT.tmp"
			exec 9>&-
			fail "apt-get build-dep of debian/control failed in a clean $ROOTFS_SUITE"
		fi
		chroot "$CHROOT.tmp" apt-get clean >/dev/null 2>&1
		rm -rf "$CHROOT.tmp/tmp/bd" "$CHROOT.tmp"/var/lib/apt/lists/*
		mv "$CHROOT.tmp" "$CHROOT" || fail "cannot move $CHROOT.tmp into place"
	fi
	# The build, in a directory of its own (the chroot is shared, and left
	# as it was found); /proc for the compilers.
	_b=/build/mmhitm-$$
	rm -rf "$CHROOT$_b" && env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS -u MAKELEVEL \
		make -C "$TOP" --no-print-directory -s deb-tree DEB_TREE="$CHROOT$_b/mmhitm" ||
		fail "cannot copy the tree into $CHROOT$_b"
	mount -t proc proc "$CHROOT/proc" || fail "cannot mount /proc in $CHROOT"
	note "dpkg-buildpackage -us -uc -b in $CHROOT"
	chroot "$CHROOT" sh -c "cd $_b/mmhitm && dpkg-buildpackage -us -uc -b" >"$WORK/clean-build.log" 2>&1
	_rc=$?
	umount "$CHROOT/proc"
	exec 9>&-
	DEBS=$WORK/debs
	rm -rf "$DEBS" && mkdir -p "$DEBS" && { [ $_rc -ne 0 ] || cp "$CHROOT$_b"/*.deb "$DEBS"/; }
	rm -rf "$CHROOT$_b"
	[ $_rc -eq 0 ] || { tail -n 20 "$WORK/clean-build.log"; fail "dpkg-buildpackage failed in a clean $ROOTFS_SUITE"; }
	ls "$DEBS"/mmhitm_*.deb "$DEBS"/mmhitm-load_*.deb >/dev/null 2>&1 ||
		fail "the clean build left no mmhitm_*.deb and mmhitm-load_*.deb"
	echo "packages: $(cd "$DEBS" && ls *.deb | tr '\n' ' ')built in a clean $ROOTFS_SUITE chroot"
}

# Sets DEBS_AT to a directory holding the packages of COMMIT, built once
# from `git archive` of it and kept in ROOTFS_CACHE: the earlier release
# test-systemd upgrades from.
packages_at() {	# commit
	git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout: no earlier commit to package"
	_c=$(git -C "$TOP" rev-parse --verify -q "$1^{commit}") ||
		skip "commit $1 is not in this clone (shallow?): no earlier package to upgrade from"
	DEBS_AT=$ROOTFS_CACHE/packages-$(echo "$_c" | cut -c1-12)
	[ -n "$(ls "$DEBS_AT"/mmhitm_*.deb 2>/dev/null)" ] && return 0
	note "make deb at $1 (once; kept in $DEBS_AT)"
	_src=$WORK/src-$1
	rm -rf "$_src" "$DEBS_AT.tmp" && mkdir -p "$_src" "$DEBS_AT.tmp" || fail "cannot create $_src"
	git -C "$TOP" archive "$_c" | tar -x -C "$_src" || fail "git archive $1 failed"
	# Not a git tree of its own: make deb must not find this one above it.
	GIT_CEILING_DIRECTORIES=$WORK env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS -u MAKELEVEL \
		make -C "$_src" --no-print-directory O=build deb >"$WORK/deb-$1.log" 2>&1 ||
		{ tail -n 20 "$WORK/deb-$1.log"; fail "make deb at $1 failed"; }
	cp "$_src"/build/deb/*.deb "$DEBS_AT.tmp"/ && rm -rf "$DEBS_AT" && mv "$DEBS_AT.tmp" "$DEBS_AT" ||
		fail "cannot keep the packages of $1 in $DEBS_AT"
	rm -rf "$_src"
}

# Fails unless every shared library ldd finds for the programs is in ROOT:
# a new dependency must go into ROOTFS_PACKAGES.
rootfs_has_libs() {	# root program...
	_r=$1; shift
	for _p in "$@"; do
		for _l in $(ldd "$_p" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
			[ -e "$_r$_l" ] || [ -e "$_r/usr$_l" ] ||
				fail "the guest userspace lacks $_l (for $(basename "$_p")): add its package to ROOTFS_PACKAGES"
		done
	done
}

# --- boot ------------------------------------------------------------------

# Boots the kernel kernel_fetch chose with $WORK/initramfs-$KVER.cpio and
# the disk, runs guest/SCENARIO.sh there with its results in
# /results/TAG on the disk, and waits for the guest to power off. Kernel
# panics and oopses end QEMU (panic=-1 with -no-reboot). A guest that never
# reached /init within BOOT_TIMEOUT, its kernel still printing, is a skip:
# this machine is too slow for TCG. Sets BOOT_SECS and INIT_AT.
qemu_boot() {	# name scenario tag img [seconds]
	_log=$WORK/$1.console
	_limit=$(( ${5:-120} + BOOT_TIMEOUT ))
	_t0=$(date +%s)
	timeout -k 5 "$_limit" qemu-system-x86_64 -accel "$QEMU_ACCEL" -cpu max \
		-smp 2 -m "$QEMU_MEM" -nographic -no-reboot -nic none \
		-kernel "$VMLINUZ" -initrd "$WORK/initramfs-$KVER.cpio" \
		-drive "file=$4,format=raw,if=virtio" \
		-append "console=ttyS0 panic=-1 oops=panic mmhitm.scenario=$2 mmhitm.tag=$3 $QEMU_APPEND" \
		</dev/null >"$_log" 2>&1 &
	_pid=$!
	_slow=
	while kill -0 "$_pid" 2>/dev/null; do
		if [ -z "$_slow" ] && [ $(( $(date +%s) - _t0 )) -ge "$BOOT_TIMEOUT" ] &&
		   ! grep -q MMHITM-INIT "$_log"; then
			_slow=1
			kill "$_pid"	# timeout passes it on to QEMU
		fi
		sleep 1
	done
	wait "$_pid"
	_rc=$?
	BOOT_SECS=$(( $(date +%s) - _t0 ))
	INIT_AT=$(sed -n 's/.*MMHITM-INIT \([0-9.]*\).*/\1/p' "$_log" | head -n1)
	echo "boot $1 ($KVER): qemu exit $_rc after ${BOOT_SECS}s, /init at ${INIT_AT:-never}s guest time, console $_log"
	if grep -q 'MMHITM-DONE rc=0' "$_log"; then
		grep -E '(WARNING|BUG):' "$_log" | sed 's/^/    kernel: /'
		return 0
	fi
	tail -n 40 "$_log" | sed 's/^/    | /'
	grep -qE 'Kernel panic|Oops|BUG:' "$_log" && fail "$KVER panicked (boot $1)"
	if [ -z "$INIT_AT" ]; then
		# A Debian kernel that boots in ~2 s elsewhere and is still short
		# of /init after BOOT_TIMEOUT is this machine's TCG speed.
		[ -n "$_slow" ] && skip "TCG too slow here: $KVER short of /init after ${BOOT_TIMEOUT}s (last kernel time [$(grep -o '^\[ *[0-9.]*\]' "$_log" | tail -n1 | tr -d '[] ')])"
		fail "$KVER did not reach /init (qemu exit $_rc)"
	fi
	[ "$_rc" = 124 ] && fail "scenario $2 did not finish in ${_limit}s"
	fail "scenario $2 failed: $(grep -o 'MMHITM-DONE rc=[0-9]*' "$_log" || echo 'guest ended without a result')"
}
