#!/usr/bin/env bash
# Builds the libFuzzer targets with ASan and runs each one.
#
#   Fuzz/run.sh                 # each target for 20,000 runs (what CI does)
#   Fuzz/run.sh -max_total_time=600   # ten minutes each; any libFuzzer flag works
#   FUZZ_TARGETS=envelope Fuzz/run.sh -runs=1000000
#
# Seeds live in Fuzz/Corpus/<target>/ (committed); new corpus entries go to
# .build/fuzz/corpus/<target>/ and crashes to .build/fuzz/crashes/<target>/.
# A crash found here becomes a regression test in Tests/ and its input a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(-runs=20000)

out=.build/fuzz
mkdir -p "$out"
sanitize=(-sanitize=fuzzer,address)
quiet() { grep -v "Cannot export local symbol" || true; }

# WireProtocol as an instrumented static module, testable so the targets can
# reach its internals (the fast JSON path) as the tests do.
echo "fuzz: building WireProtocol"
rm -f "$out/libWireProtocol.a"
swiftc -O -parse-as-library "${sanitize[@]}" -enable-testing -package-name netinspect -module-name WireProtocol \
    -emit-library -static -emit-module -emit-module-path "$out/WireProtocol.swiftmodule" \
    Sources/WireProtocol/*.swift Sources/WireProtocol/JSON/*.swift -o "$out/libWireProtocol.a" 2>&1 | quiet
[ -f "$out/libWireProtocol.a" ] || { echo "fuzz: build of WireProtocol failed" >&2; exit 1; }

# FlowFilter likewise, for the control target (the agent matches rules with it).
build_flowfilter() {
    [ -f "$out/libFlowFilter.a" ] && return
    echo "fuzz: building FlowFilter"
    swiftc -O -parse-as-library "${sanitize[@]}" -package-name netinspect -module-name FlowFilter -I "$out" -L "$out" -lWireProtocol \
        -emit-library -static -emit-module -emit-module-path "$out/FlowFilter.swiftmodule" \
        Sources/FlowFilter/*.swift -o "$out/libFlowFilter.a" 2>&1 | quiet
    [ -f "$out/libFlowFilter.a" ] || { echo "fuzz: build of FlowFilter failed" >&2; exit 1; }
}
rm -f "$out/libFlowFilter.a"

# ProtobufWire likewise, for the spans and protobuf targets.
build_protobufwire() {
    [ -f "$out/libProtobufWire.a" ] && return
    echo "fuzz: building ProtobufWire"
    swiftc -O -parse-as-library "${sanitize[@]}" -package-name netinspect -module-name ProtobufWire \
        -emit-library -static -emit-module -emit-module-path "$out/ProtobufWire.swiftmodule" \
        Sources/ProtobufWire/*.swift -o "$out/libProtobufWire.a" 2>&1 | quiet
    [ -f "$out/libProtobufWire.a" ] || { echo "fuzz: build of ProtobufWire failed" >&2; exit 1; }
}
rm -f "$out/libProtobufWire.a"

build() { # name, sources...
    local name=$1; shift
    echo "fuzz: building $name"
    rm -f "$out/$name"
    swiftc -O -parse-as-library "${sanitize[@]}" -package-name netinspect -I "$out" -L "$out" -lWireProtocol \
        -module-name "Fuzz_$name" "$@" -o "$out/$name" 2>&1 | quiet
    [ -x "$out/$name" ] || { echo "fuzz: build of $name failed" >&2; exit 1; }
}

export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

targets=${FUZZ_TARGETS:-"frames envelope receipts control filter spans protobuf"}
status=0
for target in $targets; do
    case $target in
        frames) build frames Fuzz/Targets/FrameDecoderFuzz.swift ;;
        envelope) build envelope Fuzz/Targets/EnvelopeFuzz.swift ;;
        receipts) build receipts Fuzz/Targets/ReceiptFuzz.swift ;;
        control) build_flowfilter
                 # WireProtocol again after FlowFilter: a static archive only
                 # resolves what the ones before it left open (URLAuthority).
                 build control -lFlowFilter -lWireProtocol Sources/CaptureAgent/Control/RuleSet.swift Sources/CaptureAgent/Control/Breakpoints.swift \
                     Sources/CaptureAgent/Control/Exchange.swift Sources/CaptureAgent/Control/ExchangeControl.swift \
                     Sources/CaptureAgent/Control/ConditionEffects.swift Sources/CaptureAgent/Control/ServerReplayStore.swift \
                     Sources/CaptureAgent/Support/Locked.swift \
                     Fuzz/Targets/ControlFuzz.swift ;;
        filter) build filter Sources/FlowFilter/*.swift Fuzz/Targets/FilterFuzz.swift ;;
        spans) build_protobufwire
               build spans -lProtobufWire Sources/OTLPReceiver/TraceExport.swift Sources/OTLPReceiver/TraceExport+Protobuf.swift \
                   Sources/OTLPReceiver/TraceExport+JSON.swift Sources/OTLPReceiver/TraceExport+Encoding.swift \
                   Sources/OTLPReceiver/SpanFlow.swift Fuzz/Targets/SpanFuzz.swift ;;
        protobuf) build_protobufwire
                  build protobuf -lProtobufWire Fuzz/Targets/ProtobufFuzz.swift ;;
        *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
    esac
    mkdir -p "$out/corpus/$target" "$out/crashes/$target"
    echo "fuzz: running $target ${flags[*]}"
    if ! "$out/$target" "${flags[@]}" -artifact_prefix="$out/crashes/$target/" \
            "$out/corpus/$target" "Fuzz/Corpus/$target" 2>"$out/$target.log"; then
        echo "fuzz: $target FAILED; input saved under $out/crashes/$target/" >&2
        tail -40 "$out/$target.log" >&2
        status=1
    else
        grep -E "^Done|stat::number_of_executed_units" "$out/$target.log" | tail -1 || true
    fi
done
exit $status
