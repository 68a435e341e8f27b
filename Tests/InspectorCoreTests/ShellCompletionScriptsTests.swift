import Foundation
import TestSupport
import XCTest

/// `netinspect --generate-completion-script bash|zsh|fish` (made by
/// swift-argument-parser) completes netinspect's flags, the `--listen`
/// forms and file names for the file options.
final class ShellCompletionScriptsTests: XCTestCase {
    private func script(_ shell: String) throws -> String {
        let binary = try Prerequisite.netinspect()
        let run = try ProgramRun.collect([binary.path, "--generate-completion-script", shell], timeout: 60)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        return run.output
    }

    func testEveryShellsScriptCompletesTheFlags() throws {
        for shell in ["bash", "zsh", "fish"] {
            let text = try script(shell)
            for flag in ["listen", "fail-on", "summary", "dump", "json", "read", "filter"] {
                // bash and zsh spell it --flag; fish, -l 'flag'.
                XCTAssertTrue(text.contains("--\(flag)") || text.contains("-l '\(flag)'"), "\(shell)'s script lacks --\(flag)")
            }
            XCTAssertTrue(text.contains("tcp:127.0.0.1:") && text.contains("otlp:127.0.0.1:4318"), "\(shell): the --listen forms")
        }
    }

    func testBashCompletesTheListenFormsAfterListen() throws {
        let text = try script("bash")
        // The script's case for --listen offers the forms.
        let listen = try XCTUnwrap(text.range(of: "'--listen')"), text)
        let branch = text[listen.upperBound...].prefix(400)
        XCTAssertTrue(branch.contains("unix:"), String(branch))
    }
}
