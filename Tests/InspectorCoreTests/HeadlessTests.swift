import Foundation
@testable import InspectorCore
import InspectorIngest
import TestSupport
import WireProtocol
import XCTest

final class FlowAssemblerTests: XCTestCase {
    func testAFlowComesOutOnceWhenItFinishesWithItsAgent() {
        var assembler = FlowAssembler()
        var out: [FlowAssembler.Finished] = []
        for event in Fixtures.connection(messages: [
            .flowStarted(Fixtures.started(1)), .flowStarted(Fixtures.started(2)),
            .flowFinished(Fixtures.finished(2, status: 404)), .flowFinished(Fixtures.finished(1)),
            .flowFinished(Fixtures.finished(1)),
        ]) { out += assembler.apply(event) }
        XCTAssertEqual(out.map(\.log.id), [Fixtures.id(2), Fixtures.id(1)], "in finishing order, each once")
        XCTAssertEqual(out.first?.log.response?.statusCode, 404)
        XCTAssertEqual(out.first?.log.state, .completed)
        XCTAssertEqual(out.first?.agent?.appName, "orders-service")
    }

    func testFinishForAnUnknownFlowIsIgnored() {
        var assembler = FlowAssembler()
        let out = Fixtures.connection(messages: [.flowFinished(Fixtures.finished(7))]).flatMap { assembler.apply($0) }
        XCTAssertTrue(out.isEmpty)
    }

    func testInProgressFlowsAreBounded() {
        var assembler = FlowAssembler(maximumPending: 3)
        let events = Fixtures.connection(messages: (1...10).map { .flowStarted(Fixtures.started($0)) })
        for event in events { _ = assembler.apply(event) }
        XCTAssertEqual(assembler.forgottenFlows, 7)
        let out = Fixtures.connection(messages: [.flowFinished(Fixtures.finished(1)), .flowFinished(Fixtures.finished(10))])
            .flatMap { assembler.apply($0) }
        XCTAssertEqual(out.map(\.log.id), [Fixtures.id(10)], "the oldest were forgotten, the newest kept")
    }

    /// What headless acknowledges: a flow's events once it comes out, events
    /// it has no flow for at once, forgotten flows' events when forgotten;
    /// never the events of a flow still being assembled.
    func testSettledEventsAreThoseOfFinishedDiscardedOrForgottenFlows() {
        var assembler = FlowAssembler(maximumPending: 2)
        let first = ConnectionID(1), second = ConnectionID(2)
        func apply(_ events: [InboxEvent]) { for event in events { _ = assembler.apply(event) } }
        apply(Fixtures.connection(1, messages: [.flowStarted(Fixtures.started(1)), .status(AgentStatus(droppedEvents: 1))]))
        XCTAssertEqual(assembler.takeSettledEvents(), [:], "a flow being assembled is not taken yet; status is no event")
        apply(Fixtures.connection(2, messages: [.flowFinished(Fixtures.finished(1))]))
        XCTAssertEqual(assembler.takeSettledEvents(), [first: 1, second: 1], "each event to the connection it came on")
        XCTAssertEqual(assembler.takeSettledEvents(), [:], "taken once")
        apply(Fixtures.connection(1, messages: [.flowFinished(Fixtures.finished(9))]))
        XCTAssertEqual(assembler.takeSettledEvents(), [first: 1], "no flow for it: discarded, so taken")
        apply(Fixtures.connection(1, messages: (2...4).map { .flowStarted(Fixtures.started($0)) }))
        XCTAssertEqual(assembler.takeSettledEvents(), [first: 1], "the oldest of three pending was forgotten")
    }

    func testAFlowThatStartsFinishedComesOutAtOnce() {
        var assembler = FlowAssembler()
        var log = Fixtures.started(1)
        log.apply(Fixtures.finished(1))
        XCTAssertEqual(Fixtures.connection(messages: [.flowStarted(log)]).flatMap { assembler.apply($0) }.count, 1)
    }
}

final class DumpFormatTests: XCTestCase {
    private func finished(_ event: FlowFinished, from log: NetworkLog) -> NetworkLog {
        var log = log
        log.apply(event)
        return log
    }

    func testCompletedFlowLine() {
        let log = finished(Fixtures.finished(1, status: 201, body: "12345", duration: 0.021), from: Fixtures.started(1, method: "POST"))
        XCTAssertEqual(DumpFormat.line(log, in: Fixtures.utc),
                       "09:30:01.000 POST   201 https://api.example.com/v1/items/1?page=2  5 B  21ms")
    }

    func testFailedFlowShowsTheError() {
        let log = finished(Fixtures.failed(3), from: Fixtures.started(3))
        XCTAssertEqual(DumpFormat.line(log, in: Fixtures.utc),
                       "09:30:03.000 GET    ERR https://api.example.com/v1/items/3?page=2  -  1m00s  The request timed out.")
    }

    func testControlCharactersCannotBreakTheLineOrDriveTheTerminal() {
        let log = Fixtures.started(1, url: "http://x/a\nb\u{1B}[2Jc")
        let line = DumpFormat.line(log, in: Fixtures.utc)
        XCTAssertFalse(line.contains("\n") || line.contains("\u{1B}"), line)
        XCTAssertTrue(line.contains("http://x/a b [2Jc"), line)
        // Replaced byte by byte: characters of several bytes are kept whole.
        let wide = DumpFormat.line(Fixtures.started(2, url: "http://x/é\u{7F}東\t🚀"), in: Fixtures.utc)
        XCTAssertTrue(wide.contains("http://x/é 東 🚀"), wide)
    }
}

final class FlowFileTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-flowfile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private var flows: [NetworkLog] {
        var first = Fixtures.started(1)
        first.apply(Fixtures.finished(1))
        var second = Fixtures.started(2, method: "PUT", body: CapturedBody(data: Data([0, 1, 2])))
        second.apply(Fixtures.failed(2))
        return [first, second]
    }

    func testSavedLinesReadBackAsTheSameFlows() throws {
        let path = directory.appendingPathComponent("session.jsonl").path
        let writer = try FlowLineWriter(path: path)
        for flow in flows { XCTAssertNil(writer.write(flow)) }
        XCTAssertEqual(writer.writtenFlows, 2)
        XCTAssertEqual(try FlowFile.read(path: path), flows)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "captured traffic may hold secrets")
    }

    func testSavingAppendsToAnExistingFile() throws {
        let path = directory.appendingPathComponent("session.jsonl").path
        try FlowLineWriter(path: path).write(flows[0])
        try FlowLineWriter(path: path).write(flows[1])
        XCTAssertEqual(try FlowFile.read(path: path), flows)
    }

    func testHARFilesAreRecognisedByContent() throws {
        let path = directory.appendingPathComponent("export.json").path
        try HARFile.write(flows, to: path)
        XCTAssertEqual(try FlowFile.read(path: path), flows)
    }

    func testABadLineIsNamed() throws {
        var data = flows[0].jsonLine()
        data.append(contentsOf: Array("\n{\"id\":\"x\"}\n".utf8))
        XCTAssertThrowsError(try FlowFile.read(data, name: "f.jsonl")) {
            XCTAssertTrue("\($0)".hasPrefix("f.jsonl: line 2:"), "\($0)")
        }
    }

    func testAFullDiskIsReportedOnceAndTheWriterStops() throws {
        // Every Linux has /dev/full (devtmpfs, and containers' default /dev).
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw Prerequisite("no /dev/full on this system") }
        let writer = try FlowLineWriter(path: "/dev/full")
        let failure = try XCTUnwrap(writer.write(flows[0]), "writing to a full device must fail")
        XCTAssertTrue(failure.contains("--save /dev/full"), failure)
        XCTAssertNil(writer.write(flows[1]), "reported once")
        XCTAssertEqual(writer.writtenFlows, 0)
    }

    /// For the UI: the writer opens "failed", says why once, writes nothing.
    func testOpeningAnUnwritablePathGivesAFailedWriterInsteadOfAnError() {
        let writer = FlowLineWriter.opening(path: "/proc/netinspect-cannot-create")
        let failure = writer.failure ?? ""
        XCTAssertTrue(failure.hasPrefix("--save /proc/netinspect-cannot-create: cannot create the file ("), failure)
        XCTAssertTrue(failure.hasSuffix("; not saving"), failure)
        XCTAssertNil(writer.write(flows[0]), "the failure was reported at opening; nothing more to say")
        XCTAssertEqual(writer.writtenFlows, 0)
    }

    func testOpeningAWritablePathWritesAsInitDoes() throws {
        let path = NSTemporaryDirectory() + "ni-opening-\(getpid()).jsonl"
        defer { unlink(path) }
        let writer = FlowLineWriter.opening(path: path)
        XCTAssertNil(writer.failure)
        XCTAssertNil(writer.write(flows[0]))
        XCTAssertEqual(try FlowFile.read(path: path).map(\.id), [flows[0].id])
    }

    func testAnUnwritablePathIsAnErrorAtStart() {
        XCTAssertThrowsError(try FlowLineWriter(path: "/proc/netinspect-cannot-create")) {
            XCTAssertTrue("\($0)".contains("/proc/netinspect-cannot-create"), "\($0)")
        }
    }
}

final class ExportKeyTests: XCTestCase {
    func testCopyAsCurlShowsTheCommandAndAsksForTheClipboard() {
        var state = Fixtures.mixedState()
        state.press("g")
        let effect = state.press("C")
        let log = state.session.store[state.selection!]!.log
        XCTAssertEqual(effect, .copyToClipboard(CurlCommand.make(for: log.request)))
        XCTAssertEqual(state.overlay?.lines.first?.hasPrefix("curl "), true)
        state.press("q")
        XCTAssertNil(state.overlay, "q closes the overlay, not the program")
        XCTAssertEqual(state.press("enter", "C"), effect, "the detail view copies the flow it shows")
    }

    func testExportWritesOnlyTheShownFlows() {
        var state = Fixtures.mixedState()
        state.enter("~c 5xx", after: "f")
        state.press("W")
        guard case .exportHAR(let flows, _, _) = state.press("enter") else { return XCTFail("W, then enter, exports HAR") }
        XCTAssertFalse(flows.isEmpty)
        XCTAssertEqual(flows.count, state.rows.count)
        XCTAssertTrue(flows.allSatisfy { ($0.response?.statusCode ?? 0) >= 500 })
    }

    func testNotifyAndApplyFilterActions() throws {
        var state = Fixtures.mixedState()
        _ = Reducer.reduce(&state, .notify("Wrote 3 flows", isError: false))
        XCTAssertEqual(state.notice?.text, "Wrote 3 flows")
        XCTAssertFalse(state.session.events.contains { $0.text == "Wrote 3 flows" }, "news is not an event")
        _ = Reducer.reduce(&state, .tick(Date(timeIntervalSince1970: 1_000)))
        _ = Reducer.reduce(&state, .notify("--save /x: cannot create the file; not saving", isError: true))
        XCTAssertEqual(state.notice?.isError, true)
        let event = try XCTUnwrap(state.session.events.last, "an error stays in the event log after the notice goes")
        XCTAssertEqual(event.text, "--save /x: cannot create the file; not saving")
        XCTAssertEqual(event.level, .error)
        XCTAssertEqual(event.date, Date(timeIntervalSince1970: 1_000))
        _ = Reducer.reduce(&state, .applyFilter("~m DELETE"))
        XCTAssertEqual(state.filterText, "~m DELETE")
        XCTAssertEqual(state.rows.count, 1)
    }
}

final class RendererEscapeTests: XCTestCase {
    func testEscapeSequencesInCapturedDataNeverReachTheTerminal() {
        var state = AppState(size: Size(width: 120, height: 30), timeZone: Fixtures.utc)
        let hostile = "http://x/\u{1B}]52;c;cHduZWQ=\u{07}\u{1B}[2J"
        _ = Reducer.reduce(&state, .inbox(Fixtures.connection(messages: [
            .flowStarted(Fixtures.started(1, url: hostile, headers: [HTTPHeader(name: "X-Evil", value: "\u{1B}[31mred\u{9B}")])),
            .flowFinished(Fixtures.finished(1, body: "before\u{1B}[?1049lafter", contentType: "text/plain")),
        ]), at: Fixtures.epoch))
        for keys in [[], ["enter"], ["enter", "2"]] {
            var shown = state
            for key in keys { shown.press(key) }
            let text = Renderer.render(shown, size: shown.size).text
            XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B },
                           "keys \(keys): a control character reached the screen:\n\(text)")
        }
    }
}
