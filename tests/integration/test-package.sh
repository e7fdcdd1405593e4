#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (debian/, make deb): dpkg-buildpackage builds mmhitm
# and mmhitm-load with Debian's hardening flags; lintian finds no error;
# the daemon's package pulls in no test tool and holds what a host runs
# (programs, units, manual pages, completion, the configuration as
# conffiles); the postinst enables the daemon and the weekly report but
# not shipping; the binaries it carries run. And a lean host: make deps
# (what debian/control's Build-Depends name) installs no test tool.
# Installing, upgrading and purging on a real systemd: check-kernels.
. "$(dirname "$0")/lib.sh"

command -v dpkg-buildpackage >/dev/null || skip "no dpkg-buildpackage (make deps-test)"
command -v lintian >/dev/null || skip "no lintian (make deps-test)"
[ -f debian/control ] || { fail "no debian/control"; exit 1; }
TMP=$(mktemp -d /tmp/mmhitm-test-package.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# What a host must never be made to install: the test lab.
LAB='chromium|qemu|clickhouse|prometheus|kernelshark|python3|scipy|numpy|debootstrap|busybox'

# --- a lean host: the build's packages and Build-Depends ---------------------
# shellcheck disable=SC2016
build=$(make -s -p -n O="$O" all 2>/dev/null | sed -n 's/^DEB_BUILD := //p' | head -1)
check "make deps names packages" "$(echo "$build" | wc -w)" -ge 10
check_str "make deps installs no test tool" \
	"$(echo "$build" | tr ' ' '\n' | grep -E "$LAB|sqlite3$|perf|bpftool|lintian|clang-rt" | tr '\n' ' ')" ""
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed '$d; s/^Build-Depends://' |
	tr ',' '\n' | sed 's/(.*)//; s/ //g' | grep -v '^debhelper-compat$' | grep . | sort)
want=$(echo "$build" | tr ' ' '\n' | grep -v -x -e gcc -e make | grep . | sort)
check_str "debian/control's Build-Depends are make deps' packages" \
	"$(echo "$bdeps" | tr '\n' ' ')" "$(echo "$want" | tr '\n' ' ')"

# --- build -------------------------------------------------------------------
make -s O="$O" deb >"$TMP/make.out" 2>&1 || { fail "make deb: $(tail -5 "$TMP/make.out")"; exit 1; }
D=$O/deb
deb=$(ls "$D"/mmhitm_*.deb 2>/dev/null | head -1)
load=$(ls "$D"/mmhitm-load_*.deb 2>/dev/null | head -1)
check_str "two packages built" "$(basename "${deb:-none}" | cut -d_ -f1) $(basename "${load:-none}" | cut -d_ -f1)" \
	"mmhitm mmhitm-load"
[ -n "$deb" ] && [ -n "$load" ] || exit 1

# --- what it pulls in ------------------------------------------------------------
depends=$(dpkg-deb -f "$deb" Depends)
pulls="$depends, $(dpkg-deb -f "$deb" Recommends)"
echo "mmhitm Depends: $depends"
for lib in libtracefs1 libtraceevent1 libtracecmd1 libsqlite3-0 libbpf1 libcurl4 libsystemd0; do
	echo "$depends" | grep -q "$lib" && pass "Depends: $lib" || fail "Depends lacks $lib: $depends"
done
check_str "Depends and Recommends name no test tool" \
	"$(echo "$pulls" | tr ',' '\n' | grep -E "$LAB" | tr '\n' ' ')" ""
check_str "mmhitm-load needs no mmhitm" "$(dpkg-deb -f "$load" Depends | grep -c 'mmhitm')" "0"
echo "$(dpkg-deb -f "$deb" Built-Using)" | grep -q '^linux-6.12 (= ' &&
	pass "Built-Using names the linux source libperf comes from" ||
	fail "Built-Using: '$(dpkg-deb -f "$deb" Built-Using)'"

# --- what it holds --------------------------------------------------------------
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TMP/files"
dpkg-deb -c "$load" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TMP/load-files"
for f in /usr/sbin/mmhitmd /usr/bin/mmhitm /lib/systemd/system/mmhitmd.service \
	/lib/systemd/system/mmhitm-report.timer /lib/systemd/system/mmhitm-ship.timer \
	/etc/mmhitm/mmhitm.conf /etc/mmhitm/patches.conf /usr/share/mmhitm/rules.conf \
	/usr/share/mmhitm/prometheus/mmhitm-alerts.yml /usr/share/mmhitm/fleet-report.env.example \
	/usr/share/mmhitm/grafana/mmhitm-dashboard.json \
	/lib/systemd/system/mmhitm-fleet-report.service /lib/systemd/system/mmhitm-fleet-report.timer \
	/usr/share/man/man8/mmhitmd.8.gz /usr/share/man/man1/mmhitm.1.gz \
	/usr/share/man/man5/mmhitm.conf.5.gz /usr/share/bash-completion/completions/mmhitm \
	/usr/share/doc/mmhitm/copyright; do
	grep -qx "$f" "$TMP/files" && pass "mmhitm holds $f" || fail "mmhitm lacks $f"
done
check_str "mmhitm holds no reproducer" \
	"$(grep -cx '/usr/bin/mmhitm-load\|/usr/share/man/man1/mmhitm-load.1.gz' "$TMP/files" | tr -d ' ')" "0"
for f in /usr/bin/mmhitm-load /usr/share/man/man1/mmhitm-load.1.gz; do
	grep -qx "$f" "$TMP/load-files" && pass "mmhitm-load holds $f" || fail "mmhitm-load lacks $f"
done
check_str "mmhitm-load holds no daemon" "$(grep -c 'mmhitmd' "$TMP/load-files" | tr -d ' ')" "0"
check_str "the configuration is conffiles" "$(dpkg-deb -I "$deb" conffiles | sort | tr '\n' ' ')" \
	"/etc/mmhitm/mmhitm.conf /etc/mmhitm/patches.conf "

# --- the maintainer scripts --------------------------------------------------------
dpkg-deb -I "$deb" postinst >"$TMP/postinst"
grep -q "deb-systemd-helper enable 'mmhitmd.service'" "$TMP/postinst" &&
	pass "postinst enables mmhitmd.service" || fail "postinst does not enable mmhitmd.service"
grep -q "deb-systemd-invoke \$_dh_action 'mmhitmd.service'" "$TMP/postinst" &&
	pass "postinst starts (or, upgrading, restarts) mmhitmd.service" || fail "postinst does not start mmhitmd"
grep -q "deb-systemd-helper enable 'mmhitm-report.timer'" "$TMP/postinst" &&
	pass "postinst enables the weekly report" || fail "postinst does not enable mmhitm-report.timer"
check_str "postinst starts nothing of shipping or the fleet report" \
	"$(grep -c "deb-systemd-invoke.*mmhitm-\(ship\|fleet\)" "$TMP/postinst" | tr -d ' ')" "0"
check_str "postinst starts no oneshot service" \
	"$(grep -c "deb-systemd-invoke.*'mmhitm-report.service'" "$TMP/postinst" | tr -d ' ')" "0"
dpkg-deb -I "$deb" postrm >"$TMP/postrm"
grep -q 'rm -rf /var/lib/mmhitm' "$TMP/postrm" && pass "postrm purges the state directory" ||
	fail "postrm keeps /var/lib/mmhitm on purge"

# --- what it carries runs, built hardened --------------------------------------------
dpkg-deb -x "$deb" "$TMP/root"
dpkg-deb -x "$load" "$TMP/root"
check_str "the unit names the installed daemon" \
	"$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$TMP/root/lib/systemd/system/mmhitmd.service")" "/usr/sbin/mmhitmd"
check_str "no unit keeps a placeholder" "$(grep -l '@[A-Z]*DIR@' "$TMP/root/lib/systemd/system/"* | wc -l | tr -d ' ')" "0"
for b in usr/sbin/mmhitmd usr/bin/mmhitm usr/bin/mmhitm-load; do
	"$TMP/root/$b" --version >"$TMP/v" 2>&1 && pass "$b --version: $(head -1 "$TMP/v")" ||
		fail "$b --version: $(head -2 "$TMP/v")"
	readelf -d "$TMP/root/$b" | grep -q 'BIND_NOW' && pass "$b: linked -z now" || fail "$b: no BIND_NOW"
	readelf -lW "$TMP/root/$b" | grep -q 'GNU_RELRO' && pass "$b: RELRO" || fail "$b: no RELRO"
	check "$b: fortified calls (-D_FORTIFY_SOURCE)" "$(readelf -sW --dyn-syms "$TMP/root/$b" | grep -c '__[a-z_]*_chk')" -ge 1
done
"$TMP/root/usr/sbin/mmhitmd" --check-config --config "$TMP/root/etc/mmhitm/mmhitm.conf" >"$TMP/cc" 2>&1 &&
	pass "the packaged mmhitm.conf passes --check-config" || fail "--check-config: $(cat "$TMP/cc")"

# --- lintian ----------------------------------------------------------------------
lintian --fail-on error "$D"/*.changes >"$TMP/lintian" 2>&1
check "lintian: no error" "$?" -eq 0
check_str "lintian: errors" "$(grep -c '^E:' "$TMP/lintian" | tr -d ' ')" "0"
check_str "lintian: warnings" \
	"$(grep '^W:' "$TMP/lintian" | tr '\n' ' ')" ""
finish
