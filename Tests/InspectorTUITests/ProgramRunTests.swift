import Foundation
import TestSupport
import XCTest

#if os(Linux)
/// TestSupport's `ProgramRun`, which runs tmux, curl, swiftc and the demos.
/// The tmux the end-to-end tests start must get signals: started from a
/// worker thread that blocks most of them (as Dispatch's do), a tmux server
/// kept SIGCHLD and SIGTERM blocked, outlived kill-server, and every
/// `swift test` left it and the netinspect in its pane running.
final class ProgramRunTests: XCTestCase {
    func testAProgramStartedFromAThreadThatBlocksSignalsHasNoneBlocked() throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<(status: Int32, output: String), Error>?
        let thread = Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            // cat itself, not a shell: dash unblocks signals as it starts.
            outcome = Result { try ProgramRun.run(["/bin/cat", "/proc/self/status"]) }
            done.signal()
        }
        thread.start()
        done.wait()
        let (status, output) = try XCTUnwrap(outcome).get()
        XCTAssertEqual(status, 0, output)
        let blocked = output.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
        XCTAssertEqual(blocked, "SigBlk:\t0000000000000000")
    }

    func testTheEnvironmentIsAddedAndTheTwoStreamsKeptApart() throws {
        let run = try ProgramRun.collect(["/bin/sh", "-c", "echo \"out $PROGRAM_RUN_TEST $HOME\"; echo err >&2; exit 3"],
                                         adding: ["PROGRAM_RUN_TEST": "added"])
        XCTAssertEqual(run.status, 3)
        XCTAssertFalse(run.timedOut)
        XCTAssertEqual(run.output, "out added \(ProcessInfo.processInfo.environment["HOME"] ?? "")\n", "added to this process's environment")
        XCTAssertEqual(run.errorOutput, "err\n")
    }

    func testAProgramThatOutlivesItsTimeoutIsKilled() throws {
        let run = try ProgramRun.collect(["/usr/bin/tail", "-f", "/dev/null"], timeout: 0.2)
        XCTAssertTrue(run.timedOut)
        XCTAssertEqual(run.status, -1, "ended by a signal")
        XCTAssertNotEqual(kill(run.processID, 0), 0, "reaped")
    }
}
#endif
