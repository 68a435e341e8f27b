#!/bin/bash
# The instructions the capture agent adds in the app's process per request,
# for URLSession and AsyncHTTPClient (section 1), a Hummingbird service
# making one outbound call a request (section 8) and gRPC unary calls, client
# and server captured (section 9), counted by callgrind: the figure that does
# not move with the machine's load (docs/BENCHMARKS.md).
#
#   Benchmarks/agent-instructions.sh [BENCH ...]
#
# BENCH is a release netinspect-bench with its netinspect beside it (default
# .build/release/netinspect-bench); give two (before, after) for a column
# each. Every figure comes from one binary: each mode runs in a process of
# its own, once with N and once with 2N requests (one round, GET 1 KiB at
# concurrency 16), and the difference over N is a request's cost, so start-up
# and warm-up cancel. "Added" is that cost with the agent less the cost
# without it. Only the app's process is counted (the server runs in it);
# netinspect, in its own process, is not.
#
# N=1000 by default; MODES="c e" by default (c: agent, no inspector; e: agent,
# netinspect reading in another process; h, AsyncHTTPClient only: an app
# that allows control, through the control tunnel; a, no capture, always runs);
# CLIENTS="urlsession ahc inbound grpc" by default (inbound and grpc have
# modes a and e only, and need a netinspect-bench that reads
# NETINSPECT_BENCH_SERVICE_MODES). Needs valgrind and objcopy.
#
# FOLD_WINDOW_MS=500 by default: how long the agent's writer waits for a
# flow's later events to fold into its start. Under callgrind a request
# takes about fifty times as long, so with the agent's own 5 ms (set
# FOLD_WINDOW_MS=5 to see it) no flow folds and the count is of three
# frames a flow, where a real run at this concurrency writes one; each
# note says how many frames a flow the run wrote.
set -eu

N=${N:-1000}
FOLD_WINDOW_MS=${FOLD_WINDOW_MS:-500}
MODES=${MODES:-c e}
CLIENTS=${CLIENTS:-urlsession ahc inbound grpc}
[ $# -gt 0 ] || set -- .build/release/netinspect-bench
for tool in valgrind objcopy; do
    command -v $tool > /dev/null || { echo "agent-instructions: $tool is missing (apt-get install valgrind binutils)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/agent-instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT

label() {
    case $1 in
        a) echo "no capture: the app's own cost" ;;
        b) echo "agent, inspector in this process: added" ;;
        c) echo "agent, no inspector: added" ;;
        e) echo "agent, netinspect reading (another process): added" ;;
        h) echo "agent, app allows control (control tunnel), netinspect reading: added" ;;
        *) echo "mode $1: added" ;;
    esac
}

# count BINARY NETINSPECT CLIENT MODE REQUESTS: the app process's instructions.
count() {
    local out="$work/$(basename "$1").$3.$4.$5"
    local -a scope
    local section=1 service=$([ "$4" = a ] && echo plain || echo captured)
    case $3 in
        urlsession) scope=(NETINSPECT_BENCH_AHC=0 NETINSPECT_BENCH_WORKLOADS=2 NETINSPECT_BENCH_COUNT=$5) ;;
        ahc) scope=(NETINSPECT_BENCH_WORKLOADS= NETINSPECT_BENCH_AHC_COUNT=$5) ;;
        inbound) section=8; scope=(NETINSPECT_BENCH_INBOUND_COUNT=$5 NETINSPECT_BENCH_SERVICE_MODES=$service) ;;
        grpc) section=9; scope=(NETINSPECT_BENCH_GRPC_COUNT=$5 NETINSPECT_BENCH_SERVICE_MODES=$service) ;;
        *) echo "agent-instructions: unknown client $3" >&2; exit 1 ;;
    esac
    env "${scope[@]}" NETINSPECT_BENCH_MODES=$4 NETINSPECT_BENCH_ROUNDS=1 NETINSPECT_BENCH_NETINSPECT="$2" \
        NETINSPECT_BENCH_FOLD_WINDOW_MS=$FOLD_WINDOW_MS \
        valgrind --tool=callgrind --callgrind-out-file="$out.cg" --log-file="$out.log" "$1" --only $section > "$out.txt" 2> "$out.err" \
        || { echo "agent-instructions: $3 mode $4, $5 requests failed:" >&2; cat "$out.err" "$out.log" >&2; exit 1; }
    # A run whose flows did not all arrive did different work: say so.
    if grep -q 'FAILED' "$out.txt"; then echo "agent-instructions: $3 mode $4: requests failed" >&2; grep 'FAILED' "$out.txt" >&2; fi
    grep -o 'netinspect printed [0-9]*/[0-9]* flows, [0-9]* events dropped, [0-9.]* frames a flow' "$out.txt" | sed "s|^|  $3 mode $4, $5 requests: |" >> "$work/notes"
    sed -n 's/^==[0-9]*== Collected : //p' "$out.log"
}

declare -A cost
index=0
# Mode h is the control tunnel, AsyncHTTPClient's alone: URLSession has no
# row for it. Sections 8 and 9 run without capture (a) or with netinspect reading (e).
applies() {
    case $1 in
        inbound | grpc) [ "$2" = a ] || [ "$2" = e ] ;;
        *) [ "$2" != h ] || [ "$1" = ahc ] ;;
    esac
}

for bench in "$@"; do
    index=$((index + 1))
    [ -x "$bench" ] || { echo "agent-instructions: no executable $bench" >&2; exit 1; }
    netinspect="$(cd "$(dirname "$bench")" && pwd)/netinspect"
    [ -x "$netinspect" ] || { echo "agent-instructions: no netinspect beside $bench" >&2; exit 1; }
    # valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes.
    copy="$work/netinspect-bench-$index"
    objcopy --strip-debug "$bench" "$copy"
    for client in $CLIENTS; do
        for mode in a $MODES; do
            applies $client $mode || continue
            once=$(count "$copy" "$netinspect" $client $mode $N)
            twice=$(count "$copy" "$netinspect" $client $mode $((2 * N)))
            cost[$index,$client,$mode]=$(( (twice - once) / N ))
            echo "  $bench, $client, mode $mode: $once instructions for $N requests, $twice for $((2 * N))" >&2
        done
    done
done

k() { awk -v v="$1" 'BEGIN { printf "%.1f k", v / 1000 }'; }
echo "### Instructions in the app's process per request (callgrind; $N and $((2 * N)) requests, difference over $N)"
echo
header="| client | per request |"; rule="|---|---|"
for bench in "$@"; do header="$header $bench |"; rule="$rule---|"; done
echo "$header"; echo "$rule"
for client in $CLIENTS; do
    case $client in
        urlsession) name="URLSession GET 1 KiB, c=16" ;;
        ahc) name="AsyncHTTPClient GET 1 KiB, c=16" ;;
        inbound) name="Hummingbird inbound + one AsyncHTTPClient call, c=32" ;;
        grpc) name="gRPC unary call, client and server, c=16" ;;
    esac
    for mode in a $MODES; do
        applies $client $mode || continue
        line="| $name | $(label $mode) |"
        for index in $(seq 1 $#); do
            value=${cost[$index,$client,a]}
            [ $mode = a ] || value=$(( ${cost[$index,$client,$mode]} - value ))
            line="$line $(k $value) |"
        done
        echo "$line"
    done
done
if [ -s "$work/notes" ]; then echo; echo "netinspect's count of the flows it printed, per run:"; cat "$work/notes"; fi
