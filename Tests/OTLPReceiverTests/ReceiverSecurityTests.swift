import Foundation
import InspectorCore
import OTLPReceiver
import TestSupport
import Testing
import WireProtocol

/// A token for any address off this machine, `Authorization: Bearer` checked
/// on every request, and TLS from PEM files.
@Suite struct ReceiverSecurityTests {
    @Test func aNonLoopbackAddressNeedsAToken() {
        #expect(throws: ListenerError.tokenRequired(.tcp(host: "0.0.0.0", port: 4318))) {
            try OTLPReceiverConfiguration(addresses: [("0.0.0.0", 4318)]).validate()
        }
        #expect(throws: Never.self) { try OTLPReceiverConfiguration(addresses: [("0.0.0.0", 4318)], token: "t").validate() }
    }

    @Test func onlyRequestsWithTheBearerTokenAreTaken() throws {
        let inbox = Inbox()
        let receiver = OTLPReceiver(configuration: OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)], token: "s3cret"), inbox: inbox)
        guard case .tcp(_, let port) = try receiver.start().first else { throw ListenerError.noEndpoints }
        defer { receiver.shutdown() }
        let body = try Subprocess.temporaryFile(Spans.export([Spans.span(id: 1, kind: .server)]).protobufBytes())
        defer { try? FileManager.default.removeItem(atPath: body) }
        let url = "http://127.0.0.1:\(port)/v1/traces"
        let type = "Content-Type: application/x-protobuf"
        #expect(try Subprocess.post(url, file: body, headers: [type]).status == 401)
        #expect(try Subprocess.post(url, file: body, headers: [type, "Authorization: Bearer s3cre"]).status == 401)
        #expect(receiver.ingest.statistics.received.flows == 0)
        #expect(try Subprocess.post(url, file: body, headers: [type, "Authorization: Bearer s3cret"]).status == 200)
        #expect(receiver.ingest.statistics.received.flows == 1)
    }

    @Test func servesTLSWithTheGivenCertificate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-tls-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = ("\(directory)/cert.pem", "\(directory)/key.pem")
        let made = try ProgramRun.collect(["/usr/bin/openssl",
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=netinspect test", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ])
        try #require(made.status == 0, "openssl: \(made.errorOutput)")
        let inbox = Inbox()
        var configuration = OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)])
        configuration.tls = .init(certificatePath: certificate, privateKeyPath: key)
        let receiver = OTLPReceiver(configuration: configuration, inbox: inbox)
        guard case .tcp(_, let port) = try receiver.start().first else { throw ListenerError.noEndpoints }
        defer { receiver.shutdown() }
        let body = try Subprocess.temporaryFile(Spans.export([Spans.span(id: 1, kind: .server)]).protobufBytes())
        defer { try? FileManager.default.removeItem(atPath: body) }
        let reply = try Subprocess.post("https://127.0.0.1:\(port)/v1/traces", file: body,
                                        headers: ["Content-Type: application/x-protobuf"], extra: ["--cacert", certificate])
        #expect(reply.status == 200)
        #expect(receiver.ingest.statistics.received.flows == 1)
        // Plain HTTP to the TLS port gets no OTLP reply.
        #expect(try Subprocess.post("http://127.0.0.1:\(port)/v1/traces", file: body, headers: ["Content-Type: application/x-protobuf"]).status != 200)
    }

    @Test func unreadableTLSFilesAreAClearError() {
        var configuration = OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)])
        configuration.tls = .init(certificatePath: "/nonexistent/cert.pem", privateKeyPath: "/nonexistent/key.pem")
        let receiver = OTLPReceiver(configuration: configuration, inbox: Inbox())
        #expect(throws: TLSFilesError.self) { _ = try receiver.start() }
    }
}
