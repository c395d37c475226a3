#!/bin/sh
# The stream leader's CPU profile under R3 async publish: three jetwal
# servers on this machine (as r3-compare.sh starts them, each with
# --profile), `nats bench js pub async` against the stream, and a CPU
# profile of the stream's leader taken while it runs. Prints the profile's
# top lines; the profile is left in OUT (default ./r3-leader.pprof).
#
# usage: r3-profile.sh JETWAL NATS_CLI [SECONDS]
set -eu
JETWAL=$1 NATS=$2 SECS=${3:-10}
MSGS=${MSGS:-600000} SIZE=${SIZE:-128} OUT=${OUT:-r3-leader.pprof}
work=$(mktemp -d)
export HOME=$work
trap 'pkill -9 -f "$work/" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT INT TERM
for i in 1 2 3; do
	"$JETWAL" serve -js -a 127.0.0.1 -p $((14420 + i)) -n jw$i -sd "$work/jw$i" --cluster_name JW \
		--profile $((14430 + i)) --cluster nats://127.0.0.1:$((16420 + i)) \
		--routes nats://127.0.0.1:16421,nats://127.0.0.1:16422,nats://127.0.0.1:16423 >>"$work/jw$i.log" 2>&1 &
done
URL=nats://127.0.0.1:14421,nats://127.0.0.1:14422,nats://127.0.0.1:14423
i=0
until "$NATS" -s "$URL" account info >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "JetStream not ready" >&2; exit 1; }
	sleep 0.2
done
"$NATS" -s "$URL" stream add benchstream --subjects bench.r3 --replicas 3 --storage file --defaults >/dev/null
l=$("$NATS" -s "$URL" stream info benchstream | sed -n 's/.*Leader: \(\S*\).*/\1/p' | head -1)
n=${l#jw}
"$NATS" -s "$URL" bench js pub async bench.r3 --msgs "$MSGS" --size "$SIZE" --no-progress >"$work/bench.txt" 2>&1 &
b=$!
sleep 1
curl -s -o "$OUT" "http://127.0.0.1:$((14430 + n))/debug/pprof/profile?seconds=$SECS"
wait $b
grep -i "stats:" "$work/bench.txt"
echo "leader $l"
go tool pprof -top -nodecount=35 "$JETWAL" "$OUT" 2>/dev/null | head -45
