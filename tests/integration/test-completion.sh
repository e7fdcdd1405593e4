#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The bash completion (man/mmhitm.bash-completion) completes commands and
# options from the programs' own --help: a command and an option of each
# program, a value list, and an option that only one command has.
. "$(dirname "$0")/lib.sh"
command -v bash >/dev/null || skip "no bash"

# complete WORDS...: what the completion offers for the last word.
complete_words() {
	bash -c '
		. "$1"; shift
		PATH=$BIN:$PATH
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_mmhitm
		printf "%s\n" "${COMPREPLY[@]}"' sh "$TOP/man/mmhitm.bash-completion" "$@"
}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$TOP/$O
case $O in /*) BIN=$O ;; esac
export BIN

offers() {	# DESCRIPTION WANT WORDS...
	what=$1 want=$2; shift 2
	got=$(complete_words "$@" | tr '\n' ' ')
	case " $got " in
	*" $want "*) pass "$what: offers $want" ;;
	*) fail "$what: wanted $want, got '$got'" ;;
	esac
}
not_offered() {	# DESCRIPTION WORD WORDS...
	what=$1 word=$2; shift 2
	got=$(complete_words "$@" | tr '\n' ' ')
	case " $got " in
	*" $word "*) fail "$what: offers $word: '$got'" ;;
	*) pass "$what: not $word" ;;
	esac
}

offers "mmhitm commands" status mmhitm st
offers "mmhitm commands" report mmhitm re
offers "top's options" --limit mmhitm top --li
offers "report's options" --output-dir mmhitm report --out
offers "report's options" --output mmhitm report --out
offers "report's --csv" --csv mmhitm report --cs
not_offered "an option of another command" --output-dir mmhitm top --out
offers "status's options" --check mmhitm status --ch
offers "top's --source" --source mmhitm top --sou
offers "--source's values: a cluster" clickhouse:// mmhitm status --source click
offers "time words" last-week mmhitm report --since la
offers "mmhitmd's options" --foreground mmhitmd --fore
offers "mmhitmd's config keys" --record-mode mmhitmd --record
offers "record modes" windowed mmhitmd --record-mode w
offers "record's options" --perf-data mmhitm record --perf
offers "mmhitm-load commands" ctxswitch mmhitm-load ctx
offers "mmhitm-load options" --private-mm mmhitm-load ctxswitch --priv
finish
