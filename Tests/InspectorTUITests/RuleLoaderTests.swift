import Foundation
@testable import InspectorCore
@testable import InspectorTUI
import WireProtocol
import XCTest

final class RuleLoaderTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ruleloader-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    private func assertRejected(_ kind: TrafficRule.Kind, _ spec: String, saying expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try RuleLoader.load(kind, spec: spec), file: file, line: line) { error in
            XCTAssertTrue("\(error)".contains(expected), "\(spec): \(error)", file: file, line: line)
        }
    }

    func testEveryPartIsCheckedBeforeAnAgentSeesIt() {
        assertRejected(.mapRemote, "|~c|a|b", saying: "filter '~c'")
        assertRejected(.mapRemote, "|(unclosed|b", saying: "not a valid regular expression")
        assertRejected(.modifyHeaders, "/Bad Name/v", saying: "not a header name")
        assertRejected(.mapLocal, "|a|\(scratch.path)/missing.json", saying: "no file or directory")
        assertRejected(.mapRemote, "a|b", saying: "separator")
    }

    func testAMapLocalFileTravelsWithItsContentType() throws {
        let file = scratch.appendingPathComponent("item.json")
        try Data("{}".utf8).write(to: file)
        let rule = try RuleLoader.load(.mapLocal, spec: "|/item|\(file.path)")
        XCTAssertEqual(rule.files, [TrafficRule.LocalFile(path: "", contentType: "application/json", data: Data("{}".utf8))])
    }

    func testAMapLocalDirectoryTravelsByRelativePath() throws {
        try FileManager.default.createDirectory(at: scratch.appendingPathComponent("site/img"), withIntermediateDirectories: true)
        try Data("<p>".utf8).write(to: scratch.appendingPathComponent("site/index.html"))
        try Data([0x89, 0x50]).write(to: scratch.appendingPathComponent("site/img/a.png"))
        let rule = try RuleLoader.load(.mapLocal, spec: "|/site|\(scratch.appendingPathComponent("site").path)")
        XCTAssertEqual(rule.files.map(\.path), ["img/a.png", "index.html"])
        XCTAssertEqual(rule.files.map(\.contentType), ["image/png", "text/html; charset=utf-8"])
    }

    func testARulesFileReadsBackWhatItWrites() throws {
        try Data("{}".utf8).write(to: scratch.appendingPathComponent("a.json"))
        let text = """
            # staging
            map-remote |api.example.com|staging.example.com

            map-local |/a|a.json
            modify-headers /~d example.com/X-Env/staging
            """
        let path = scratch.appendingPathComponent("rules.txt").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let rules = try RuleLoader.loadFile(at: path)
        XCTAssertEqual(rules.map(\.kind), [.mapRemote, .mapLocal, .modifyHeaders])
        XCTAssertEqual(rules[1].files.first?.data, Data("{}".utf8), "a relative path is taken from the file's directory")
        try RuleLoader.fileText(rules).write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(try RuleLoader.loadFile(at: path).map(\.description), rules.map(\.description))
    }

    func testABadLineInARulesFileIsNamedByNumber() throws {
        let path = scratch.appendingPathComponent("bad.txt").path
        try "map-remote |a|b\nteleport |a|b\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try RuleLoader.loadFile(at: path)) { error in
            XCTAssertTrue("\(error)".contains("bad.txt:2"), "\(error)")
        }
    }

    func testTheFlagsBecomeTheListenersRules() throws {
        let command = try Netinspect.parse(["--map-remote", "|a.example|b.example", "--modify-headers", "/X-A/1"])
        XCTAssertEqual(try command.listenerConfiguration(rules: OptionFiles(command).ruleBook).rules.map(\.description),
                       ["map-remote |a.example|b.example", "modify-headers /X-A/1"])
        XCTAssertThrowsError(try OptionFiles(Netinspect.parse(["--map-remote", "|(|b"]))) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("not a valid regular expression"), Netinspect.message(for: error))
        }
        XCTAssertThrowsError(try Netinspect.parse(["--read", "x.har", "--map-remote", "|a|b"])) { error in
            XCTAssertTrue(Netinspect.message(for: error).contains("cannot be combined with --read"), Netinspect.message(for: error))
        }
    }

    /// What the rules view reads: rules that are off (`# off: KIND SPEC`)
    /// and the comments between rules, written back unchanged.
    func testARulesBookKeepsRulesThatAreOffAndCommentsWordForWord() throws {
        let text = """
            # staging
            map-remote |api.example.com|staging.example.com

            # off: map-local |/a|missing.json
            # off: not a rule, only a comment
            modify-headers /~d example.com/X-Env/staging
            # the end

            """
        let path = scratch.appendingPathComponent("rules.txt").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let book = try RuleLoader.readBook(at: path)
        XCTAssertEqual(book.entries.map(\.text), ["map-remote |api.example.com|staging.example.com", "map-local |/a|missing.json",
                                                  "modify-headers /~d example.com/X-Env/staging"])
        XCTAssertEqual(book.entries.map(\.isEnabled), [true, false, true], "a rule that is off is not checked against the disk")
        XCTAssertEqual(book.fileText, text)
        XCTAssertEqual(try RuleLoader.loadFile(at: path).map(\.description),
                       ["map-remote |api.example.com|staging.example.com", "modify-headers /~d example.com/X-Env/staging"],
                       "the flags' reader (and --dump) skips rules that are off, as an older netinspect does")
    }

    func testDeletingARuleKeepsTheCommentsAboveIt() throws {
        let path = scratch.appendingPathComponent("rules.txt").path
        try "# one\nmap-remote |a|b\n# two\nmap-remote |c|d\n".write(toFile: path, atomically: true, encoding: .utf8)
        var book = try RuleLoader.readBook(at: path)
        book.remove(at: 1)
        XCTAssertEqual(book.fileText, "# one\nmap-remote |a|b\n# two\n")
        book.remove(at: 0)
        XCTAssertEqual(book.fileText, "# one\n# two\n")
    }

    func testABookNetinspectCreatesSaysHowToReadIt() throws {
        var book = RuleBook(entries: [RuleBook.Entry(try TrafficRule(.mapRemote, spec: "|a|b")),
                                      RuleBook.Entry(kind: .modifyHeaders, spec: "/X-A/1", rule: nil),
                                      RuleBook.Entry(try TrafficRule(.mapRemote, spec: "|flag|x"), origin: .flag)])
        let lines = book.fileText.split(separator: "\n")
        XCTAssertEqual(lines.dropFirst(), ["map-remote |a|b", "# off: modify-headers /X-A/1"], "flag rules are not the file's")
        XCTAssertTrue(lines.first?.hasPrefix("# netinspect traffic rules") == true, "\(lines)")
        book.entries.removeAll()
        let path = scratch.appendingPathComponent("new.txt").path
        try RuleLoader.save(book, to: path)
        XCTAssertEqual(try RuleLoader.readBook(at: path).entries, [])
    }

    /// Saving replaces the file in one rename: it keeps its permissions,
    /// a symbolic link stays a link to the saved file, and nothing is left beside it.
    func testSavingIsAtomicAndKeepsTheFilesModeAndLink() throws {
        let real = scratch.appendingPathComponent("real.txt").path
        let link = scratch.appendingPathComponent("link.txt").path
        try "map-remote |a|b\n".write(toFile: real, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(real, 0o600), 0)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        var book = try RuleLoader.readBook(at: link)
        book.entries[0].rule = nil
        try RuleLoader.save(book, to: link)
        XCTAssertEqual(try String(contentsOfFile: real, encoding: .utf8), "# off: map-remote |a|b\n")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), real)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: real)[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted(), ["link.txt", "real.txt"])
        XCTAssertThrowsError(try RuleLoader.save(book, to: scratch.appendingPathComponent("no/such/dir/r.txt").path)) { error in
            XCTAssertTrue("\(error)".contains("cannot save the rules"), "\(error)")
        }
    }
}
