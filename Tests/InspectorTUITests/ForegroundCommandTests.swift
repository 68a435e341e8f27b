#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest

@testable import InspectorTUI

/// How netinspect starts the editor: in its own process group (the
/// terminal's foreground one), with no signal blocked or ignored that the
/// editor needs; and why Foundation's `Process` cannot do it.
final class ForegroundCommandTests: XCTestCase {
    /// What `/proc` says about a program the shell started: its process
    /// group, and its blocked and ignored signal masks (hex).
    private struct Seen {
        var processGroup: pid_t
        var blocked: UInt64
        var ignored: UInt64

        init(_ path: String) throws {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let lines = text.split(separator: "\n")
            func mask(_ name: String) -> UInt64 {
                lines.first { $0.hasPrefix(name + ":") }.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) } ?? .max
            }
            // /proc/PID/stat's fifth field; the command name in field two is `cat`.
            processGroup = pid_t(lines.first { $0.hasPrefix("stat ") }?.split(separator: " ")[5] ?? "") ?? -1
            blocked = mask("SigBlk")
            ignored = mask("SigIgn")
        }

        func has(_ signal: Int32, in mask: UInt64) -> Bool { mask & (1 << UInt64(signal - 1)) != 0 }
    }

    /// A shell command that writes what `/proc` says about the program it
    /// runs (`cat`, a child of the shell) into `path`.
    private func reporting(into path: String) -> String {
        "{ printf 'stat '; cat /proc/self/stat; echo; cat /proc/self/status; } > '\(path)'"
    }

    func testTheEditorRunsInNetinspectsProcessGroupWithNoSignalBlockedOrIgnoredAndNoneOfItsDescriptors() throws {
        let path = NSTemporaryDirectory() + "netinspect-foreground-\(UUID().uuidString)"
        defer { unlink(path) }
        // Ignored here as netinspect's NIO ignores it; the editor must not inherit that.
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previousPipe) }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }

        // A pipe as netinspect's own (the inbox's wake-up, say), without close-on-exec.
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        defer { ends.forEach { close($0) } }

        XCTAssertEqual(ForegroundCommand.run(["/bin/sh", "-c", reporting(into: path)]), .exited(0))
        XCTAssertEqual(ForegroundCommand.run(["/bin/sh", "-c", "test ! -e /proc/$$/fd/\(ends[0]) && test ! -e /proc/$$/fd/\(ends[1])"]), .exited(0),
                       "netinspect's descriptors stay out of the editor")
        let seen = try Seen(path)
        XCTAssertEqual(seen.processGroup, getpgrp(), "the editor shares netinspect's process group")
        XCTAssertEqual(seen.blocked, 0, "no signal blocked")
        for number in [SIGINT, SIGQUIT, SIGPIPE] {
            XCTAssertFalse(seen.has(number, in: seen.ignored), "signal \(number) ignored")
        }
    }

    func testTheOutcomeSaysHowTheProgramEnded() {
        XCTAssertEqual(ForegroundCommand.run(["/bin/sh", "-c", "exit 3"]), .exited(3))
        XCTAssertEqual(ForegroundCommand.run(["/bin/sh", "-c", "kill -TERM $$"]), .killed(signal: SIGTERM))
        guard case .cannotStart = ForegroundCommand.run(["/nonexistent/editor"]) else { return XCTFail("a missing program cannot start") }
        XCTAssertEqual(Editor.failure(of: "vi", .killed(signal: SIGKILL)), "vi was killed by signal 9 (Killed); nothing was changed")
    }

    /// Why ``ForegroundCommand`` exists: swift-corelibs-foundation's
    /// `Process.run` spawns with `POSIX_SPAWN_SETPGROUP`, a new process
    /// group, which cannot read the terminal. If this fails, `Process` no
    /// longer does that, and the editor could be started with it again.
    func testFoundationProcessPutsItsChildInANewProcessGroup() throws {
        let path = NSTemporaryDirectory() + "netinspect-process-\(UUID().uuidString)"
        defer { unlink(path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", reporting(into: path)]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let seen = try Seen(path)
        XCTAssertNotEqual(seen.processGroup, getpgrp(), "Process left its child in our process group")
        XCTAssertEqual(seen.processGroup, process.processIdentifier, "the shell leads a group of its own")
    }
}
