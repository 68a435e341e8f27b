import Foundation
import OTLPReceiver
import TestSupport
import Testing
import WireProtocol

/// The official OpenTelemetry Python SDK (installed by .ci/run) exports real
/// spans to the real netinspect binary; its `--json` output must show the
/// HTTP spans as flows of the `orders` service, linked to their server span.
@Suite struct PythonSDKExportTests {
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/export_spans.py").path

    @Test(arguments: ["protobuf", "json"])
    func sdkSpansBecomeFlowsWithTheirParentLinks(encoding: String) throws {
        let inspector = try InspectorProcess(listen: "otlp:127.0.0.1:0", arguments: ["--token", "fleet-secret"])
        let port = try inspector.listeningPort()
        let export = try ProgramRun.collect(["/usr/bin/env", "python3", Self.script, "http://127.0.0.1:\(port)/v1/traces", encoding, "fleet-secret"])
        try #require(export.status == 0, "the exporter failed: \(export.errorOutput)")
        let ids = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [String: String])
        func flowID(_ span: String) throws -> String {
            let trace = try #require(Self.bytes(hex: ids["trace"] ?? ""))
            return SpanFlow.flowID(trace: trace, span: try #require(Self.bytes(hex: ids[span] ?? ""))).description
        }
        let server = try flowID("server")
        let clients = try ["client", "legacy", "failed"].map(flowID)

        // A client flow may print twice: first under a guessed parent, then
        // corrected once the handler span between it and the server arrives.
        let latest = try inspector.waitFor("the server flow and every client linked to it") { () -> [String: [String: Any]]? in
            var latest: [String: [String: Any]] = [:]
            for flow in inspector.jsonLines { if let id = flow["id"] as? String { latest[id] = flow } }
            guard latest[server] != nil, clients.allSatisfy({ latest[$0]?["parentID"] as? String == server }) else { return nil }
            return latest
        }

        // The database span and the handler span are counted, not shown.
        #expect(Set(latest.keys) == Set([server] + clients))
        let inbound = try #require(latest[server])
        #expect(inbound["direction"] as? String == "inbound")
        #expect(inbound["parentID"] == nil)
        #expect(Self.request(inbound)["url"] as? String == "http://orders.local:8080/orders/42?full=1")
        #expect(Self.request(inbound)["method"] as? String == "GET")
        #expect(Self.headers(Self.request(inbound)) == ["accept: application/json"])
        #expect(Self.response(inbound)["statusCode"] as? Int == 200)
        #expect((Self.response(inbound)["body"] as? [String: Any])?["size"] as? Int == 321)

        let post = try #require(latest[clients[0]])
        #expect(post["direction"] == nil)
        #expect(Self.request(post)["url"] as? String == "https://payments.local/charge")
        #expect(Self.response(post)["statusCode"] as? Int == 503)
        #expect(post["state"] as? String == "completed")
        let body = try #require((Self.request(post)["body"] as? [String: Any])?["base64"] as? String)
        #expect(Data(base64Encoded: body) == Data(#"{"amount":42}"#.utf8))

        let legacy = try #require(latest[clients[1]])
        #expect(Self.request(legacy)["url"] as? String == "http://legacy.local/stock?sku=9")
        #expect(Self.response(legacy)["statusCode"] as? Int == 200)

        let failed = try #require(latest[clients[2]])
        #expect(failed["state"] as? String == "failed")
        #expect((failed["error"] as? [String: Any])?["message"] as? String == "ConnectionRefusedError: connection refused")

        #expect(inspector.errorOutput.contains("orders (pid 0 on node-7) connected"))
    }

    /// A fleet's flows are told apart in CI by the service each came from.
    @Test func eachJSONLineNamesTheServiceItsSpanCameFrom() throws {
        let inspector = try InspectorProcess(listen: "otlp:127.0.0.1:0")
        let port = try inspector.listeningPort()
        let export = try ProgramRun.collect(["/usr/bin/env", "python3", Self.script, "http://127.0.0.1:\(port)/v1/traces", "protobuf", "", "checkout-py"])
        try #require(export.status == 0, "the exporter failed: \(export.errorOutput)")
        let flows = try inspector.waitFor("the server flow") { () -> [[String: Any]]? in
            let flows = inspector.jsonLines
            return flows.contains { $0["direction"] as? String == "inbound" } ? flows : nil
        }
        let server = try #require(flows.first { $0["direction"] as? String == "inbound" })
        let app = try #require(server["app"] as? [String: Any], "no app in \(server.keys.sorted())")
        #expect(app["name"] as? String == "checkout-py")
        #expect(app["host"] as? String == "node-7")
        #expect(flows.allSatisfy { ($0["app"] as? [String: Any])?["name"] as? String == "checkout-py" })
    }

    @Test func aRequestWithoutTheTokenIsRefusedAndNothingIsShown() throws {
        let inspector = try InspectorProcess(listen: "otlp:127.0.0.1:0", arguments: ["--token", "fleet-secret"])
        let port = try inspector.listeningPort()
        let export = try ProgramRun.collect(["/usr/bin/env", "python3", Self.script, "http://127.0.0.1:\(port)/v1/traces", "json"])
        // The SDK logs a failed export and carries on.
        #expect(export.errorOutput.contains("HTTP Error 401"))
        #expect(inspector.jsonLines.isEmpty)
    }

    private static func request(_ flow: [String: Any]) -> [String: Any] { flow["request"] as? [String: Any] ?? [:] }
    private static func response(_ flow: [String: Any]) -> [String: Any] { flow["response"] as? [String: Any] ?? [:] }
    private static func headers(_ message: [String: Any]) -> [String] {
        (message["headers"] as? [[String: String]] ?? []).map { "\($0["name"] ?? ""): \($0["value"] ?? "")" }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }
}
