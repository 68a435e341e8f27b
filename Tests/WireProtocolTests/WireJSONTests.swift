import Foundation
import XCTest
@testable import WireProtocol

/// WireJSON, the model's one codec: what it writes reads back the same, and
/// its own base64 and number writers write what Foundation would.
final class WireJSONTests: XCTestCase {
    func testRandomMessagesReadBackAsWritten() throws {
        var rng = SplitMix64(seed: 42)
        for message in Fixtures.conversation + (0..<600).map({ _ in RandomMessages.message(using: &rng) }) {
            XCTAssertEqual(try Message.decode(payload: FrameEncoder().payload(message)), message)
        }
    }

    /// The writer's own encoder against Foundation's: every length's tail
    /// (none, one or two bytes left), every byte value, and a slice of a
    /// larger Data (whose indices do not start at 0).
    func testBase64IsWrittenAsAQuotedStringWithNothingEscaped() {
        var rng = SplitMix64(seed: 47)
        let random = (0..<70).map { count in Data((0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
        let whole = Data(0...255)
        for data in (0..<4).map({ Data(repeating: 0xFB, count: $0) }) + random + [whole, whole[7..<200]] {
            var writer = JSONWriter()
            writer.base64(data)
            XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), "\"" + data.base64EncodedString() + "\"", "\(data.count) bytes")
        }
    }

    /// Numbers written without `description` must be exactly its text, or,
    /// below 1e-4 where it writes an exponent, its digits in fixed point.
    func testNumbersAreWrittenAsDescriptionWritesThem() {
        var rng = SplitMix64(seed: 45)
        var values: [Double] = [0.1, 0.25, -0.5, 1e-4, 0.0001234, 0.001, 1.5, 999_999.999999999, 1e6 + 0.5,
                                1_796_000_000.123456, 3_999_999_999.999999, 4e9 + 0.5, 1e-5, 0.1 + 0.2, 123.456, -42.000001]
        for _ in 0..<20_000 {
            let nanoseconds = Double(rng.next() % 100_000_000_000)
            values.append(nanoseconds / 1_000_000_000)                       // an offset, as the agent's clock makes them
            let microseconds = Double(1_700_000_000_000_000 + rng.next() % 300_000_000_000_000)
            values.append(microseconds / 1_000_000)                          // a start on the wall clock
            values.append(Double(bitPattern: rng.next() >> 2 | 0x3F00_0000_0000_0000))  // anything between about 1e-5 and 1e19
            values.append(Double(rng.next() % 100_000) / 1_000_000_000)      // a loopback phase: under 100 µs
        }
        for value in values {
            var writer = JSONWriter()
            writer.number(value)
            let text = String(decoding: writer.bytes, as: UTF8.self)
            XCTAssertEqual(Double(text), value, text)
            XCTAssertEqual(text, Self.expectedText(value))
        }
    }

    func testHeaderNamesMatchIgnoringASCIICaseOnly() {
        var rng = SplitMix64(seed: 48)
        for _ in 0..<5_000 {
            let bytes = (0..<Int(rng.next() % 24)).map { _ in UInt8(truncatingIfNeeded: 0x20 + rng.next() % 0x5F) }
            let name = String(decoding: bytes, as: UTF8.self)
            let flipped = String(decoding: bytes.map { $0 ^ (rng.next() % 2 == 0 ? 0 : 0x20) }, as: UTF8.self)
            XCTAssertEqual(HTTPHeader.namesMatch(name, flipped), name.lowercased() == flipped.lowercased(), "\(name) \(flipped)")
        }
        XCTAssertTrue(HTTPHeader.namesMatch("Authorization", "AUTHORIZATION"))
        XCTAssertFalse(HTTPHeader.namesMatch("a@", "A`"), "only letters fold: @ and ` differ by the case bit")
    }

    /// `description`'s text with an exponent below 1e-4 written out: `2.5e-05` as `0.000025`.
    private static func expectedText(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        let text = value.description
        guard let e = text.firstIndex(of: "e"), let exponent = Int(text[text.index(after: e)...]), exponent < 0 else { return text }
        let negative = text.hasPrefix("-")
        let digits = text[..<e].filter(\.isNumber)
        let written = (negative ? "-" : "") + "0." + String(repeating: "0", count: -exponent - 1) + digits
        // Only where nine decimals carry it exactly; otherwise description's own text.
        return digits.count - exponent - 1 <= 9 ? written : text
    }

    func testEveryControlCharacterAndQuoteSurvives() throws {
        let nasty = String((0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{2028}\u{FEFF}😀"
        var log = Fixtures.log
        log.request.url = nasty
        log.request.headers = [HTTPHeader(name: nasty, value: nasty)]
        XCTAssertEqual(try Message.decode(payload: FrameEncoder().payload(.flowStarted(log))), .flowStarted(log))
    }
}

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue {
        try Array(text.utf8).withUnsafeBufferPointer { buffer in try JSONParser.parse(buffer) }
    }

    private func assertInvalid(_ text: String, _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text), text, file: file, line: line) {
            XCTAssertTrue("\($0)".contains(reason), "'\($0)' should mention '\(reason)'", file: file, line: line)
        }
    }

    func testEscapesAndSurrogatePairs() throws {
        guard case .string(let text) = try parse(#" "a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00" "#) else { return XCTFail() }
        XCTAssertEqual(text, "a\"b\\c/d\u{8}\u{C}\n\r\té😀")
    }

    func testNumbers() throws {
        for (text, value) in [("0", 0.0), ("-12", -12), ("1.5e3", 1500), ("1763717923.123456", 1_763_717_923.123456),
                              ("-0.00025", -0.00025), ("123456789012345678", 1.2345678901234568e17), ("2E-2", 0.02)] {
            guard case .number(let parsed) = try parse(text) else { return XCTFail(text) }
            XCTAssertEqual(parsed, value, text)
        }
    }

    func testStructures() throws {
        guard case .object(let members) = try parse(#"{"a":[1,true,null,{}],"b":{"c":"d"},"e":false}"#) else { return XCTFail() }
        XCTAssertEqual(members.map(\.key), ["a", "b", "e"])
        guard case .array(let elements) = members[0].value else { return XCTFail() }
        XCTAssertEqual(elements.count, 4)
    }

    func testRejectsWhatRFC8259Rejects() {
        assertInvalid("", "unexpected end")
        assertInvalid("{", "expected a member name")
        assertInvalid(#"{"a":1,}"#, "expected a member name")
        assertInvalid("[1,]", "unexpected character")
        assertInvalid("01", "leading zero")
        assertInvalid("1.", "bad number")
        assertInvalid("-", "bad number")
        assertInvalid("1e", "bad number")
        assertInvalid("1e999", "out of range")
        assertInvalid(#"{"a":1} x"#, "unexpected data after")
        assertInvalid("\"abc", "unterminated string")
        assertInvalid("\"a\u{01}b\"", "control character")
        assertInvalid(#""\uD800""#, "unpaired surrogate")
        assertInvalid(#""\uDC00x""#, "unpaired surrogate")
        assertInvalid(#""\x""#, "unknown escape")
        assertInvalid("tru", "unexpected character")
        assertInvalid("NaN", "unexpected character")
    }

    func testInvalidUTF8InsideAStringIsRejected() {
        XCTAssertThrowsError(try [0x22, 0xC3, 0x28, 0x22].withUnsafeBufferPointer { try JSONParser.parse($0) }) {
            XCTAssertTrue("\($0)".contains("not valid UTF-8"))
        }
    }

    func testForEachElementStreamsTheArrayAtAPath() throws {
        let text = #"{"skip":{"entries":[9]},"log":{"version":"1.2","entries":[{"n":1},{"n":2},3],"after":[true]},"tail":null}"#
        var seen: [String] = []
        try Array(text.utf8).withUnsafeBufferPointer { buffer in
            try JSONParser.forEachElement(ofArrayAt: ["log", "entries"], in: buffer) { element in
                seen.append(element["n"]?.intValue.map(String.init) ?? element.typeName)
            }
        }
        XCTAssertEqual(seen, ["1", "2", "a number"], "only log.entries, in order, not the decoy skip.entries")
    }

    func testForEachElementReportsAMissingPathAndInvalidJSON() {
        for (text, reason) in [(#"{"log":{}}"#, "no array at log.entries"), (#"{"log":{"entries":{}}}"#, "no array at log.entries"),
                               (#"{"log":{"entries":[1,]}}"#, "unexpected character"), (#"{"log":{"entries":[]}} x"#, "unexpected data")] {
            XCTAssertThrowsError(try Array(text.utf8).withUnsafeBufferPointer { buffer in
                try JSONParser.forEachElement(ofArrayAt: ["log", "entries"], in: buffer) { _ in }
            }, text) { XCTAssertTrue("\($0)".contains(reason), "'\($0)' should mention '\(reason)'") }
        }
    }

    func testNestingIsBounded() {
        assertInvalid(String(repeating: "[", count: 10_000), "nested deeper than 64")
        XCTAssertNoThrow(try parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
    }
}

/// Random messages, every optional part present or not, for round trips.
enum RandomMessages {
    static func string(using rng: inout SplitMix64) -> String {
        let alphabet: [Character] = Array("abcXYZ09 /?&=%\"\\\n\t\u{1}\u{7F}éü東京😀\u{2028}")
        return String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    static func headers(using rng: inout SplitMix64) -> [HTTPHeader] {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in HTTPHeader(name: string(using: &rng), value: string(using: &rng)) }
    }

    static func body(using rng: inout SplitMix64) -> CapturedBody? {
        guard Bool.random(using: &rng) else { return nil }
        let data = Data((0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        return CapturedBody(data: data, size: data.count + Int.random(in: 0...5, using: &rng), isTruncated: Bool.random(using: &rng),
                            isDecoded: Bool.random(using: &rng))
    }

    static func phases(using rng: inout SplitMix64) -> TransferPhases? {
        guard Bool.random(using: &rng) else { return nil }
        return TransferPhases(blocked: offset(using: &rng), dns: offset(using: &rng), connect: offset(using: &rng),
                              tls: offset(using: &rng), send: offset(using: &rng), wait: offset(using: &rng),
                              receive: offset(using: &rng), source: Bool.random(using: &rng) ? string(using: &rng) : nil)
    }

    static func source(using rng: inout SplitMix64) -> CaptureSource? {
        guard Bool.random(using: &rng) else { return nil }
        return CaptureSource(client: .init(rawValue: string(using: &rng)),
                             path: Bool.random(using: &rng) ? .init(rawValue: string(using: &rng)) : nil,
                             operationID: Bool.random(using: &rng) ? string(using: &rng) : nil)
    }

    static func offset(using rng: inout SplitMix64) -> Double? {
        Bool.random(using: &rng) ? Double.random(in: 0...100, using: &rng) : nil
    }

    static func timing(using rng: inout SplitMix64) -> Timing {
        Timing(startedAt: Date(timeIntervalSince1970: Double.random(in: 0...2_000_000_000, using: &rng)),
               requestSent: offset(using: &rng), firstResponseByte: offset(using: &rng), finished: offset(using: &rng),
               phases: phases(using: &rng))
    }

    static func response(using rng: inout SplitMix64) -> Response {
        Response(statusCode: Int.random(in: 100...599, using: &rng), headers: headers(using: &rng), body: body(using: &rng),
                 mimeType: Bool.random(using: &rng) ? string(using: &rng) : nil)
    }

    static func hops(using rng: inout SplitMix64) -> [RedirectHop] {
        (0..<Int.random(in: 0...2, using: &rng)).map { _ in
            RedirectHop(statusCode: 301, from: string(using: &rng), to: string(using: &rng))
        }
    }

    static func grpcMessage(using rng: inout SplitMix64) -> GRPCMessage {
        GRPCMessage(direction: GRPCMessage.Direction.allCases.randomElement(using: &rng)!,
                    at: Double.random(in: 0...100, using: &rng), body: body(using: &rng) ?? CapturedBody(data: Data()))
    }

    static func grpcStatus(using rng: inout SplitMix64) -> GRPCStatus {
        GRPCStatus(code: Int.random(in: 0...20, using: &rng), message: Bool.random(using: &rng) ? string(using: &rng) : nil)
    }

    static func grpcCall(using rng: inout SplitMix64) -> GRPCCall? {
        guard Bool.random(using: &rng) else { return nil }
        return GRPCCall(service: string(using: &rng), method: string(using: &rng),
                        kind: Bool.random(using: &rng) ? GRPCCallKind.allCases.randomElement(using: &rng)! : nil,
                        messages: (0..<Int.random(in: 0...3, using: &rng)).map { _ in grpcMessage(using: &rng) },
                        droppedMessages: Int.random(in: 0...2, using: &rng),
                        status: Bool.random(using: &rng) ? grpcStatus(using: &rng) : nil, trailers: headers(using: &rng))
    }

    static func webSocketMessage(using rng: inout SplitMix64) -> WebSocketMessage {
        WebSocketMessage(direction: StreamDirection.allCases.randomElement(using: &rng)!, at: Double.random(in: 0...100, using: &rng),
                         opcode: WebSocketOpcode.allCases.randomElement(using: &rng)!,
                         body: body(using: &rng) ?? CapturedBody(data: Data()),
                         closeCode: Bool.random(using: &rng) ? Int.random(in: 1000...4999, using: &rng) : nil)
    }

    static func bodyParts(using rng: inout SplitMix64) -> BodyParts? {
        guard Bool.random(using: &rng) else { return nil }
        return BodyParts(marks: (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            BodyPartMark(direction: StreamDirection.allCases.randomElement(using: &rng)!, at: Double.random(in: 0...100, using: &rng),
                         offset: Int.random(in: 0...1000, using: &rng), size: Int.random(in: 0...1000, using: &rng))
        })
    }

    static func webSocketSession(using rng: inout SplitMix64) -> WebSocketSession? {
        guard Bool.random(using: &rng) else { return nil }
        return WebSocketSession(messages: (0..<Int.random(in: 0...3, using: &rng)).map { _ in webSocketMessage(using: &rng) },
                                droppedMessages: Int.random(in: 0...2, using: &rng))
    }

    static func message(using rng: inout SplitMix64) -> Message {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0:
            return .hello(Hello(protocolVersion: 1, agentName: string(using: &rng), agentVersion: string(using: &rng),
                                appName: string(using: &rng), processID: Int.random(in: 1...99_999, using: &rng),
                                hostName: string(using: &rng), token: Bool.random(using: &rng) ? string(using: &rng) : nil,
                                acceptsControl: Bool.random(using: &rng)))
        case 1:
            return .flowStarted(NetworkLog(
                sessionID: Int.random(in: 0...9, using: &rng), taskID: Int.random(in: 0...999, using: &rng),
                request: Request(method: string(using: &rng), url: string(using: &rng), headers: headers(using: &rng), body: body(using: &rng),
                                 clientHeaders: headers(using: &rng)),
                response: Bool.random(using: &rng) ? response(using: &rng) : nil, timing: timing(using: &rng), redirects: hops(using: &rng),
                error: Bool.random(using: &rng) ? FlowError(domain: string(using: &rng), code: -1001, message: string(using: &rng)) : nil,
                state: FlowState.allCases.randomElement(using: &rng)!, source: source(using: &rng),
                changes: Bool.random(using: &rng) ? FlowChanges(
                    rules: [string(using: &rng)], originalURL: Bool.random(using: &rng) ? string(using: &rng) : nil,
                    originalHeaders: Bool.random(using: &rng) ? headers(using: &rng) : nil,
                    mockedFrom: Bool.random(using: &rng) ? string(using: &rng) : nil,
                    originalMethod: Bool.random(using: &rng) ? string(using: &rng) : nil,
                    originalBody: Bool.random(using: &rng) ? body(using: &rng) : nil,
                    serverReplay: Bool.random(using: &rng) ? ServerReplayMark(
                        recordedID: Bool.random(using: &rng) ? FlowID() : nil, left: Int.random(in: 0...9_999, using: &rng),
                        extra: Bool.random(using: &rng) ? "404" : nil, waited: Bool.random(using: &rng) ? 0.25 : nil) : nil,
                    composed: Bool.random(using: &rng) ? true : nil,
                    condition: Bool.random(using: &rng) ? AppliedCondition(
                        rule: string(using: &rng), latencyMilliseconds: Bool.random(using: &rng) ? Int.random(in: 1...9_999, using: &rng) : nil,
                        downBitsPerSecond: Bool.random(using: &rng) ? Int.random(in: 1...1 << 30, using: &rng) : nil,
                        upBitsPerSecond: Bool.random(using: &rng) ? Int.random(in: 1...1 << 30, using: &rng) : nil,
                        failure: Bool.random(using: &rng) ? string(using: &rng) : nil) : nil) : nil,
                grpc: grpcCall(using: &rng), parts: bodyParts(using: &rng), webSocket: webSocketSession(using: &rng)))
        case 2:
            return .flowResponse(FlowResponse(id: FlowID(), response: response(using: &rng), timing: timing(using: &rng), redirects: hops(using: &rng)))
        case 3:
            return .flowFinished(FlowFinished(
                id: FlowID(), state: FlowState.allCases.randomElement(using: &rng)!,
                response: Bool.random(using: &rng) ? response(using: &rng) : nil, requestBody: body(using: &rng),
                error: Bool.random(using: &rng) ? FlowError(domain: "d", code: Int.random(in: -2000...0, using: &rng), message: string(using: &rng)) : nil,
                timing: timing(using: &rng), redirects: hops(using: &rng),
                clientHeaders: Bool.random(using: &rng) ? headers(using: &rng) : nil,
                grpc: Bool.random(using: &rng) ? GRPCOutcome(status: grpcStatus(using: &rng), trailers: headers(using: &rng),
                                                             droppedMessages: Int.random(in: 0...2, using: &rng)) : nil,
                webSocket: Bool.random(using: &rng) ? WebSocketOutcome(droppedMessages: Int.random(in: 0...2, using: &rng)) : nil))
        case 4:
            return .grpcMessage(GRPCMessageEvent(id: FlowID(), message: grpcMessage(using: &rng)))
        case 5:
            return .bodyPart(BodyPartEvent(id: FlowID(), part: BodyPart(
                direction: StreamDirection.allCases.randomElement(using: &rng)!, at: Double.random(in: 0...100, using: &rng),
                offset: Int.random(in: 0...10_000, using: &rng), body: body(using: &rng) ?? CapturedBody(data: Data()))))
        case 6:
            return .webSocketMessage(WebSocketMessageEvent(id: FlowID(), message: webSocketMessage(using: &rng)))
        default:
            return .status(AgentStatus(droppedEvents: Int.random(in: 0...1_000_000, using: &rng), queuedEvents: Int.random(in: 0...100, using: &rng)))
        }
    }
}

final class JSONLineTests: XCTestCase {
    func testJSONLineRoundTripsAndIsTheFlowMemberOfFlowStarted() throws {
        var rng = SplitMix64(seed: 9)
        for _ in 0..<100 {
            guard case .flowStarted(let log) = RandomMessages.message(using: &rng) else { continue }
            let line = log.jsonLine()
            XCTAssertFalse(line.contains(UInt8(ascii: "\n")), "one flow, one line")
            XCTAssertEqual(try NetworkLog(jsonLine: line), log)
        }
    }

    func testMalformedLineNamesTheField() {
        XCTAssertThrowsError(try NetworkLog(jsonLine: Data(#"{"id":"6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B"}"#.utf8))) {
            XCTAssertTrue("\($0)".contains("missing field 'sessionID'"), "\($0)")
        }
    }
}
