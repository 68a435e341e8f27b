import Foundation
@testable import InspectorCore
import ProtobufWire
import TestSupport
import WireProtocol
import XCTest

/// gRPC calls in the list, the detail view's gRPC tab, `--dump` and HAR.
final class GRPCViewTests: XCTestCase {
    private func screen(_ state: AppState, size: Size = Size(width: 120, height: 30)) -> [String] {
        Renderer.render(state, size: size).text.components(separatedBy: "\n")
    }

    private func row(_ lines: [String], containing text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        guard let row = lines.first(where: { $0.contains(text) }) else {
            XCTFail("no row with \(text) in\n\(lines.joined(separator: "\n"))", file: file, line: line)
            return ""
        }
        return row
    }

    private func logs() throws -> [NetworkLog] {
        let state = try GRPCFixtures.state()
        return state.rows.compactMap { state.session.store[$0]?.log }
    }

    // MARK: List

    func testTheListNamesServiceAndMethodAndTheStatusNotHTTP200() throws {
        let lines = screen(try GRPCFixtures.state())
        let ok = row(lines, containing: "echo.Echo/Get ")
        XCTAssertTrue(ok.contains("gRPC"), ok)
        XCTAssertTrue(ok.contains(" OK "), ok)
        XCTAssertFalse(ok.contains("200"), ok)
        XCTAssertTrue(ok.contains("unary"), ok)
        let notFound = row(lines, containing: "echo.Echo/Get  NOT_FOUND")
        XCTAssertTrue(notFound.contains("✗5"), notFound)
        XCTAssertFalse(notFound.contains("200"), notFound)
        XCTAssertTrue(row(lines, containing: "echo.Echo/Collect  DEADLINE_EXCEEDED").contains("✗4"))
        let streaming = row(lines, containing: "echo.Echo/Expand")
        XCTAssertTrue(streaming.contains("server str"), streaming)
        XCTAssertFalse(streaming.contains("200"), "a call still running has no status yet, and shows no HTTP one: \(streaming)")
        XCTAssertTrue(streaming.contains("64 B"), "two response messages of 32 bytes: \(streaming)")
    }

    func testAFailedCallIsStyledAsAnErrorAndAGoodOneAsSuccess() throws {
        var state = try GRPCFixtures.state()
        state.press("g", "j", "j")   // the running stream is selected; the others keep their styles
        let screen = Renderer.render(state, size: Size(width: 120, height: 30))
        let lines = screen.text.components(separatedBy: "\n")
        func styles(inRowContaining text: String) -> Set<Style> {
            guard let row = lines.firstIndex(where: { $0.contains(text) }) else { return [] }
            return Set((0..<screen.size.width).map { screen[row, $0].style })
        }
        XCTAssertTrue(styles(inRowContaining: "NOT_FOUND").contains(.status5xx))
        XCTAssertTrue(styles(inRowContaining: "DEADLINE_EXCEEDED").contains(.status5xx))
        XCTAssertTrue(styles(inRowContaining: "echo.Echo/Get ").contains(.status2xx))
        XCTAssertFalse(styles(inRowContaining: "echo.Echo/Get ").contains(.status5xx))
    }

    func testListSnapshot() throws {
        var state = try GRPCFixtures.state()
        state.press("g")
        assertSnapshot(state, named: "grpc-list-120x30", size: Size(width: 120, height: 30))
    }

    // MARK: --dump

    func testDumpShowsGRPCTheStatusNameAndTheMessageOfAFailure() throws {
        let lines = try logs().map { DumpFormat.line($0, in: Fixtures.utc) }
        XCTAssertEqual(lines[0], "09:30:01.000 gRPC    OK http://127.0.0.1:9000/echo.Echo/Get  32 B  10ms")
        XCTAssertEqual(lines[1], "09:30:02.000 gRPC   NOT_FOUND http://127.0.0.1:9000/echo.Echo/Get  -  7ms  no such echo")
        XCTAssertEqual(lines[3], "09:30:04.000 gRPC   DEADLINE_EXCEEDED http://127.0.0.1:9000/echo.Echo/Collect  -  10ms  deadline exceeded after 1s")
    }

    // MARK: Detail

    func testTheGRPCTabExistsOnlyForCalls() throws {
        var state = try GRPCFixtures.state()
        state.press("g", "enter", "4")
        guard case .detail(let detail) = state.mode else { return XCTFail("not in the detail view") }
        XCTAssertEqual(detail.tab, .grpc)
        state.press("tab")
        guard case .detail(let messages) = state.mode else { return XCTFail("left the detail view") }
        XCTAssertEqual(messages.tab, .messages, "a call's messages are in the messages tab too, beside other streams'")
        state.press("tab")
        guard case .detail(let wrapped) = state.mode else { return XCTFail("left the detail view") }
        XCTAssertEqual(wrapped.tab, .request, "tab after the last tab wraps to the first")

        var plain = Fixtures.mixedState()
        plain.press("g", "enter", "3", "tab")
        guard case .detail(let http) = plain.mode else { return XCTFail("not in the detail view") }
        XCTAssertEqual(http.tab, .request, "an HTTP flow has three tabs")
        plain.press("4")
        XCTAssertEqual(plain.notice?.isError, true)
        XCTAssertFalse(Renderer.render(plain, size: .minimum).text.contains("4 gRPC"), "no fourth tab drawn")
    }

    func testTheTabListsMessagesInOrderDecodedRawWithoutASchema() throws {
        var state = try GRPCFixtures.state()
        state.press("g", "enter", "4")
        let text = screen(state, size: Size(width: 120, height: 60)).joined(separator: "\n")
        for expected in [
            "Call      echo.Echo/Get  unary", "Status    OK (0)", "Messages (2)  1 request, 1 response",
            "+2.0 ms  55 B", "+5.0 ms  32 B",
            #"1: "hello, gRPC"   string"#, "2: 18446744073709551614   varint · int64 -2", "4: {   message",
            "Trailers (1)", "grpc-status: 0", "--proto FILE.pb names them",
        ] {
            XCTAssertTrue(text.contains(expected), "\(expected) missing from\n\(text)")
        }
        let request = try XCTUnwrap(text.range(of: "→ request 1")), response = try XCTUnwrap(text.range(of: "← response 1"))
        XCTAssertLessThan(request.lowerBound, response.lowerBound)
    }

    func testWithADescriptorSetFieldsAndEnumValuesAreNamedByTheMethodsTypes() throws {
        var state = try GRPCFixtures.state(schema: try GRPCFixtures.schema())
        state.press("g", "enter", "4")
        let text = screen(state, size: Size(width: 120, height: 60)).joined(separator: "\n")
        for expected in [
            "Schema    echo.EchoRequest → echo.EchoResponse  (from --proto)",
            "55 B  echo.EchoRequest", "32 B  echo.EchoResponse",
            "mood (3): GRUMPY (2)   echo.Mood", "ids (5): [1, 2, 300]   packed repeated int32", "mood (4): HAPPY (1)   echo.Mood",
            "checksum (3): 3735928559   fixed32",
        ] {
            XCTAssertTrue(text.contains(expected), "\(expected) missing from\n\(text)")
        }
    }

    func testAFailedCallShowsItsStatusMessageAndTheMessagesTheAgentDidNotKeep() throws {
        var state = try GRPCFixtures.state()
        state.press("G", "enter", "4")
        let text = screen(state, size: Size(width: 120, height: 60)).joined(separator: "\n")
        XCTAssertTrue(text.contains("Status    DEADLINE_EXCEEDED (4)  deadline exceeded after 1s"), text)
        XCTAssertTrue(text.contains("3 more messages went by that the agent did not keep"), text)
        XCTAssertTrue(text.contains("Messages (2)  2 requests, 0 responses"), text)
    }

    func testACallStillRunningSaysSo() throws {
        var state = try GRPCFixtures.state()
        state.press("g", "j", "j", "enter", "4")
        let text = screen(state, size: Size(width: 120, height: 60)).joined(separator: "\n")
        XCTAssertTrue(text.contains("Status    not finished yet"), text)
        XCTAssertTrue(text.contains("← response 2"), text)
    }

    func testATruncatedMessageIsShownAsFarAsItWasKept() {
        var log = NetworkLog(request: Request(method: "POST", url: "http://h/echo.Echo/Get"), timing: Timing(startedAt: Fixtures.epoch))
        log.grpc = GRPCCall(service: "echo.Echo", method: "Get", messages: [
            GRPCMessage(direction: .request, at: 0, body: CapturedBody(data: Data([0x0A, 0x10, 0x61, 0x62]), size: 18, isTruncated: true)),
        ])
        let text = DetailContent.grpc(log, schema: ProtoSchema(), dropped: false).map(\.text).joined(separator: "\n")
        XCTAssertTrue(text.contains("first 4 B kept"), text)
        XCTAssertTrue(text.contains("cut short by the capture limit: length at byte 1 declares 16 bytes but only 2 remain"), text)
        XCTAssertTrue(text.contains("0a 10 61 62"), text)
    }

    func testDetailSnapshots() throws {
        var state = try GRPCFixtures.state(schema: try GRPCFixtures.schema())
        state.press("g", "enter", "4")
        assertSnapshot(state, named: "grpc-detail-schema-100x40", size: Size(width: 100, height: 40))
        var raw = try GRPCFixtures.state()
        raw.press("g", "j", "enter", "4")
        assertSnapshot(raw, named: "grpc-detail-raw-80x24")
    }

    // MARK: --json

    func testJSONLinesCarryTheWholeCallAsAssembledFromItsEvents() throws {
        var assembler = FlowAssembler()
        let finished = try Fixtures.connection(messages: GRPCFixtures.messages()).flatMap { assembler.apply($0) }.map(\.log)
        XCTAssertEqual(finished.count, 3, "the running stream is not finished")
        let get = try XCTUnwrap(finished.first)
        XCTAssertEqual(get.grpc?.messages.map(\.direction), [.request, .response])
        XCTAssertEqual(get.grpc?.status, GRPCStatus(code: 0))
        XCTAssertEqual(get.grpc?.trailers, [HTTPHeader(name: "grpc-status", value: "0")])
        XCTAssertEqual(finished.last?.grpc?.droppedMessages, 3)
        for log in finished {
            let read = try NetworkLog(jsonLine: log.jsonLine())
            XCTAssertEqual(read.grpc, log.grpc)
        }
    }

    // MARK: HAR

    func testHARCarriesTheFramesAndTheCallAndReadsBackTheSameFlow() throws {
        let flows = try logs().filter { $0.state.isFinal }
        let data = try HARFile.encode(flows)
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entry = try XCTUnwrap(((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let request = try XCTUnwrap(entry["request"] as? [String: Any])
        let postData = try XCTUnwrap(request["postData"] as? [String: Any])
        XCTAssertEqual(postData["mimeType"] as? String, "application/grpc")
        XCTAssertEqual(request["httpVersion"] as? String, "HTTP/2")
        let frames = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(postData["text"] as? String)))
        let message = try GRPCFixtures.bytes("request.bin")
        XCTAssertEqual([UInt8](frames), [0, 0, 0, 0, UInt8(message.count)] + message)
        let content = try XCTUnwrap((entry["response"] as? [String: Any])?["content"] as? [String: Any])
        XCTAssertEqual(content["mimeType"] as? String, "application/grpc")
        let ours = try XCTUnwrap((entry["_netinspect"] as? [String: Any])?["grpc"] as? [String: Any])
        XCTAssertEqual(ours["service"] as? String, "echo.Echo")

        let read = try HARFile.decode(data)
        XCTAssertEqual(read.map(\.grpc), flows.map(\.grpc))
        XCTAssertEqual(read.map(\.request.body), flows.map(\.request.body), "the frames are not taken for a request body")
        XCTAssertEqual(read.map { $0.response?.body }, flows.map { $0.response?.body })
    }
}
