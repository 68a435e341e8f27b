import Foundation
import TestSupport
@testable import InspectorCore
import WireProtocol
import XCTest

final class CommandBarTests: XCTestCase {
    private func run(_ line: String, in state: inout AppState) -> Effect {
        state.press(":")
        state.type(line)
        return state.press("enter")
    }

    func testFilterSortAndColumnsTakeArguments() {
        var state = Fixtures.mixedState()
        _ = run("filter ~c 5xx", in: &state)
        XCTAssertEqual(state.filterText, "~c 5xx")
        XCTAssertEqual(state.rows, [2])
        _ = run("clear", in: &state)
        _ = run("sort duration", in: &state)
        XCTAssertEqual(state.view.sortKey, .duration)
        _ = run("columns method,code,path", in: &state)
        XCTAssertEqual(state.chosenColumns, [.method, .code, .path])
        let header = Renderer.render(state, size: .minimum).text.split(separator: "\n")[0]
        XCTAssertTrue(header.hasPrefix(" Method  Code Path"), String(header))
        _ = run("columns", in: &state)
        XCTAssertNil(state.chosenColumns)
    }

    func testExportSaveAndMarkByName() {
        var state = Fixtures.mixedState()
        XCTAssertEqual(run("mark", in: &state), .annotationsChanged([Fixtures.id(6): FlowAnnotation(isMarked: true)]))
        guard case let .exportHAR(flows, annotations, path) = run("export out.har", in: &state) else { return XCTFail("export") }
        XCTAssertEqual(flows.count, 6)
        XCTAssertEqual(path, "out.har")
        XCTAssertEqual(annotations[Fixtures.id(6)], FlowAnnotation(isMarked: true))
        guard case let .saveFlows(contents, "flows.jsonl") = run("save flows.jsonl", in: &state) else { return XCTFail("save") }
        XCTAssertEqual(contents.flows.count, 6)
        XCTAssertEqual(run("comment looks wrong", in: &state), .annotationsChanged([Fixtures.id(6): FlowAnnotation(isMarked: true, comment: "looks wrong")]))
    }

    func testEveryKeymapNameRuns() {
        var state = Fixtures.mixedState()
        _ = run("sort.reverse", in: &state)
        XCTAssertTrue(state.view.isReversed)
        _ = run("flow.open", in: &state)
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 5)))
        _ = run("timing", in: &state)
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 5, tab: .timing)))
        XCTAssertEqual(run("quit", in: &state), .quit)
    }

    func testMistakesAreExplained() {
        var state = Fixtures.mixedState()
        _ = run("frobnicate", in: &state)
        XCTAssertEqual(state.notice?.text, "Unknown command \"frobnicate\"; Tab completes, :help lists them")
        _ = run("sort", in: &state)
        XCTAssertEqual(state.notice?.text, "sort needs time, duration, size, status, host")
        _ = run("sort sideways", in: &state)
        XCTAssertEqual(state.notice?.isError, true)
        _ = run("unmark now", in: &state)
        XCTAssertEqual(state.notice?.text, "unmark takes no argument")
        _ = run("mark now", in: &state)
        XCTAssertEqual(state.notice?.text, "mark acts on @focus, @marked, @shown, @all, not \"now\"")
        _ = run("columns method,colour", in: &state)
        XCTAssertTrue(state.notice?.text.hasPrefix("Unknown column colour") ?? false, state.notice?.text ?? "")
        XCTAssertNil(state.chosenColumns)
    }

    func testTabCompletesNamesAndArguments() {
        XCTAssertEqual(CommandBar.complete("so"), "sort")
        XCTAssertEqual(CommandBar.complete("sort"), "sort")
        XCTAssertEqual(CommandBar.complete("expo"), "export ")
        XCTAssertEqual(CommandBar.complete("sort d"), "sort duration")
        XCTAssertEqual(CommandBar.complete("columns method,co"), "columns method,code")
        XCTAssertEqual(CommandBar.complete("flow.copyS"), "flow.copySwift ")
        XCTAssertEqual(CommandBar.complete("zzz"), "zzz")
        var state = Fixtures.mixedState()
        state.press(":")
        state.type("rev")
        state.press("tab")
        XCTAssertEqual(state.prompt?.text, "reverse ")
    }

    func testHistoryWalksBackAndForth() {
        var state = Fixtures.mixedState()
        _ = run("sort size", in: &state)
        _ = run("filter ~m GET", in: &state)
        state.press(":")
        state.type("draft")
        state.press("up")
        XCTAssertEqual(state.prompt?.text, "filter ~m GET")
        state.press("up", "up")
        XCTAssertEqual(state.prompt?.text, "sort size")
        state.press("down")
        XCTAssertEqual(state.prompt?.text, "filter ~m GET")
        state.press("down")
        XCTAssertEqual(state.prompt?.text, "draft")
    }
}

final class CopyAsTests: XCTestCase {
    func testSwiftLiteralEscapesWhatALiteralCannotHold() {
        XCTAssertEqual(SwiftCode.literal("a\"b\\c\nd\u{7}é\u{2028}"), #""a\"b\\c\nd\u{7}é\u{2028}""#)
        XCTAssertEqual(SwiftCode.literal(#"\(x)"#), #""\\(x)""#, "no interpolation")
    }

    func testHTTPieCommandShape() {
        let command = HTTPieCommand.make(for: Request(
            method: "PUT", url: "http://127.0.0.1:8080/items/1?q=a b",
            headers: [HTTPHeader(name: "Content-Type", value: "application/json"), HTTPHeader(name: "X-Empty", value: ""),
                      HTTPHeader(name: "Content-Length", value: "14")],
            body: CapturedBody(data: Data(#"{"name":"it's"}"#.utf8))))
        XCTAssertEqual(command, """
            http --ignore-stdin 'PUT' 'http://127.0.0.1:8080/items/1?q=a b' \\
              'Content-Type:application/json' \\
              'X-Empty;' \\
              --raw '{"name":"it'\\''s"}'
            """)
        let binary = HTTPieCommand.make(for: Request(method: "POST", url: "http://x/", body: CapturedBody(data: Data([0, 0xFF]))))
        XCTAssertEqual(binary, #"printf '\000\377' | http 'POST' 'http://x/'"#)
    }

    /// Compiles the Swift code for a request with swiftc, runs it against a
    /// loopback server and compares what the server received.
    func testSwiftCodeCompilesAndSendsTheRequest() throws {
        let swiftc = ["/usr/bin/swiftc", "/usr/local/bin/swiftc"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/swiftc" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        // The toolchain running these tests has swiftc: not finding it is a failure.
        guard let swiftc else { throw Prerequisite("swiftc not found in /usr/bin, /usr/local/bin or PATH") }
        let server = try OneShotHTTPRecorder()
        var body = Data("{\"name\":\"Zoë 東京\",\n\"note\":\"it's 100% \\\"quoted\\\" \\\\(x)\"}".utf8)
        body.append(contentsOf: [0x09])
        let request = Request(
            method: "PATCH", url: "http://127.0.0.1:\(server.port)/orders/7?q=caf%C3%A9&x=[1]",
            headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                      HTTPHeader(name: "X-Quote", value: #"it's "quoted" $HOME \(x)"#),
                      HTTPHeader(name: "X-Dup", value: "1"), HTTPHeader(name: "X-Dup", value: "2")],
            body: CapturedBody(data: body))
        let directory = NSTemporaryDirectory() + "netinspect-swift-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let code = SwiftCode.make(for: request)
        try code.write(toFile: directory + "/main.swift", atomically: true, encoding: .utf8)
        let compile = try ProgramRun.run([swiftc, directory + "/main.swift", "-o", directory + "/replay"])
        XCTAssertEqual(compile.status, 0, "swiftc refused:\n\(code)\n\(compile.output)")
        let replay = try ProgramRun.run([directory + "/replay"])
        XCTAssertEqual(replay.status, 0, replay.output)
        let received = try server.recorded(timeout: 30)
        XCTAssertEqual(received.method, "PATCH")
        XCTAssertEqual(received.target, "/orders/7?q=caf%C3%A9&x=%5B1%5D", "escapes kept, brackets encoded once (not %25-encoded again)")
        XCTAssertEqual(received.body, body)
        XCTAssertEqual(received.headers.first("Content-Type"), "application/json")
        XCTAssertEqual(received.headers.first("X-Quote"), #"it's "quoted" $HOME \(x)"#)
        XCTAssertEqual(received.headers.first("X-Dup"), "1,2", "URLRequest joins a repeated field, as the code says")
        XCTAssertTrue(code.contains("// URLRequest joins the values"), code)
        XCTAssertTrue(code.contains("are percent-encoded here"), code)
    }

    func testFoundationSafeURLKeepsWhatIsValid() {
        XCTAssertEqual(SwiftCode.foundationSafeURL("http://[::1]:8080/a b/é?x=[1]&y=%41"), "http://[::1]:8080/a%20b/%C3%A9?x=%5B1%5D&y=%41")
        XCTAssertEqual(SwiftCode.foundationSafeURL("https://api.example.com/v1/items?page=2"), "https://api.example.com/v1/items?page=2")
    }
}

final class MouseTests: XCTestCase {
    func testClickSelectsAndASecondClickOpens() {
        var state = Fixtures.mixedState()
        _ = Reducer.reduce(&state, .click(row: 2, column: 10))
        XCTAssertEqual(state.selection, 1)
        XCTAssertFalse(state.follows)
        _ = Reducer.reduce(&state, .click(row: 2, column: 10))
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 1)))
        _ = Reducer.reduce(&state, .click(row: 1, column: 14))
        XCTAssertEqual(state.mode, .detail(DetailState(sequence: 1, tab: .response)), "a click on a tab opens it")
    }

    func testClicksBelowTheRowsDoNothing() {
        var state = Fixtures.mixedState()
        _ = Reducer.reduce(&state, .click(row: 15, column: 3))
        XCTAssertEqual(state.selection, 5)
        _ = Reducer.reduce(&state, .click(row: 0, column: 3))
        XCTAssertEqual(state.selection, 5)
    }

    func testWheelMovesTheListAndScrollsText() {
        var state = Fixtures.mixedState()
        _ = Reducer.reduce(&state, .wheel(-3))
        XCTAssertEqual(state.selection, 2)
        state.press("?")
        _ = Reducer.reduce(&state, .wheel(3))
        XCTAssertEqual(state.helpScroll, 3)
    }
}

final class ListColumnTests: XCTestCase {
    private func header(_ state: AppState, width: Int) -> String {
        String(Renderer.render(state, size: Size(width: width, height: 24)).text.split(separator: "\n")[0])
    }

    func testHostColumnShowsThePortAndOPTIONSIsNotCut() {
        var state = AppState(size: Size(width: 120, height: 24), timeZone: Fixtures.utc)
        let messages: [Message] = [
            .flowStarted(Fixtures.started(1, method: "OPTIONS", url: "http://127.0.0.1:8080/a/very/long/path/that/needs/room")),
        ]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        let screen = Renderer.render(state, size: Size(width: 120, height: 24)).text
        let row = String(screen.split(separator: "\n")[1])
        XCTAssertTrue(row.range(of: "OPTIONS    … 127\\.0\\.0\\.1:8080 +/a/very/long/path/that/needs/room", options: .regularExpression) != nil, row)
        XCTAssertTrue(header(state, width: 120).contains("Method  Code Host"), header(state, width: 120))
    }

    func testNarrowTerminalsKeepThePathReadable() {
        let state = Fixtures.mixedState()
        for width in [60, 80, 100, 200] {
            let lines = Renderer.render(state, size: Size(width: width, height: 24)).text.split(separator: "\n")
            XCTAssertTrue(lines[1].contains("/v1/items/1"), "width \(width): \(lines[1])")
            XCTAssertTrue(lines.allSatisfy { DisplayWidth.of(String($0)) <= width })
        }
    }

    func testGraphQLOperationIsNamedInThePath() {
        var state = AppState(size: Size(width: 120, height: 24), timeZone: Fixtures.utc)
        let query = #"{"query":"query GetUser($id: ID!) { user(id: $id) { name } }","variables":{"id":"1"}}"#
        let mutation = #"{"query":"mutation { like(id: 1) }"}"#
        let messages: [Message] = [
            .flowStarted(Fixtures.started(1, method: "POST", url: "https://api.example.com/graphql", body: CapturedBody(data: Data(query.utf8)))),
            .flowStarted(Fixtures.started(2, method: "POST", url: "https://api.example.com/graphql", body: CapturedBody(data: Data(mutation.utf8)))),
            .flowStarted(Fixtures.started(3, method: "GET", url: "https://api.example.com/graphql?query=%7Bme%7Bid%7D%7D&operationName=Me")),
        ]
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: messages), at: Fixtures.epoch))
        let screen = Renderer.render(state, size: Size(width: 160, height: 24)).text
        XCTAssertTrue(screen.contains("/graphql  ⟨GetUser⟩"), screen)
        XCTAssertTrue(screen.contains("/graphql  ⟨mutation⟩"), screen)
        XCTAssertTrue(screen.contains("⟨Me⟩"), screen)
        XCTAssertEqual(GraphQL.name(inDocument: "  { me { id } }"), "query")
        XCTAssertNil(GraphQL.name(inDocument: "SELECT 1"))
    }
}
