#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer and AddressSanitizer, each
# in its own build directory so the normal debug build is left alone.
#
#   scripts/sanitizers.sh            # both
#   scripts/sanitizers.sh thread     # one of: thread, address
#   SANITIZE_FILTER='ListenerTests|StreamingTests' scripts/sanitizers.sh thread
#   SANITIZE_TRAITS=Viewer scripts/sanitizers.sh thread   # build without the adapters' packages (CI's subset needs none)
#
# A run fails when swift test fails or when the output holds any sanitizer
# report (a report on a helper thread does not always fail a test).
set -uo pipefail
cd "$(dirname "$0")/.."
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(thread address)

# LeakSanitizer reports Foundation's own leaks at exit (see Fuzz/lsan.supp);
# leaks are looked for by the fuzz targets, not here.
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export TSAN_OPTIONS="halt_on_error=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

# On Linux a contended Synchronization.Mutex is taken in the kernel
# (FUTEX_LOCK_PI), where ThreadSanitizer cannot see it, so it reports a race
# wherever two threads meet at one. Refuse it here rather than chase reports.
if grep -rnE --exclude-dir=.build '\bMutex *[<(]' Sources Tests >&2; then
    echo "sanitizers: Synchronization.Mutex above is invisible to ThreadSanitizer on Linux; use Locked (CaptureAgent) or NIOLockedValueBox" >&2
    exit 1
fi

status=0
mkdir -p .build
for kind in "${kinds[@]}"; do
    log=".build/sanitize-$kind.log"
    echo "sanitizers: swift test --sanitize=$kind (output in $log)"
    filter=()
    [ -n "${SANITIZE_FILTER:-}" ] && filter=(--filter "$SANITIZE_FILTER")
    [ -n "${SANITIZE_TRAITS:-}" ] && filter+=(--traits "$SANITIZE_TRAITS")
    swift test --sanitize="$kind" --scratch-path ".build/sanitize-$kind" "${filter[@]}" > "$log" 2>&1
    code=$?
    grep -E "Executed [0-9]+ tests" "$log" | tail -1
    reports=$(grep -cE "WARNING: ThreadSanitizer|SUMMARY: AddressSanitizer|ERROR: AddressSanitizer" "$log")
    if [ "$code" != 0 ] || [ "$reports" != 0 ]; then
        grep -E "error:|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|SUMMARY" "$log" | head -40 >&2
        echo "sanitizers: $kind FAILED (exit $code, $reports reports)" >&2
        status=1
    else
        echo "sanitizers: $kind clean"
    fi
done
exit $status
