#if canImport(Glibc)
import Glibc
#endif
import Foundation
import InspectorIngest
import OTLPReceiver
import ProtobufWire
import TestSupport
import Testing
import WireProtocol

/// Bad input gets 400 or 413 with OTLP's error body, and the receiver serves
/// the next request as if nothing happened.
@Suite final class HostileInputTests {
    private let inbox = Inbox()
    private let receiver: OTLPReceiver
    private let url: String

    init() throws {
        receiver = OTLPReceiver(configuration: OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)]), inbox: inbox)
        guard case .tcp(_, let port) = try receiver.start().first else { throw ListenerError.noEndpoints }
        url = "http://127.0.0.1:\(port)/v1/traces"
    }

    deinit { receiver.shutdown() }

    private func post(_ bytes: some Sequence<UInt8>, type: String = "application/x-protobuf", headers: [String] = []) throws -> Subprocess.Reply {
        let file = try Subprocess.temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try Subprocess.post(url, file: file, headers: ["Content-Type: \(type)"] + headers)
    }

    /// The `google.rpc.Status` of a protobuf error reply.
    private func status(_ body: Data) throws -> (code: UInt64, message: String) {
        var reader = ProtobufReader(Array(body))
        var result: (code: UInt64, message: String) = (0, "")
        while let field = try reader.nextField() {
            switch field.number {
            case 1: result.code = try reader.readVarint()
            case 2: result.message = try reader.readString()
            default: try reader.skip(field.wireType)
            }
        }
        return result
    }

    /// A good request still goes through: the receiver was not hurt.
    private func expectStillServing() throws {
        let reply = try post(Spans.export([Spans.span(id: 1, kind: .server)]).protobufBytes())
        #expect(reply.status == 200)
        #expect(inbox.drain().contains { if case .message(_, .flowStarted) = $0 { true } else { false } })
    }

    @Test func malformedProtobufIs400WithTheReason() throws {
        let reply = try post([0x0A, 0xFF, 0xFF, 0xFF, 0x0F, 0x01])
        #expect(reply.status == 400)
        let body = try status(reply.body)
        #expect(body.code == 3)
        #expect(body.message.contains("malformed protobuf"))
        try expectStillServing()
    }

    @Test func malformedJSONIs400WithAJSONStatus() throws {
        let reply = try post(Array(#"{"resourceSpans": [ {"#.utf8), type: "application/json")
        #expect(reply.status == 400)
        let body = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        #expect(body["code"] as? Int == 3)
        #expect((body["message"] as? String)?.contains("malformed JSON") == true)
        try expectStillServing()
    }

    @Test func deeplyNestedJSONIs400() throws {
        let reply = try post(Array((String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)).utf8),
                             type: "application/json")
        #expect(reply.status == 400)
        try expectStillServing()
    }

    @Test func deeplyNestedProtobufIs400() throws {
        // An attribute value nested as arrays inside arrays 10,000 deep,
        // on the schema's path, so the decoder descends into it.
        var value = ProtobufWriter()
        value.writeString("leaf", field: 1)
        for _ in 0..<10_000 {
            var array = ProtobufWriter()
            array.writeMessage(value, field: 1)
            var any = ProtobufWriter()
            any.writeMessage(array, field: 5)
            value = any
        }
        var keyValue = ProtobufWriter()
        keyValue.writeString("deep", field: 1)
        keyValue.writeMessage(value, field: 2)
        var span = ProtobufWriter()
        span.writeMessage(keyValue, field: 9)
        var scope = ProtobufWriter()
        scope.writeMessage(span, field: 2)
        var resourceSpans = ProtobufWriter()
        resourceSpans.writeMessage(scope, field: 2)
        var request = ProtobufWriter()
        request.writeMessage(resourceSpans, field: 1)
        let reply = try post(request.bytes)
        #expect(reply.status == 400)
        #expect(try status(reply.body).message.contains("nested deeper"))
        try expectStillServing()
    }

    @Test func aHugeDeclaredBodyIs413BeforeItIsRead() throws {
        // A raw socket: curl would not declare a length it does not send.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(url.split(separator: ":")[2].split(separator: "/")[0])!).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let head = "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 40000000000\r\n\r\n"
        _ = head.withCString { write(socket, $0, strlen($0)) }
        var reply = [UInt8](repeating: 0, count: 4096)
        var received = 0
        // Read until the receiver closes: it must not wait for the 40 GB.
        while true {
            let count = reply.withUnsafeMutableBytes { read(socket, $0.baseAddress! + received, $0.count - received) }
            guard count > 0 else { break }
            received += count
        }
        #expect(String(decoding: reply[..<received], as: UTF8.self).hasPrefix("HTTP/1.1 413"))
        try expectStillServing()
    }

    @Test func aGzipBombIs413AndMemoryStaysBounded() throws {
        // 1 GiB of zeros in about a megabyte of gzip.
        let bomb = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-bomb-\(UUID()).gz").path
        defer { try? FileManager.default.removeItem(atPath: bomb) }
        _ = try ProgramRun.run(["/bin/sh", "-c", "head -c 1073741824 /dev/zero | gzip -1 > \(bomb)"])
        let before = Self.peakResidentBytes()
        let reply = try Subprocess.post(url, file: bomb, headers: ["Content-Type: application/x-protobuf", "Content-Encoding: gzip"])
        #expect(reply.status == 413)
        #expect(try status(reply.body).message.contains("once decompressed"))
        // The inflater stops at the 16 MiB limit; a bounded receiver's peak
        // grows by a few times that at most, never by the gigabyte.
        #expect(Self.peakResidentBytes() - before < 128 << 20)
        try expectStillServing()
    }

    @Test func aGzippedExportIsAccepted() throws {
        let plain = try Subprocess.temporaryFile(Spans.export([Spans.span(id: 1, kind: .server)]).protobufBytes())
        defer { try? FileManager.default.removeItem(atPath: plain) }
        _ = try ProgramRun.run(["/usr/bin/gzip", "-k", "-f", plain])
        defer { try? FileManager.default.removeItem(atPath: plain + ".gz") }
        let reply = try Subprocess.post(url, file: plain + ".gz", headers: ["Content-Type: application/x-protobuf", "Content-Encoding: gzip"])
        #expect(reply.status == 200)
        try expectStillServing()
    }

    @Test func someBadSpansAreAPartialSuccess() throws {
        var bad = Spans.span(id: 2, kind: .client)
        bad.spanID = [1, 2]
        let reply = try post(Spans.export([Spans.span(id: 1, kind: .server), bad]).protobufBytes())
        #expect(reply.status == 200)
        // ExportTraceServiceResponse.partial_success (1) { rejected_spans (1) = 1, error_message (2) }
        var response = ProtobufReader(Array(reply.body))
        #expect(try response.nextField()?.number == 1)
        var partial = try response.readMessage()
        #expect(try partial.nextField()?.number == 1)
        #expect(try partial.readVarint() == 1)
        try expectStillServing()
    }

    @Test func aJSONPartialSuccessCountsTheRejectedSpansAsAString() throws {
        let body = #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102","spanId":"0000000000000001","kind":2}]}]}]}"#
        let reply = try post(Array(body.utf8), type: "application/json")
        #expect(reply.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        #expect((json["partialSuccess"] as? [String: Any])?["rejectedSpans"] as? String == "1")
        try expectStillServing()
    }

    @Test func wrongPathMethodAndTypeAreRefused() throws {
        let file = try Subprocess.temporaryFile([UInt8]())
        defer { try? FileManager.default.removeItem(atPath: file) }
        let base = String(url.dropLast("/v1/traces".count))
        #expect(try Subprocess.post(base + "/v1/metrics", file: file, headers: ["Content-Type: application/x-protobuf"]).status == 404)
        #expect(try Subprocess.post(url, file: file, headers: ["Content-Type: text/plain"]).status == 415)
        #expect(try Subprocess.post(url, file: file, headers: ["Content-Type: application/x-protobuf"], extra: ["-X", "PUT"]).status == 405)
        try expectStillServing()
    }

    private static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}
