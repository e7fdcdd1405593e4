#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# mmhitm-load's command line: help for every command, usage errors exit 2.
. "$(dirname "$0")/load-lib.sh"

for cmd in ctxswitch aging pwrite tlbflush; do
	"$LOAD" "$cmd" --help >"$O/load-help.txt"; rc=$?
	check_str "$cmd --help exit" "$rc" 0
	grep -q "^Usage: mmhitm-load $cmd" "$O/load-help.txt" || fail "$cmd --help has no usage line"
	grep -q -- "--duration" "$O/load-help.txt" || fail "$cmd --help lacks the common options"
	"$LOAD" help "$cmd" | grep -q "^Usage: mmhitm-load $cmd" || fail "help $cmd"
done
"$LOAD" --help | grep -q "ctxswitch" || fail "--help lists no commands"

usage() {	# DESCRIPTION ARGS...
	what=$1; shift
	"$LOAD" "$@" >/dev/null 2>&1; rc=$?
	check_str "$what" "$rc" 2
}
usage "no command"
usage "unknown command" frobnicate
usage "unknown option" pwrite --frobnicate
usage "stray argument" tlbflush extra
usage "zero threads" pwrite --threads 0
usage "bad duration" pwrite --duration fast
usage "bad loops" tlbflush --loops 0
usage "one thread per CPU cannot yield" ctxswitch --threads 1
usage "CPU out of range" tlbflush --cpus 100000
usage "CPU we may not use" tlbflush --cpus 1023
usage "--procs is aging's" pwrite --procs 2
usage "--private-mm is ctxswitch's" tlbflush --private-mm
usage "pwrite size 0" pwrite --size 0
"$LOAD" --version >/dev/null; check_str "--version exit" $? 0
finish
