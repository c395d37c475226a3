#!/bin/sh
# Runs Go fuzz targets one after another for a fixed time each; used by the
# Makefile's fuzz, fuzz-short and hardening targets.
#
#   fuzz/run.sh GO FUZZTIME pkg:FuzzName...
#
# Go's fuzz coordinator can report the end of -fuzztime itself as a failure
# ("context deadline exceeded": it checks its workers' context before the
# cancellation of the deadline has reached it; more likely on a busy
# machine; golang/go#75804, fixed in Go 1.27). That one message, with no
# failing input, is retried once with a count instead of a duration
# (-fuzztime ${RETRY}x): a count sets no deadline, so the retry cannot hit
# the same race (retrying with the duration once failed twice in a row).
# Any other failure, and any crasher, fails at once.
#
# Each input that finds new coverage is minimized first, by default for up
# to 60 s, with the exec count standing still meanwhile: FuzzProtocolParser
# spent 27 of its 30 s minimizing (30k execs; 237k with minimization capped
# at 5 s). MINIMIZE caps it (-fuzzminimizetime); a crasher is reported and
# its input written whether or not it was minimized to the end.
set -u
go=$1 time=$2
shift 2
RETRY=${FUZZ_RETRY_EXECS:-1000}
MIN=${MINIMIZE:-5s}
for t in "$@"; do
	pkg=${t%%:*} name=${t##*:}
	echo "fuzz $name ($time)"
	out=$("$go" test -run '^$' -fuzz "^$name\$" -fuzztime "$time" -fuzzminimizetime "$MIN" "$pkg" 2>&1)
	st=$?
	echo "$out"
	if echo "$out" | grep -q 'no fuzz tests to fuzz'; then
		echo "fuzz $name: no such fuzz target in $pkg" >&2
		exit 1
	fi
	if [ $st -ne 0 ] && echo "$out" | grep -q 'context deadline exceeded' && ! echo "$out" | grep -q 'Failing input'; then
		echo "fuzz $name: the fuzz engine's own deadline report; once more, for ${RETRY} inputs"
		"$go" test -run '^$' -fuzz "^$name\$" -fuzztime "${RETRY}x" -fuzzminimizetime "$MIN" "$pkg" || exit 1
	elif [ $st -ne 0 ]; then
		exit 1
	fi
done
