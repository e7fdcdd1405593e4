#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make install/uninstall into a scratch prefix; the installed units pass
# systemd-analyze verify and keep their security exposure; the docs name
# every configuration option and subcommand, and mmhitm-load(1) every
# command and option of mmhitm-load.

. "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"

ROOT=$(mktemp -d /tmp/mmhitm-test-install.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
P="PREFIX=$ROOT/usr SYSCONFDIR=$ROOT/etc UNITDIR=$ROOT/units"

make -s install $P >"$ROOT.log" 2>&1 || { cat "$ROOT.log"; fail "make install"; finish; }
for f in usr/sbin/mmhitmd usr/bin/mmhitm usr/bin/mmhitm-load units/mmhitmd.service \
	 units/mmhitm-report.service units/mmhitm-report.timer etc/mmhitm/mmhitm.conf \
	 units/mmhitm-ship.service units/mmhitm-ship.timer \
	 usr/share/man/man8/mmhitmd.8 usr/share/man/man5/mmhitm.conf.5 \
	 usr/share/man/man1/mmhitm.1 usr/share/man/man1/mmhitm-load.1 \
	 usr/share/bash-completion/completions/mmhitm; do
	check "installed $f" "$(test -f "$ROOT/$f" && echo yes)" = yes
done
for p in mmhitmd mmhitm-load; do
	check_str "completion for $p" "$(readlink "$ROOT/usr/share/bash-completion/completions/$p")" mmhitm
done
check_str "units name the installed daemon" \
	"$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$ROOT/units/mmhitmd.service")" "$ROOT/usr/sbin/mmhitmd"

out=$(MANPATH=$ROOT/usr/share/man systemd-analyze verify "$ROOT/units/mmhitmd.service" \
	"$ROOT/units/mmhitm-report.service" "$ROOT/units/mmhitm-report.timer" \
	"$ROOT/units/mmhitm-ship.service" "$ROOT/units/mmhitm-ship.timer" \
	"$ROOT/units/mmhitm-fleet-report.service" "$ROOT/units/mmhitm-fleet-report.timer" 2>&1)
check "systemd-analyze verify is silent" "$(printf '%s' "$out" | grep -c .)" -eq 0
[ -z "$out" ] || echo "$out"
for u in mmhitmd mmhitm-report mmhitm-ship mmhitm-fleet-report; do
	e=$(systemd-analyze security --offline=true "$ROOT/units/$u.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
	# mmhitmd(8) records 1.9, 1.1 and 1.8: a change that weakens a unit shows here.
	check "$u exposure at most 2.0" "$(awk -v e="$e" 'BEGIN { print (e != "" && e + 0 <= 2.0) }')" -eq 1
done

# The installed example is the daemon's own default configuration.
check "the shipped config passes --check-config" \
	"$("$ROOT/usr/sbin/mmhitmd" --check-config -c "$ROOT/etc/mmhitm/mmhitm.conf" >/dev/null 2>&1; echo $?)" -eq 0
for key in $("$O/mmhitmd" --print-config | sed -n 's/^\([a-z_]*\) =.*/\1/p'); do
	check "mmhitm.conf(5) documents $key" "$(grep -c "^\.BI $key " man/mmhitm.conf.5)" -eq 1
done
for cmd in $("$O/mmhitm" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p'); do
	check "mmhitm(1) documents $cmd" "$(grep -c "^\.B $cmd\$" man/mmhitm.1)" -ge 1
	"$O/mmhitm" $cmd --help >/dev/null 2>&1
	check "mmhitm $cmd --help" $? -eq 0
done
# mmhitm-load(1): every command, and every long option each command's
# --help lists, as the page spells it (\-\-name) in the tag of an entry
# (the line after .TP), not merely mentioned.
tags=$(awk 'prev == ".TP" { print } { prev = $0 }' man/mmhitm-load.1)
for cmd in $("$O/mmhitm-load" --help | sed -n 's/^  \([a-z]*\)  *P[1-4]  .*/\1/p'); do
	check "mmhitm-load(1) documents $cmd" "$(grep -c "^\.B $cmd\$" man/mmhitm-load.1)" -ge 1
	for opt in $("$O/mmhitm-load" $cmd --help |
		    sed -n 's/^ *\(-[a-z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u); do
		pat=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
		check "mmhitm-load(1) documents $cmd $opt" "$(printf '%s\n' "$tags" | grep -c -- "$pat\\($\\|[^a-z\\\\]\\)")" -ge 1
	done
done
check "mmhitm-load lists its commands" "$("$O/mmhitm-load" --help | grep -c '^  [a-z]*  *P[1-4]  ')" -eq 4
# Every program has its page.
for p in mmhitmd.8 mmhitm.1 mmhitm-load.1; do
	check "man/$p exists" "$(test -f "man/$p" && echo yes)" = yes
done
for m in man/*.[1-8]; do
	check "$m renders without warnings" "$(man --warnings -l "$m" 2>&1 >/dev/null | grep -c .)" -eq 0
done

# A modified configuration survives uninstall; the rest goes.
echo "interval = 5s" >>"$ROOT/etc/mmhitm/mmhitm.conf"
make -s uninstall $P >/dev/null 2>&1
check "uninstall removed the programs, units and pages" \
	"$(find "$ROOT" \( -type f -o -type l \) ! -path "$ROOT/etc/*" | wc -l)" -eq 0
check "and kept the operator's configuration" "$(test -f "$ROOT/etc/mmhitm/mmhitm.conf" && echo kept)" = kept
rm -f "$ROOT.log"
finish
