#!/bin/sh
# Side-by-side core NATS benchmark: jetwal vs nats-server, both running at
# the same time on this machine, measured with the pinned nats CLI's
# `nats bench`, alternating servers run by run.
#
# usage: nats-bench-compare.sh JETWAL NATS_SERVER NATS_CLI [ROUNDS]
#
# Prints each measurement and, at the end, the median ratio jetwal/nats-server
# for: publish with no subscriber (msgs/s), one publisher + one subscriber
# (subscriber msgs/s), and request/reply latency (average µs per request).
set -eu
JETWAL=$1 NATS_SERVER=$2 NATS=$3 ROUNDS=${4:-3}
MSGS=${MSGS:-2000000} SIZE=${SIZE:-128} REQS=${REQS:-20000}
JW_PORT=${JW_PORT:-14322} NS_PORT=${NS_PORT:-14323}
work=$(mktemp -d)
export HOME=$work # no saved nats contexts

"$JETWAL" serve -a 127.0.0.1 -p "$JW_PORT" >"$work/jetwal.log" 2>&1 &
jw=$!
"$NATS_SERVER" -a 127.0.0.1 -p "$NS_PORT" >"$work/nats-server.log" 2>&1 &
ns=$!
trap 'kill $jw $ns 2>/dev/null; wait $jw $ns 2>/dev/null; rm -rf "$work"' EXIT INT TERM
sleep 1

num() { sed -n "s/.*$1 stats: \([0-9,.]*\) msgs\/sec.*/\1/p" | tr -d , | head -1; }
avg() { sed -n 's/.*avg: \([0-9,.]*\)us.*/\1/p' | tr -d , | head -1; }

pub() { # url -> publisher msgs/s, no subscriber
	"$NATS" -s "$1" bench pub bench.pub --msgs "$MSGS" --size "$SIZE" --no-progress 2>&1 | num "publisher"
}
pubsub() { # url -> subscriber msgs/s
	"$NATS" -s "$1" bench sub bench.ps --msgs "$MSGS" --size "$SIZE" --no-progress >"$work/sub.out" 2>&1 &
	s=$!
	sleep 0.5
	"$NATS" -s "$1" bench pub bench.ps --msgs "$MSGS" --size "$SIZE" --no-progress >/dev/null 2>&1
	wait $s
	num "subscriber" <"$work/sub.out"
}
reqrep() { # url -> average request latency in µs
	"$NATS" -s "$1" bench service serve bench.svc --msgs "$REQS" --no-progress >/dev/null 2>&1 &
	s=$!
	sleep 0.5
	"$NATS" -s "$1" bench service request bench.svc --msgs "$REQS" --size "$SIZE" --no-progress 2>&1 | avg
	kill $s 2>/dev/null || true
	wait $s 2>/dev/null || true
}

JW=nats://127.0.0.1:$JW_PORT NS=nats://127.0.0.1:$NS_PORT
for test in pub pubsub reqrep; do
	: >"$work/$test.ratios"
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		if [ $((i % 2)) -eq 1 ]; then a=$($test "$JW"); b=$($test "$NS"); else b=$($test "$NS"); a=$($test "$JW"); fi
		r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
		echo "$test round $i: jetwal $a nats-server $b ratio $r"
		echo "$r" >>"$work/$test.ratios"
		i=$((i + 1))
	done
done
echo
for test in pub pubsub reqrep; do
	med=$(sort -n "$work/$test.ratios" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	case $test in
	pub) echo "publish, no subscriber    msgs/s  jetwal/nats-server median $med (want >= 1)" ;;
	pubsub) echo "1 publisher, 1 subscriber msgs/s  jetwal/nats-server median $med (want >= 1)" ;;
	reqrep) echo "request/reply latency     avg us  jetwal/nats-server median $med (want <= 1.2)" ;;
	esac
done
