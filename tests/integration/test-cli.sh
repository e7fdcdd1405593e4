#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The command line of mmhitm, mmhitmd and mmhitm-load says what to do:
# a mistyped option or command names the one meant, a missing value names
# its option, an out-of-range value gives the range, a missing database
# says how to get one, and --since/--until share one syntax (impossible
# dates refused). Each case checks the exit code and the message.
. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/mmhitm-cli.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# DESCRIPTION WANT_RC WANT_TEXT PROGRAM ARGS...: stderr must contain WANT_TEXT.
says() {
	what=$1 want_rc=$2 text=$3; shift 3
	"$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
	check_str "$what: exit code" "$rc" "$want_rc"
	if grep -qF -- "$text" "$WORK/err"; then
		pass "$what: says '$text'"
	else
		fail "$what: stderr lacks '$text': $(cat "$WORK/err")"
	fi
}

M=$O/mmhitm D=$O/mmhitmd L=$O/mmhitm-load
says "top, a typo" 2 "unknown option '--lmit'; did you mean '--limit'?" $M top --lmit 3
says "top, no value" 2 "option '--limit' needs a value" $M top --limit
says "top, short option without value" 2 "option '-d' needs a value" $M top -d
says "report, a typo" 2 "did you mean '--margin'?" $M report --margn 5
says "report, nothing close" 2 "unknown option '--frobnicate'; 'mmhitm report --help' lists" \
	$M report --frobnicate
says "report, margin out of range" 2 "Invalid value for --margin: '150' (a percentage from 0 to 99)" \
	$M report --margin 150
says "report, margin with a percent sign out of range" 2 \
	"Invalid value for --margin: '150%' (a percentage from 0 to 99)" $M report --margin 150%
says "report, margin with two percent signs" 2 "Invalid value for --margin: '5%%'" $M report --margin 5%%
says "report, bad duration" 2 "(a duration such as" $M report --cohort 3x
says "report, impossible date" 2 "Invalid --since '2025-02-30'" $M report --since 2025-02-30
says "top, impossible date" 2 "Invalid --since" $M top --since 2025-04-31 --db "$WORK/x.db"
says "report, --since after --until" 2 "--since must be before --until" \
	$M report --since 2025-03-02 --until 2025-03-01 --db "$WORK/x.db"
says "top, --since after --until" 2 "--since must be before --until" \
	$M top --since 2025-03-02 --until 2025-03-01 --db "$WORK/x.db"
says "mmhitm, a mistyped command" 2 "Unknown command 'statsu'; did you mean 'status'?" $M statsu
says "mmhitm, two letters swapped" 2 "Unknown command 'tpo'; did you mean 'top'?" $M tpo
says "report, two letters swapped" 2 "unknown option '--hmtl'; did you mean '--html'?" $M report --hmtl x
says "report, --json and --csv, as top says" 2 "--json or --csv, not both" $M report --json --csv
says "top, --json and --csv" 2 "--json or --csv, not both" $M top --json --csv
says "report, --json - and --csv: both stdout" 2 "--json or --csv, not both" $M report --json - --csv
says "report, --output named for another format" 2 \
	"--output x.csv: the name says CSV, but the output is JSON: --csv chooses CSV" \
	$M report --json --output x.csv
says "report, --json= without a file" 2 "--json=: names no file" $M report --json=
says "top, --json takes no file" 2 "option '--json' takes no value" $M top --json=x
says "mmhitm, an unknown command" 2 "'mmhitm --help' lists them" $M xyzzy
says "status, no database" 66 "Cannot open the database $WORK/none.db: no such file (mmhitmd creates it" \
	$M status --db "$WORK/none.db"
says "mmhitmd, a typo" 2 "unknown option '--forground'; did you mean '--foreground'?" $D --forground
says "mmhitmd, interval too short" 78 "\"500ms\" is out of range (1s to 1h)" \
	$D --check-config --interval 500ms
says "mmhitmd, missing config file" 78 "Failed to open config $WORK/none.conf" \
	$D --check-config -c "$WORK/none.conf"
says "mmhitm-load, a mistyped command" 2 "did you mean 'ctxswitch'?" $L ctxswich
says "mmhitm-load, a typo" 2 "unknown option '--duraton'; did you mean '--duration'?" \
	$L ctxswitch --duraton 1s

# A percentage with or without its sign: the same run, the same words.
$M report --margin 5 --db "$WORK/none.db" >/dev/null 2>"$WORK/err5"; rc5=$?
$M report --margin 5% --db "$WORK/none.db" >/dev/null 2>"$WORK/err5p"; rc5p=$?
check_str "report --margin 5%: exit code as 5" "$rc5p" "$rc5"
if grep -q "Invalid value" "$WORK/err5p" || ! cmp -s "$WORK/err5" "$WORK/err5p"; then
	fail "report --margin 5% is not --margin 5: $(cat "$WORK/err5p")"
else
	pass "report --margin 5% is --margin 5"
fi

# The one time syntax, both commands: an ISO week and a word are accepted.
$M report --since 2025-W12 --until last-week --db "$WORK/none.db" >/dev/null 2>"$WORK/err"
grep -q "Invalid --" "$WORK/err" && fail "report refused 2025-W12/last-week: $(cat "$WORK/err")"
$M top --since yesterday --db "$WORK/none.db" >/dev/null 2>"$WORK/err"
grep -q "Invalid --" "$WORK/err" && fail "top refused yesterday: $(cat "$WORK/err")"
finish
