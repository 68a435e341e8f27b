import Foundation
import XCTest

/// README's prerequisites work as written on a fresh machine: the install
/// commands run as root as they stand (a container has no sudo), and they
/// name the packages `.ci/run` installs, so the two cannot drift apart.
final class ReadmePrerequisitesTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func prerequisites() throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try XCTUnwrap(readme.components(separatedBy: "## Prerequisites").dropFirst().first)
        return section.components(separatedBy: "\n## ")[0].replacingOccurrences(of: "\n", with: " ")
    }

    /// The packages of each `apt-get install …` command in `text`.
    private func aptPackages(in text: String) -> Set<String> {
        var packages: Set<String> = []
        for command in text.components(separatedBy: "apt-get install").dropFirst() {
            // Up to the end of the code span or of the shell command.
            let line = command.prefix { $0 != "`" }.components(separatedBy: "&&")[0]
            packages.formUnion(line.split(separator: " ").filter { !$0.hasPrefix("-") }.map(String.init))
        }
        return packages
    }

    func testTheInstallCommandsNeedNoSudo() throws {
        let text = try prerequisites()
        XCTAssertFalse(text.contains("`sudo apt-get"), "a root shell has no sudo: write the command bare and say when to add sudo")
        XCTAssertFalse(aptPackages(in: text).isEmpty, "README names the Debian packages to install")
    }

    func testReadmeAndCINameTheSamePackages() throws {
        let ci = try String(contentsOf: root.appendingPathComponent(".ci/run"), encoding: .utf8)
        let installed = Set(ci.matches(of: /missing\+=\(([^)]*)\)/).flatMap { $0.1.split(separator: " ").map(String.init) })
        let named = aptPackages(in: try prerequisites())
        XCTAssertEqual(named.subtracting(installed), [], "README names packages .ci/run does not install")
        XCTAssertEqual(installed.subtracting(named).subtracting(["python3", "python3-pip", "openssl"]), [],
                       "packages .ci/run installs that README's prerequisites do not name")
    }
}
