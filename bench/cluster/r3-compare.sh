#!/bin/sh
# R3 JetStream side by side: three jetwal servers (clustered JetStream, sync
# always) and three nats-server v2.15.2 (clustered JetStream, default sync),
# all on this machine at the same time, measured with the pinned nats CLI,
# alternating clusters run by run:
#   - `nats bench js pub async --replicas 3` (msgs/s)
#   - `nats bench js fetch` from the stream just written (msgs/s)
#   - failover: SIGKILL the stream's leader, time until the first
#     successful publish (ms)
#   - fetch1..fetch3 (with FETCH_EACH=1): fetch with the client connected
#     to server 1, 2 or 3 alone, so every round meets the leader and both
#     followers
#   - pub1..pub3 (with PUB_EACH=1): publish likewise from server 1, 2 or 3
#     (pub lets the client pick a server at random, as nats.go does)
# SYNC=always runs nats-server with `jetstream { sync_interval: always }`
# (jetwal acknowledges after a quorum's fsync either way); TESTS picks the
# tests (default "pub fetch failover").
#
# usage: r3-compare.sh JETWAL NATS_SERVER NATS_CLI [ROUNDS]
set -eu
JETWAL=$1 NATS_SERVER=$2 NATS=$3 ROUNDS=${4:-3}
MSGS=${MSGS:-200000} SIZE=${SIZE:-128} SYNC=${SYNC:-default} TESTS=${TESTS:-pub fetch failover}
[ "${FETCH_EACH:-0}" = 1 ] && TESTS="$TESTS fetch1 fetch2 fetch3"
[ "${PUB_EACH:-0}" = 1 ] && TESTS="$TESTS pub1 pub2 pub3"
work=$(mktemp -d)
export HOME=$work # no saved nats contexts
# Every server's command line names $work: that is how they are found.
trap 'pkill -9 -f "$work/" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT INT TERM

# start_jw i / start_ns i: server i (1..3) of each cluster.
start_jw() {
	"$JETWAL" serve -js -a 127.0.0.1 -p $((14400 + $1)) -n jw$1 -sd "$work/jw$1" --cluster_name JW \
		--cluster nats://127.0.0.1:$((16400 + $1)) \
		--routes nats://127.0.0.1:16401,nats://127.0.0.1:16402,nats://127.0.0.1:16403 >>"$work/jw$1.log" 2>&1 &
}
nsconf=""
if [ "$SYNC" = always ]; then
	printf 'jetstream { sync_interval: always }\n' >"$work/ns.conf"
	nsconf="-c $work/ns.conf"
fi
start_ns() {
	# shellcheck disable=SC2086
	"$NATS_SERVER" $nsconf -js -a 127.0.0.1 -p $((14410 + $1)) -n ns$1 -sd "$work/ns$1" --cluster_name NS \
		--cluster nats://127.0.0.1:$((16410 + $1)) \
		--routes nats://127.0.0.1:16411,nats://127.0.0.1:16412,nats://127.0.0.1:16413 >>"$work/ns$1.log" 2>&1 &
}
for i in 1 2 3; do start_jw $i; start_ns $i; done
JW=nats://127.0.0.1:14401,nats://127.0.0.1:14402,nats://127.0.0.1:14403
NS=nats://127.0.0.1:14411,nats://127.0.0.1:14412,nats://127.0.0.1:14413
wait_js() { # url: until JetStream answers
	i=0
	until "$NATS" -s "$1" account info >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 100 ] || { echo "JetStream not ready at $1" >&2; exit 1; }
		sleep 0.2
	done
}
wait_js "$JW"; wait_js "$NS"

num() { sed -n "s/.*$1 stats: \([0-9,.]*\) msgs\/sec.*/\1/p" | tr -d , | head -1; }
pub() { # url -> msgs/s
	"$NATS" -s "$1" stream rm benchstream -f >/dev/null 2>&1 || true
	# Created here, not with --create: the CLI then asks for API level 3
	# (allow_atomic, allow_batched), which jetwal does not announce.
	"$NATS" -s "$1" stream add benchstream --subjects bench.r3 --replicas 3 --storage file --defaults >/dev/null 2>&1
	"$NATS" -s "$1" bench js pub async bench.r3 --msgs "$MSGS" --size "$SIZE" --no-progress 2>&1 | num "publisher"
}
fetch() { # url -> msgs/s (the stream pub left)
	"$NATS" -s "$1" bench js fetch --msgs "$MSGS" --no-progress 2>&1 | num "(fetch)"
}
leader() { # url -> leader name of benchstream
	"$NATS" -s "$1" stream info benchstream 2>/dev/null | sed -n 's/.*Leader: \(\S*\).*/\1/p' | head -1
}
failover() { # url prefix(jw|ns) -> ms from SIGKILL of the leader to a successful publish
	# The stream pub made, or one of its own when failover runs alone.
	"$NATS" -s "$1" stream add benchstream --subjects bench.r3 --replicas 3 --storage file --defaults >/dev/null 2>&1 || true
	l=""
	while [ -z "$l" ]; do l=$(leader "$1"); done
	n=${l#??}
	t0=$(date +%s%N)
	pkill -9 -f "$work/$2$n " || { echo "no process for leader $l" >&2; exit 1; }
	until "$NATS" -s "$1" --timeout 1s pub bench.r3 x --jetstream >/dev/null 2>&1; do :; done
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
	start_$2 "$n"
	wait_js "$1"
}

for test in $TESTS; do
	: >"$work/$test.ratios"
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		if [ "$test" = fetch ]; then
			pub "$JW" >/dev/null; a=$(fetch "$JW"); pub "$NS" >/dev/null; b=$(fetch "$NS")
		elif [ "${test#fetch}" != "$test" ]; then
			k=${test#fetch}
			pub "$JW" >/dev/null; a=$(fetch nats://127.0.0.1:$((14400 + k)))
			pub "$NS" >/dev/null; b=$(fetch nats://127.0.0.1:$((14410 + k)))
		elif [ "${test#pub}" != "$test" ] && [ "$test" != pub ]; then
			k=${test#pub}
			a=$(pub nats://127.0.0.1:$((14400 + k))); b=$(pub nats://127.0.0.1:$((14410 + k)))
		elif [ "$test" = failover ]; then
			a=$(failover "$JW" jw); b=$(failover "$NS" ns)
		elif [ $((i % 2)) -eq 1 ]; then a=$($test "$JW"); b=$($test "$NS")
		else b=$($test "$NS"); a=$($test "$JW"); fi
		r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }')
		echo "$test round $i: jetwal $a nats-server $b ratio $r"
		echo "$r" >>"$work/$test.ratios"
		i=$((i + 1))
	done
done
echo "nats-server sync: $SYNC"
for test in $TESTS; do
	echo "$test median ratio (jetwal/nats-server): $(sort -n "$work/$test.ratios" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
