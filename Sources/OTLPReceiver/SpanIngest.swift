import InspectorIngest
import NIOConcurrencyHelpers
import WireProtocol

/// Takes decoded trace exports and posts their HTTP spans to an ``Inbox``
/// as flows, each service instance as an agent of its own: its first span
/// posts `connected` with a ``Hello`` made from the resource (`service.name`
/// as the app, `host.name` or `service.instance.id` as the host), then every
/// flow comes as a finished `flowStarted`. Shared by all OTLP connections.
///
/// Services get ``ConnectionID``s from 2^62 up, a range the agent listener's
/// count never reaches, so both share one inbox and one session.
///
/// ```swift
/// let ingest = SpanIngest(inbox: inbox)
/// let outcome = ingest.ingest(try TraceExport(protobuf: body), peer: "127.0.0.1:53211")
/// ```
package final class SpanIngest: Sendable {
    /// What one export request came to.
    package struct Outcome: Sendable, Equatable {
        /// HTTP spans posted as flows.
        package var flows = 0
        /// Valid spans that are not HTTP client or server spans: counted, not shown.
        package var otherSpans = 0
        /// Spans refused for malformed ids (OTLP's partial success).
        package var rejectedSpans = 0

        /// Creates an outcome.
        package init(flows: Int = 0, otherSpans: Int = 0, rejectedSpans: Int = 0) {
            self.flows = flows
            self.otherSpans = otherSpans
            self.rejectedSpans = rejectedSpans
        }
    }

    /// Totals since the receiver started.
    package struct Statistics: Sendable, Equatable {
        /// Everything received, in the same categories as ``Outcome``.
        package var received = Outcome()
        /// Service instances seen.
        package var services = 0
    }

    private struct State {
        var services: [String: ConnectionID] = [:]
        var ancestry: SpanAncestry
        var statistics = Statistics()
    }

    /// Service instances tracked one by one; later ones share one entry.
    let maximumServices: Int
    private let inbox: Inbox
    private let state: NIOLockedValueBox<State>

    /// Creates an ingest that posts to `inbox`.
    /// - Parameters:
    ///   - rememberedSpans: how many recent spans are kept for parent links.
    ///   - maximumServices: service instances shown apart; the rest are one "other services" app.
    package init(inbox: Inbox, rememberedSpans: Int = 200_000, maximumServices: Int = 10_000) {
        self.inbox = inbox
        self.maximumServices = maximumServices
        state = NIOLockedValueBox(State(ancestry: SpanAncestry(capacity: rememberedSpans)))
    }

    /// Whether the inbox can take another request's flows now; when it
    /// cannot, the sender is told to retry later (503).
    package var hasRoom: Bool {
        inbox.count < inbox.limits.maximumEvents && inbox.byteCount < inbox.limits.maximumBytes
    }

    /// Totals so far.
    package var statistics: Statistics { state.withLockedValue { $0.statistics } }

    /// Posts the HTTP spans of `export` as flows and counts the rest.
    package func ingest(_ export: TraceExport, peer: String) -> Outcome {
        // Converting spans is most of the work and reads no shared state:
        // done before taking the lock, so connections convert side by side.
        var logs = export.resourceSpans.map { group in
            group.spans.map { span in SpanFlow.hasValidIDs(span) ? SpanFlow.log(for: span, parent: nil) : nil }
        }
        return state.withLockedValue { state in
            var outcome = Outcome()
            // All of the request's spans first: a batch holds children
            // before their parents, as children end first.
            var released: [SpanAncestry.WaitingFlow] = []
            for (group, groupIndex) in zip(export.resourceSpans, logs.indices) {
                for (spanIndex, span) in group.spans.enumerated() where SpanFlow.hasValidIDs(span) {
                    released += state.ancestry.remember(span, isInboundFlow: logs[groupIndex][spanIndex]?.isInbound ?? false)
                }
            }
            for (group, groupIndex) in zip(export.resourceSpans, logs.indices) {
                var connection: ConnectionID?
                for (spanIndex, span) in group.spans.enumerated() {
                    guard SpanFlow.hasValidIDs(span) else {
                        outcome.rejectedSpans += 1
                        continue
                    }
                    guard var log = logs[groupIndex][spanIndex].take() else {
                        outcome.otherSpans += 1
                        continue
                    }
                    let id = connection ?? service(group.resource, peer: peer, in: &state)
                    connection = id
                    if !log.isInbound, !span.parentSpanID.isEmpty {
                        let parentStart = SpanFlow.flowID(trace: span.traceID, span: span.parentSpanID)
                        log.parentID = state.ancestry.resolveParent(of: .init(connection: id, log: log), startingAt: parentStart)
                    }
                    inbox.post(.message(id, .flowStarted(log)))
                    outcome.flows += 1
                }
            }
            // Flows posted under a guess that this batch's spans disprove.
            for var flow in released {
                guard let start = flow.log.parentID else { continue }
                let parent = state.ancestry.resolveParent(of: flow, startingAt: start)
                guard parent != flow.log.parentID else { continue }
                flow.log.parentID = parent
                inbox.post(.message(flow.connection, .flowStarted(flow.log)))
            }
            state.statistics.received.flows += outcome.flows
            state.statistics.received.otherSpans += outcome.otherSpans
            state.statistics.received.rejectedSpans += outcome.rejectedSpans
            return outcome
        }
    }

    private func service(_ resource: Attributes, peer: String, in state: inout State) -> ConnectionID {
        var hello = Self.hello(for: resource, peer: peer)
        var key = "\(hello.appName)\u{0}\(hello.hostName)\u{0}\(hello.processID)"
        if let known = state.services[key] { return known }
        if state.services.count >= maximumServices {
            key = "\u{0}other"
            if let known = state.services[key] { return known }
            hello = Hello(agentName: hello.agentName, agentVersion: "", appName: "other services", processID: 0, hostName: "")
        }
        let id = ConnectionID.otlpService(state.services.count)
        state.services[key] = id
        state.statistics.services = state.services.count
        inbox.post(.connected(id, hello, peer: peer))
        return id
    }

    /// The hello an agent in that service would have sent. Without
    /// `host.name` the host is the exporter's, its port left out: an
    /// exporter opens a new connection, from a new port, after an idle
    /// close or a restart, and must stay the same service.
    static func hello(for resource: Attributes, peer: String) -> Hello {
        let sdk = [resource["telemetry.sdk.language"]?.text, resource["telemetry.sdk.version"]?.text].compactMap { $0 }
        return Hello(
            agentName: "OpenTelemetry",
            agentVersion: sdk.joined(separator: " "),
            appName: resource["service.name"]?.text ?? "unknown_service",
            processID: resource["process.pid"]?.integer ?? 0,
            hostName: resource.first("host.name", "service.instance.id")?.text ?? URLAuthority(address: peer).host
        )
    }
}
