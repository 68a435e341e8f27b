import Foundation
import WireProtocol

/// When a captured service's inbound flow was caused by a captured call:
/// the one decision behind linking two services' flows, with nothing
/// added to their traffic.
///
/// Both agents see the same TCP connection from its two ends: the caller
/// records the address its connection was bound to
/// (``NetworkLog/localAddress``), the callee the address the request came
/// from (``NetworkLog/peer``). A call made an inbound flow when
///
/// - the call's local address is the inbound flow's peer,
/// - both agents run on the same host (a loopback address names a
///   different socket on every machine, so the host names must match), and
/// - the call was under way when the request arrived: it started no later,
///   and had not finished before. A keep-alive connection carries many
///   requests one after the other, and a closed connection's port is used
///   again later, so of the calls that qualify the one that started last
///   is the caller.
///
/// ```swift
/// let call = FlowLink.Endpoint(call: outboundLog, host: "build-7")!
/// let received = FlowLink.Endpoint(received: inboundLog, host: "build-7")!
/// FlowLink.made(call, received)      // true when the call carried that request
/// ```
package enum FlowLink {
    /// What the decision needs of one side's flow.
    package struct Endpoint: Sendable, Equatable {
        /// The connection's address on the caller's side: a call's local
        /// address, an inbound flow's peer.
        var address: String
        /// The host the flow's agent runs on.
        var host: String
        /// When the flow started.
        var start: Date
        /// When it finished; nil while it runs.
        var end: Date?

        /// Creates an endpoint from its parts.
        init(address: String, host: String, start: Date, end: Date?) {
            self.address = address
            self.host = host
            self.start = start
            self.end = end
        }

        /// The caller's side of a call, if it recorded its local address.
        init?(call log: NetworkLog, host: String) {
            guard !log.isInbound, let address = log.localAddress, !address.isEmpty else { return nil }
            self.init(address: address, host: host, start: log.timing.startedAt,
                      end: log.timing.finished.map { log.timing.startedAt.addingTimeInterval($0) })
        }

        /// The callee's side of an inbound flow, if its capture saw the peer.
        init?(received log: NetworkLog, host: String) {
            guard log.isInbound, let address = log.peer, !address.isEmpty else { return nil }
            self.init(address: address, host: host, start: log.timing.startedAt, end: nil)
        }
    }

    /// Whether `call` could have carried the request of `received`.
    static func made(_ call: Endpoint, _ received: Endpoint) -> Bool {
        call.address == received.address && call.host == received.host
            && call.start <= received.start && (call.end.map { $0 >= received.start } ?? true)
    }

    /// Which of `calls` made `received`, given in the order they started
    /// (as one agent sends them): of those that could have, the one that
    /// started last, since a connection's earlier requests were answered
    /// before it was sent. Reads from the end, and stops at the first call
    /// that started no later than `received`: an earlier one ended before it.
    static func caller<Calls: BidirectionalCollection>(of received: Endpoint, among calls: Calls) -> Calls.Element?
    where Calls.Element == (id: FlowID, endpoint: Endpoint) {
        for call in calls.reversed() where call.endpoint.host == received.host && call.endpoint.start <= received.start {
            return made(call.endpoint, received) ? call : nil
        }
        return nil
    }
}
