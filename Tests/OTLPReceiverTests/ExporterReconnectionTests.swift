import Foundation
@testable import InspectorCore
import InspectorIngest
import OTLPReceiver
import Testing
import WireProtocol

/// An exporter that names no `host.name` is one service however many
/// connections it opens (an idle close, a restart): the receiver names it by
/// the exporter's host, whatever port each connection comes from.
@Suite struct ExporterReconnectionTests {
    /// Whether this machine can listen on the IPv6 loopback address.
    private static let hasIPv6Loopback: Bool = {
        let receiver = OTLPReceiver(configuration: OTLPReceiverConfiguration(addresses: [("::1", 0)]), inbox: Inbox())
        defer { receiver.shutdown() }
        return (try? receiver.start()) != nil
    }()

    @Test(.enabled(if: hasIPv6Loopback, "no IPv6 loopback address on this machine"))
    func anExporterOnIPv6StaysOneServiceAcrossConnections() throws {
        let inbox = Inbox()
        let receiver = OTLPReceiver(configuration: OTLPReceiverConfiguration(addresses: [("::1", 0)]), inbox: inbox)
        defer { receiver.shutdown() }
        guard case .tcp(_, let port) = try receiver.start().first else { throw ListenerError.noEndpoints }
        // curl opens a new connection, from a new port, each time it runs.
        for span in [UInt8(1), 2] {
            let file = try Subprocess.temporaryFile(Spans.export([Spans.span(id: span, kind: .server)], service: "orders").protobufBytes())
            defer { try? FileManager.default.removeItem(atPath: file) }
            let reply = try Subprocess.post("http://[::1]:\(port)/v1/traces", file: file,
                                            headers: ["Content-Type: application/x-protobuf"], extra: ["--globoff"])
            #expect(reply.status == 200)
        }
        var session = Session()
        _ = session.apply(inbox.drain(), at: .now)
        #expect(session.agents.map(\.hello.appName) == ["orders"])
        #expect(session.agents.map(\.hello.hostName) == ["::1"])
        #expect(session.store.allRecords.map(\.agent) == [0, 0])
        #expect(session.agents.first.map { URLAuthority(address: $0.peer).host } == "::1", "the peer in brackets, as every peer is written")
    }
}
