import Foundation
import InspectorIngest
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

    /// A self-signed certificate for 127.0.0.1 and its key, made by openssl
    /// in `directory`.
    private func makeCertificate(in directory: String) throws -> (certificate: String, key: String) {
        let (certificate, key) = ("\(directory)/cert.pem", "\(directory)/key.pem")
        let made = try ProgramRun.collect(["/usr/bin/openssl",
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=netinspect test", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ])
        try #require(made.status == 0, "openssl: \(made.errorOutput)")
        return (certificate, key)
    }

    private func temporaryDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-tls-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func servesTLSWithTheGivenCertificate() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try makeCertificate(in: directory)
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

    /// Handshakes that fail (a client that does not trust the certificate,
    /// plain HTTP, a client that offers only TLS 1.1, one that sends
    /// garbage) close their own connection and nothing else: the next
    /// client is served.
    @Test func aFailedHandshakeLeavesTheReceiverServing() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try makeCertificate(in: directory)
        var configuration = OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)])
        configuration.tls = .init(certificatePath: certificate, privateKeyPath: key)
        let receiver = OTLPReceiver(configuration: configuration, inbox: Inbox())
        guard case .tcp(_, let port) = try receiver.start().first else { throw ListenerError.noEndpoints }
        defer { receiver.shutdown() }
        let body = try Subprocess.temporaryFile(Spans.export([Spans.span(id: 1, kind: .server)]).protobufBytes())
        defer { try? FileManager.default.removeItem(atPath: body) }
        let url = "https://127.0.0.1:\(port)/v1/traces"
        let type = "Content-Type: application/x-protobuf"

        // curl reports status 0 when it got no HTTP answer at all.
        #expect(try Subprocess.post(url, file: body, headers: [type]).status == 0, "curl does not trust a self-signed certificate")
        #expect(try Subprocess.post("http://127.0.0.1:\(port)/v1/traces", file: body, headers: [type]).status == 0)
        let old = try ProgramRun.collect(["/usr/bin/openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-tls1_1",
                                          "-cipher", "DEFAULT@SECLEVEL=0", "-CAfile", certificate], timeout: 20)
        #expect(old.status != 0, "a TLS 1.1 handshake is refused:\n\(old.output)\n\(old.errorOutput)")
        #expect(old.errorOutput.contains("alert protocol version"), "the server's answer to TLS 1.1:\n\(old.errorOutput)")
        let garbage = try ProgramRun.collect(["/usr/bin/env", "python3", "-c",
            "import socket; s = socket.create_connection(('127.0.0.1', \(port)), timeout=10); s.sendall(b'\\x16\\x03\\x01\\x00\\x05hello'); print(len(s.recv(100)))"], timeout: 20)
        #expect(garbage.status == 0, "the garbage connection is closed, not left hanging: \(garbage.errorOutput)")
        #expect(receiver.ingest.statistics.received.flows == 0)

        let reply = try Subprocess.post(url, file: body, headers: [type], extra: ["--cacert", certificate])
        #expect(reply.status == 200)
        #expect(receiver.ingest.statistics.received.flows == 1)
    }

    /// The key must belong to the certificate; the error says which files and why.
    @Test func aKeyOfAnotherCertificateIsAClearError() throws {
        let (first, second) = (try temporaryDirectory(), try temporaryDirectory())
        defer { for directory in [first, second] { try? FileManager.default.removeItem(atPath: directory) } }
        let (certificate, _) = try makeCertificate(in: first)
        let (_, otherKey) = try makeCertificate(in: second)
        var configuration = OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)])
        configuration.tls = .init(certificatePath: certificate, privateKeyPath: otherKey)
        let receiver = OTLPReceiver(configuration: configuration, inbox: Inbox())
        let error = #expect(throws: TLSFilesError.self) { _ = try receiver.start() }
        let text = error?.description ?? ""
        #expect(text.hasPrefix("cannot serve TLS with \(certificate) and \(otherKey): the private key: "), "\(text)")
        #expect(text.contains("mismatch"), "OpenSSL's reason: \(text)")
    }

    @Test func unreadableTLSFilesAreAClearError() {
        var configuration = OTLPReceiverConfiguration(addresses: [("127.0.0.1", 0)])
        configuration.tls = .init(certificatePath: "/nonexistent/cert.pem", privateKeyPath: "/nonexistent/key.pem")
        let receiver = OTLPReceiver(configuration: configuration, inbox: Inbox())
        let error = #expect(throws: TLSFilesError.self) { _ = try receiver.start() }
        let text = error?.description ?? ""
        #expect(text.hasPrefix("cannot serve TLS with /nonexistent/cert.pem and /nonexistent/key.pem: the certificate chain: "), "\(text)")
        #expect(text.contains("No such file or directory"), "OpenSSL's reason: \(text)")
    }
}
