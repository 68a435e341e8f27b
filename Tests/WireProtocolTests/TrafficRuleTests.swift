import Foundation
import XCTest
@testable import WireProtocol

final class TrafficRuleTests: XCTestCase {
    func testTwoPartsHaveNoFilterAndThreeHaveOne() throws {
        let plain = try TrafficRule(.mapRemote, spec: "|api.example.com|127.0.0.1:8080")
        XCTAssertEqual(plain, TrafficRule(kind: .mapRemote, pattern: "api.example.com", replacement: "127.0.0.1:8080"))
        let filtered = try TrafficRule(.mapLocal, spec: "#~m GET#example.com/static#./static")
        XCTAssertEqual(filtered.filter, "~m GET")
        XCTAssertEqual(filtered.pattern, "example.com/static")
        XCTAssertEqual(filtered.replacement, "./static")
        let header = try TrafficRule(.modifyHeaders, spec: "/~d example.com/X-Env/staging")
        XCTAssertEqual(header, TrafficRule(kind: .modifyHeaders, filter: "~d example.com", pattern: "X-Env", replacement: "staging"))
    }

    func testAnEmptyHeaderValueIsAllowedAndMeansRemove() throws {
        XCTAssertEqual(try TrafficRule(.modifyHeaders, spec: "/User-Agent/").replacement, "")
    }

    func testTheSpecReadsBackAsTheSameRule() throws {
        for (kind, spec) in [(TrafficRule.Kind.mapRemote, "|~m POST|https://a\\.example/(.*)|http://127.0.0.1:9/\\1"),
                             (.mapLocal, "|/api/items|/tmp/items.json"), (.modifyHeaders, "/X-A/1")] {
            let rule = try TrafficRule(kind, spec: spec)
            XCTAssertEqual(try TrafficRule(kind, spec: rule.spec), rule, spec)
        }
    }

    func testBadSpecsSayWhatIsWrong() {
        let cases: [(TrafficRule.Kind, String, String)] = [
            (.mapRemote, "", "empty rule"),
            (.mapRemote, "a|b|c", "must be a symbol"),
            (.mapRemote, "|only-one", "expected 2 or 3 parts"),
            (.mapRemote, "|a|b|c|d", "found 4"),
            (.mapRemote, "||x", "URL pattern is empty"),
            (.mapLocal, "|x|", "path is empty"),
            (.modifyHeaders, "//v", "header name is empty"),
        ]
        for (kind, spec, expected) in cases {
            XCTAssertThrowsError(try TrafficRule(kind, spec: spec), spec) { error in
                XCTAssertTrue("\(error)".contains(expected), "'\(spec)': \(error)")
            }
        }
    }

    private func sampleRules() throws -> [TrafficRule] {
        var local = try TrafficRule(.mapLocal, spec: "|example.com/static|./static")
        local.files = [TrafficRule.LocalFile(path: "a/b.json", contentType: "application/json", data: Data([0, 1, 0xFF, 0x7B]))]
        return [try TrafficRule(.mapRemote, spec: "|~m GET|api\\.example\\.com|127.0.0.1:8080"), local,
                try TrafficRule(.modifyHeaders, spec: "/X-Name/Zoë 東京")]
    }

    func testRulesRoundTripOneByteAtATimeBetweenReceipts() throws {
        let rules = try sampleRules()
        var stream = Receipt(events: 0).frame()
        stream.append(ViewerMessage.rules(rules).frame())
        stream.append(ViewerMessage.rules([]).frame())
        stream.append(Receipt(events: 3).frame())
        var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
        var messages: [ViewerMessage] = []
        for byte in stream {
            decoder.append(contentsOf: [byte])
            while let message = try decoder.next() { messages.append(message) }
        }
        XCTAssertEqual(messages, [.receipt(Receipt(events: 0)), .rules(rules), .rules([]), .receipt(Receipt(events: 3))])
    }

    func testAnAgentThatDoesNotAcceptControlNeverReadsRules() throws {
        var stream = ViewerMessage.rules(try sampleRules()).frame()
        stream.append(contentsOf: FrameEncoder.frame(payload: Data(#"{"type":"rules","rules":"garbage"}"#.utf8)))
        stream.append(Receipt(events: 2).frame())
        var receipts = ReceiptDecoder(maximumFrameSize: 1 << 20)
        receipts.append(contentsOf: stream)
        XCTAssertEqual(try receipts.next(), Receipt(events: 2))
        var messages = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: false)
        messages.append(contentsOf: stream)
        XCTAssertEqual(try messages.next(), .receipt(Receipt(events: 2)))
    }

    func testMalformedRulesAreErrors() {
        let oneRule = #"{"kind":"map-remote","pattern":"a","replacement":"b"}"#
        let tooMany = "{\"type\":\"rules\",\"rules\":[" + Array(repeating: oneRule, count: 257).joined(separator: ",") + "]}"
        let payloads = [
            #"{"type":"rules"}"#,
            #"{"type":"rules","rules":[{"kind":"teleport","pattern":"a","replacement":"b"}]}"#,
            #"{"type":"rules","rules":[{"kind":"map-remote","replacement":"b"}]}"#,
            #"{"type":"rules","rules":[{"kind":"map-local","pattern":"a","replacement":"b","files":[{"path":"","contentType":"x","base64":"!!"}]}]}"#,
            tooMany,
        ]
        for payload in payloads {
            var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
            decoder.append(contentsOf: FrameEncoder.frame(payload: Data(payload.utf8)))
            XCTAssertThrowsError(try decoder.next(), String(payload.prefix(80)))
        }
    }

    func testHelloSaysWhetherTheAgentAcceptsControlAndOldHellosMeanNo() throws {
        let hello = Hello(agentName: "a", agentVersion: "1", appName: "app", processID: 1, hostName: "h", acceptsControl: true)
        let encoded = String(decoding: Message.hello(hello).payload(), as: UTF8.self)
        XCTAssertTrue(encoded.contains(#""acceptsControl":true"#), encoded)
        XCTAssertEqual(try Message.decode(payload: Message.hello(hello).payload()), .hello(hello))
        let old = #"{"type":"hello","protocolVersion":1,"agentName":"a","agentVersion":"1","appName":"app","processID":1,"hostName":"h"}"#
        guard case .hello(let decoded)? = try Message.decode(payload: Data(old.utf8)) else { return XCTFail("not a hello") }
        XCTAssertFalse(decoded.acceptsControl)
    }
}
