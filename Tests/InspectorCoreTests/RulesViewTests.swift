import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

/// The rules view (`R`) through the reducer: what each key does to the rules
/// and what it asks of the program. Rules are checked by the real
/// ``RuleLoader``, as the program does it (``AppState/settle(_:)``).
final class RulesViewTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rulesview-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// A session with one agent that accepts control and one that does not.
    private func state(rules: RuleBook = RuleBook(path: "/tmp/rules.txt")) -> AppState {
        var state = AppState(timeZone: Fixtures.utc, rules: rules)
        var controlled = Fixtures.hello(app: "controlled")
        controlled.acceptsControl = true
        _ = Reducer.reduce(&state, .inbox([.connected(ConnectionID(1), controlled, peer: "unix"),
                                            .connected(ConnectionID(2), Fixtures.hello(app: "plain"), peer: "unix")], at: Fixtures.epoch))
        return state
    }

    private func rule(_ text: String) throws -> TrafficRule {
        let (kind, spec) = try RuleLoader.parseLine(text)
        return try RuleLoader.load(kind, spec: spec)
    }

    private func screen(_ state: AppState) -> String {
        Renderer.render(state, size: Size(width: 100, height: 20)).text
    }

    func testROpensTheViewFromTheListAndTheDetailAndQGoesBack() {
        var state = state()
        _ = Reducer.reduce(&state, .inbox([.message(ConnectionID(1), .flowStarted(Fixtures.started(1)))], at: Fixtures.epoch))
        state.press("R")
        XCTAssertEqual(state.mode, .rules(cursor: 0))
        XCTAssertEqual(state.keyContext, .rules)
        state.press("q")
        XCTAssertEqual(state.mode, .list)
        state.press("enter", "R")
        XCTAssertEqual(state.mode, .rules(cursor: 0), "from the detail view too")
        state.press("esc")
        state.enter("rules", after: ":")
        XCTAssertEqual(state.mode, .rules(cursor: 0), "and from the command bar")
        XCTAssertTrue(screen(state).contains("No rules. Press a"), screen(state))
    }

    func testAddingARuleChecksItPushesItAndSavesIt() throws {
        var state = state()
        state.press("R")
        let effect = state.enter("map-remote |api.example.com|127.0.0.1:8080", after: "a")
        XCTAssertEqual(effect, .loadRule(RuleLoad(kind: .mapRemote, spec: "|api.example.com|127.0.0.1:8080", target: .add,
                                                  directory: URL(fileURLWithPath: "/tmp"))),
                       "a map-local path would be read from the rules file's directory")
        let changed = state.settle(effect)
        let expected = try rule("map-remote |api.example.com|127.0.0.1:8080")
        XCTAssertEqual(changed, .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.inForce, [expected])
        XCTAssertEqual(state.notice?.text, "Added map-remote |api.example.com|127.0.0.1:8080: 1 rule on, sent to 1 agent that accepts control")
        let text = screen(state)
        XCTAssertTrue(text.contains("1 of 2 connected apps allow control"), text)
        XCTAssertTrue(text.contains(" 1  on   map-remote      |api.example.com|127.0.0.1:8080"), text)
        XCTAssertTrue(text.contains("Changes are saved to /tmp/rules.txt"), text)
    }

    /// Bad input says what is wrong and keeps what was typed, in the prompt.
    func testABadRuleIsRefusedWithItsTextKept() {
        var state = state()
        state.press("R")
        XCTAssertEqual(state.enter("map-rmote |a|b", after: "a"), .none)
        XCTAssertEqual(state.prompt?.text, "map-rmote |a|b")
        XCTAssertEqual(state.notice?.isError, true)
        XCTAssertTrue(state.notice?.text.contains("KIND one of map-remote, map-local, modify-headers") == true, "\(String(describing: state.notice))")
        XCTAssertTrue(screen(state).contains("KIND one of"), "the error shows above the prompt:\n\(screen(state))")

        state.press("C-u")
        state.type("map-remote |(unclosed|b")
        let effect = state.press("enter")
        XCTAssertEqual(state.settle(effect), .none)
        XCTAssertEqual(state.prompt?.text, "map-remote |(unclosed|b")
        XCTAssertTrue(state.notice?.text.contains("not a valid regular expression") == true, "\(String(describing: state.notice))")
        state.press("C-u")
        state.type("map-local |/a|\(scratch.path)/missing.json")
        XCTAssertEqual(state.settle(state.press("enter")), .none)
        XCTAssertTrue(state.notice?.text.contains("no file or directory") == true, "\(String(describing: state.notice))")
        XCTAssertTrue(state.rules.entries.isEmpty)
        state.press("esc")
        XCTAssertNil(state.prompt)
    }

    func testTabCompletesTheKind() {
        var state = state()
        state.press("R", "a")
        state.type("map-r")
        state.press("tab")
        XCTAssertEqual(state.prompt?.text, "map-remote")
    }

    func testSwitchingOffKeepsTheRuleButSendsItNoMoreAndOnChecksItAgain() throws {
        let path = scratch.appendingPathComponent("item.json")
        try Data("{}".utf8).write(to: path)
        var state = state(rules: RuleBook(entries: [RuleBook.Entry(try rule("map-local |/item|\(path.path)"))], path: "/tmp/rules.txt"))
        state.press("R")
        XCTAssertEqual(state.press("space"), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.entries.count, 1)
        XCTAssertEqual(state.rules.inForce, [])
        XCTAssertTrue(state.rules.fileText.contains("# off: map-local |/item|"), state.rules.fileText)
        XCTAssertTrue(screen(state).contains(" 1  off  map-local"), screen(state))

        try Data("{\"new\":1}".utf8).write(to: path)
        let ask = state.press("t")
        XCTAssertEqual(ask, .loadRule(RuleLoad(kind: .mapLocal, spec: "|/item|\(path.path)", target: .enable(0), directory: URL(fileURLWithPath: "/tmp"))))
        XCTAssertEqual(state.settle(ask), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.inForce.first?.files.first?.data, Data("{\"new\":1}".utf8), "its files are read afresh")

        try FileManager.default.removeItem(at: path)
        state.press("space")
        XCTAssertEqual(state.settle(state.press("space")), .none)
        XCTAssertEqual(state.rules.entries.map(\.isEnabled), [false], "a rule whose file is gone stays off")
        XCTAssertTrue(state.notice?.text.contains("Cannot switch on") == true, "\(String(describing: state.notice))")
    }

    func testDeleteAsksFirst() throws {
        var state = state(rules: RuleBook(entries: [RuleBook.Entry(try rule("map-remote |a|b")), RuleBook.Entry(try rule("map-remote |c|d"))]))
        state.press("R", "j")
        state.press("d")
        XCTAssertTrue(screen(state).contains("Delete rule 2, map-remote |c|d? (y/n)"), screen(state))
        XCTAssertEqual(state.press("n"), .none)
        XCTAssertEqual(state.rules.entries.count, 2)
        state.press("d")
        XCTAssertEqual(state.press("y"), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.entries.map(\.text), ["map-remote |a|b"])
        XCTAssertEqual(state.mode, .rules(cursor: 0))
    }

    func testMovingChangesTheOrderAgentsApply() throws {
        var state = state(rules: RuleBook(entries: [RuleBook.Entry(try rule("modify-headers /X-A/1")), RuleBook.Entry(try rule("map-remote |c|d"))]))
        state.press("R", "j")
        XCTAssertEqual(state.press("K"), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.inForce.map(\.description), ["map-remote |c|d", "modify-headers /X-A/1"])
        XCTAssertEqual(state.mode, .rules(cursor: 0), "the cursor goes with the rule")
        XCTAssertEqual(state.press("K"), .none, "the first stays first")
        state.press("J")
        XCTAssertEqual(state.rules.inForce.map(\.description), ["modify-headers /X-A/1", "map-remote |c|d"])
    }

    func testEditingReplacesTheRuleInPlace() throws {
        var state = state(rules: RuleBook(entries: [RuleBook.Entry(try rule("map-remote |a|b")), RuleBook.Entry(try rule("map-remote |c|d"))]))
        state.press("R", "enter")
        XCTAssertEqual(state.prompt?.text, "map-remote |a|b")
        state.press("backspace")
        state.type("z")
        XCTAssertEqual(state.settle(state.press("enter")), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.inForce.map(\.description), ["map-remote |a|z", "map-remote |c|d"])
    }

    /// Started with flags and no --rules: changes hold for the session only,
    /// the view says so, and `:rules.save FILE` writes every rule there.
    func testWithoutARulesFileTheViewSaysChangesAreNotSaved() throws {
        var state = state(rules: RuleBook(entries: [RuleBook.Entry(try rule("map-remote |a|b"), origin: .flag)]))
        state.press("R")
        XCTAssertTrue(screen(state).contains("Not saved: netinspect started without --rules FILE"), screen(state))
        XCTAssertTrue(screen(state).contains("(command-line flag: not saved)"), screen(state))
        XCTAssertEqual(state.enter("rules.save", after: ":"), .none)
        XCTAssertEqual(state.notice?.isError, true)
        let path = scratch.appendingPathComponent("saved.txt").path
        let effect = state.enter("rules.save \(path)", after: ":")
        XCTAssertEqual(state.rules.path, path)
        XCTAssertEqual(effect, .rulesChanged(state.rules))
        XCTAssertTrue(state.rules.fileText.hasSuffix("\nmap-remote |a|b\n"), "the flag's rule is the file's now: \(state.rules.fileText)")
        _ = Reducer.reduce(&state, .rulesSaved(.saved(path: path)))
        XCTAssertTrue(screen(state).contains("Saved to \(path)"), screen(state))
        _ = Reducer.reduce(&state, .rulesSaved(.failed(path: path, reason: "disk full")))
        XCTAssertTrue(screen(state).contains("Could not save to \(path): disk full"), screen(state))
        XCTAssertEqual(state.session.events.last?.level, .error)
    }

    func testTheBarAddsARuleAndRuleCommandsNeedTheView() throws {
        var state = state()
        let effect = state.enter("rule modify-headers /X-Env/staging", after: ":")
        XCTAssertEqual(state.mode, .list, "added where the person is; R opens the rules view")
        XCTAssertEqual(state.settle(effect), .rulesChanged(state.rules))
        XCTAssertEqual(state.rules.inForce.map(\.description), ["modify-headers /X-Env/staging"])
        XCTAssertEqual(state.enter("rules.toggle", after: ":"), .none)
        XCTAssertEqual(state.notice?.text, "That works in the rules view: press R")
        XCTAssertEqual(state.rules.inForce.count, 1)
    }

    func testNoMoreRulesThanAnAgentTakesInOneMessage() throws {
        let one = try rule("modify-headers /X-A/1")
        var state = state(rules: RuleBook(entries: Array(repeating: RuleBook.Entry(one), count: Reducer.maximumRulesInForce)))
        state.press("R")
        XCTAssertEqual(state.settle(state.enter("modify-headers /X-B/2", after: "a")), .none)
        XCTAssertEqual(state.prompt?.text, "modify-headers /X-B/2", "kept for later")
        XCTAssertTrue(state.notice?.text.contains("at most 256 rules") == true, "\(String(describing: state.notice))")
        XCTAssertEqual(state.rules.entries.count, Reducer.maximumRulesInForce)
    }
}

extension AppState {
    /// Carries out what the rules view asks of the program as the program
    /// does (checking and loading rules with the real ``RuleLoader``) and
    /// returns the first effect that is not such a request.
    mutating func settle(_ effect: Effect) -> Effect {
        guard case .loadRule(let request) = effect else { return effect }
        let result = Result { () throws(RuleLoader.RuleError) in
            try RuleLoader.load(request.kind, spec: request.spec, relativeTo: request.directory)
        }
        return settle(Reducer.reduce(&self, .ruleLoaded(request, result)))
    }
}
