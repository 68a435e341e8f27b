import Foundation
import TestSupport
import XCTest
import WireProtocol
@testable import InspectorCore

final class HARFileTests: XCTestCase {
    static let start = Date(timeIntervalSince1970: 1_763_717_923.123456)

    /// Flows covering what HAR must carry: JSON and binary bodies, a form,
    /// truncation, redirects, duplicate headers, a failure, a pending flow.
    static let flows: [NetworkLog] = [
        NetworkLog(
            sessionID: 1, taskID: 1,
            request: Request(method: "POST", url: "http://127.0.0.1:8080/orders?lang=fr&q=caf%C3%A9",
                             headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                                       HTTPHeader(name: "Cookie", value: "session=abc; theme=dark")],
                             body: CapturedBody(data: Data(#"{"item":"Zoë","qty":2}"#.utf8))),
            response: Response(statusCode: 201,
                               headers: [HTTPHeader(name: "Content-Type", value: "application/json; charset=utf-8"),
                                         HTTPHeader(name: "Set-Cookie", value: "a=1; Path=/"),
                                         HTTPHeader(name: "Set-Cookie", value: "b=2")],
                               body: CapturedBody(data: Data(#"{"id":7}"#.utf8)), mimeType: "application/json"),
            timing: Timing(startedAt: start, requestSent: 0.000_4, firstResponseByte: 0.012_3, finished: 0.015_6),
            state: .completed),
        NetworkLog(
            sessionID: 1, taskID: 2,
            request: Request(method: "GET", url: "http://127.0.0.1:8080/blob"),
            response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
                               body: CapturedBody(data: Data([0, 1, 2, 0xFF, 0xFE]), size: 10_485_760, isTruncated: true),
                               mimeType: "application/octet-stream"),
            timing: Timing(startedAt: start.addingTimeInterval(1), requestSent: 0.001, firstResponseByte: 0.002, finished: 0.9),
            redirects: [RedirectHop(statusCode: 302, from: "http://127.0.0.1:8080/old", to: "http://127.0.0.1:8080/blob")],
            state: .completed),
        NetworkLog(
            sessionID: 2, taskID: 1,
            request: Request(method: "PUT", url: "http://127.0.0.1:8080/form",
                             headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                             body: CapturedBody(data: Data("name=J%C3%BCrgen+M&tags=a&tags=b".utf8))),
            timing: Timing(startedAt: start.addingTimeInterval(2), requestSent: 0.001, finished: 30),
            error: FlowError(domain: "NSURLErrorDomain", code: -1001, message: "The request timed out."),
            state: .failed),
        NetworkLog(
            sessionID: 2, taskID: 2,
            request: Request(method: "PROPFIND", url: "http://127.0.0.1:8080/dav/"),
            timing: Timing(startedAt: start.addingTimeInterval(3)),
            state: .pending),
    ]

    private func entries(_ data: Data) throws -> [[String: Any]] {
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try XCTUnwrap((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])
    }

    func testExportValidatesAgainstTheHAR12Schema() throws {
        let data = try HARFile.encode(Self.flows)
        try HARSchemaValidator.validate(data)
    }

    func testSchemaValidatorRejectsAnInvalidArchive() throws {
        var root = try XCTUnwrap(JSONSerialization.jsonObject(with: HARFile.encode(Self.flows)) as? [String: Any])
        var log = try XCTUnwrap(root["log"] as? [String: Any])
        var entries = try XCTUnwrap(log["entries"] as? [[String: Any]])
        entries[0]["timings"] = ["send": 1]
        log["entries"] = entries
        root["log"] = log
        XCTAssertThrowsError(try HARSchemaValidator.validate(JSONSerialization.data(withJSONObject: root)),
                             "a schema check that cannot fail proves nothing")
    }

    func testRoundTripRestoresEveryFlowExactly() throws {
        let flows = try HARFile.decode(HARFile.encode(Self.flows))
        XCTAssertEqual(flows, Self.flows)
    }

    func testTimingsAreOurOffsetsInMillisecondsAndSumToTime() throws {
        let entry = try entries(HARFile.encode(Self.flows))[0]
        let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
        XCTAssertEqual(try XCTUnwrap(timings["send"]), 0.4, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(timings["wait"]), 11.9, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(timings["receive"]), 3.3, accuracy: 1e-9)
        XCTAssertEqual(timings["dns"], -1)
        XCTAssertEqual(try XCTUnwrap(entry["time"] as? Double), 15.6, accuracy: 1e-9)
        XCTAssertEqual(entry["startedDateTime"] as? String, "2025-11-21T09:38:43.123Z")
    }

    func testBinaryBodyIsBase64WithEncodingAndTextBodyIsPlain() throws {
        let all = try entries(HARFile.encode(Self.flows))
        let binary = try XCTUnwrap((all[1]["response"] as? [String: Any])?["content"] as? [String: Any])
        XCTAssertEqual(binary["encoding"] as? String, "base64")
        XCTAssertEqual(binary["text"] as? String, Data([0, 1, 2, 0xFF, 0xFE]).base64EncodedString())
        XCTAssertEqual(binary["size"] as? Int, 10_485_760, "content.size is the full size, not the captured prefix")
        let json = try XCTUnwrap((all[0]["response"] as? [String: Any])?["content"] as? [String: Any])
        XCTAssertNil(json["encoding"])
        XCTAssertEqual(json["text"] as? String, #"{"id":7}"#)
    }

    func testDerivedFieldsQueryCookiesAndFormParams() throws {
        let all = try entries(HARFile.encode(Self.flows))
        let request = try XCTUnwrap(all[0]["request"] as? [String: Any])
        XCTAssertEqual((request["queryString"] as? [[String: String]])?.map { $0["value"] }, ["fr", "café"])
        XCTAssertEqual((request["cookies"] as? [[String: String]])?.map { $0["name"] }, ["session", "theme"])
        let response = try XCTUnwrap(all[0]["response"] as? [String: Any])
        XCTAssertEqual((response["cookies"] as? [[String: String]])?.map { $0["value"] }, ["1", "2"])
        XCTAssertEqual(response["statusText"] as? String, "Created")
        let form = try XCTUnwrap((all[2]["request"] as? [String: Any])?["postData"] as? [String: Any])
        XCTAssertEqual((form["params"] as? [[String: String]])?.map { $0["value"] }, ["Jürgen M", "a", "b"])
    }

    func testReadsAnotherToolsArchive() throws {
        let foreign = #"""
        {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[],
          "entries":[{"startedDateTime":"2025-11-21T10:38:43.500+01:00","time":42.5,
            "request":{"method":"GET","url":"https://example.com/api?x=1","httpVersion":"h2",
              "headers":[{"name":":authority","value":"example.com"},{"name":"accept","value":"*/*"}],
              "queryString":[{"name":"x","value":"1"}],"cookies":[],"headersSize":-1,"bodySize":0},
            "response":{"status":200,"statusText":"","httpVersion":"h2",
              "headers":[{"name":"content-type","value":"image/png"}],"cookies":[],
              "content":{"size":4,"mimeType":"image/png","text":"iVBORw==","encoding":"base64"},
              "redirectURL":"","headersSize":-1,"bodySize":4,"_transferSize":300},
            "cache":{},"timings":{"blocked":1.5,"dns":-1,"ssl":-1,"connect":-1,"send":0.5,"wait":30,"receive":10.5},
            "serverIPAddress":"93.184.216.34","_initiator":{"type":"script"}}]}}
        """#
        let flows = try HARFile.decode(Data(foreign.utf8))
        let flow = try XCTUnwrap(flows.first)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.request.headers.first("Accept"), "*/*")
        XCTAssertEqual(flow.response?.statusCode, 200)
        XCTAssertEqual(flow.response?.body?.data, Data([0x89, 0x50, 0x4E, 0x47]))
        XCTAssertEqual(flow.response?.mimeType, "image/png")
        XCTAssertEqual(flow.state, .completed)
        XCTAssertEqual(flow.timing.startedAt.timeIntervalSince1970, 1_763_717_923.5, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(flow.timing.requestSent), 0.002, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(flow.timing.firstResponseByte), 0.032, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(flow.timing.duration), 0.0425, accuracy: 1e-9)
    }

    func testReadErrorsNameTheProblem() {
        let cases: [(String, String)] = [
            ("not json", "not JSON"),
            (#"{"entries":[]}"#, "no \"log.entries\" array"),
            (#"{"log":{"entries":{}}}"#, "no \"log.entries\" array"),
            (#"{"log":{"entries":[1]}}"#, "log.entries[0]: not an object"),
            (#"{"log":{"entries":[{"request":{"url":"http://x"}}]}}"#, "log.entries[0]: request has no method"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try HARFile.decode(Data(text.utf8)), text) {
                XCTAssertTrue("\($0)".contains(expected), "'\($0)' should contain '\(expected)'")
            }
        }
    }
}

/// Validates HAR JSON against Fixtures/har-1.2.schema.json with Python's
/// `jsonschema`; a machine without it fails (.ci/run installs it), as a
/// skip would pass the HAR export unchecked wherever the module is missing.
enum HARSchemaValidator {
    struct Invalid: Error, CustomStringConvertible { var description: String }

    static func validate(_ data: Data) throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-\(UUID()).har")
        try data.write(to: har)
        defer { try? FileManager.default.removeItem(at: har) }
        let script = """
            import json, sys
            try:
                import jsonschema
            except ImportError:
                sys.exit(3)
            schema = json.load(open(sys.argv[1]))
            errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(json.load(open(sys.argv[2]))), key=str)
            for e in errors[:5]:
                print("/".join(map(str, e.absolute_path)) + ": " + e.message)
            sys.exit(1 if errors else 0)
            """
        let (status, text) = try ProgramRun.run(["/usr/bin/env", "python3", "-c", script,
                                                 fixtures.appendingPathComponent("har-1.2.schema.json").path, har.path])
        switch status {
        case 0: return
        case 3: throw Prerequisite("python3 jsonschema is not installed: pip install jsonschema (.ci/run installs it)")
        default: throw Invalid(description: "HAR does not match the schema:\n\(text)")
        }
    }
}
