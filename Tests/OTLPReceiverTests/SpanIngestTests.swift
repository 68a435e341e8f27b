@testable import InspectorCore
import InspectorIngest
import OTLPReceiver
import Testing
import WireProtocol

/// Spans to flows and parent links, whatever order the spans come in.
@Suite struct SpanIngestTests {
    private func flows(_ events: [InboxEvent]) -> [NetworkLog] {
        events.compactMap { event in
            if case .message(_, .flowStarted(let log)) = event { return log }
            return nil
        }
    }

    private func flowID(_ id: UInt8) -> FlowID { SpanFlow.flowID(trace: Spans.trace(1), span: Spans.id(id)) }

    @Test func clientUnderAHandlerSpanLinksToTheServerWhenParentsComeLater() throws {
        let inbox = Inbox()
        let ingest = SpanIngest(inbox: inbox)
        // Each span in its own export, children first, as a SimpleSpanProcessor sends them.
        let client = Spans.span(id: 3, parent: 2, kind: .client)
        _ = ingest.ingest(Spans.export([client]), peer: "test")
        _ = ingest.ingest(Spans.export([Spans.span(id: 2, parent: 1, kind: .internal, http: false)]), peer: "test")
        _ = ingest.ingest(Spans.export([Spans.span(id: 1, kind: .server)]), peer: "test")
        let posted = flows(inbox.drain())
        // First under the guess (its direct parent), then corrected.
        #expect(posted.map(\.id) == [flowID(3), flowID(3), flowID(1)])
        #expect(posted.map(\.parentID) == [flowID(2), flowID(1), nil])
        #expect(posted.last?.direction == .inbound)
    }

    @Test func aClientDirectlyUnderItsServerIsLinkedAtOnceInAnyOrder() {
        let inbox = Inbox()
        let ingest = SpanIngest(inbox: inbox)
        _ = ingest.ingest(Spans.export([Spans.span(id: 5, parent: 4, kind: .client)]), peer: "test")
        _ = ingest.ingest(Spans.export([Spans.span(id: 4, kind: .server)]), peer: "test")
        let posted = flows(inbox.drain())
        #expect(posted.map(\.parentID) == [flowID(4), nil])
    }

    @Test func otherSpansAreCountedAndBadIDsRejected() {
        let inbox = Inbox()
        let ingest = SpanIngest(inbox: inbox)
        var badTrace = Spans.span(id: 7, kind: .client)
        badTrace.traceID = [1, 2, 3, 4]
        var database = Spans.span(id: 8, kind: .client, http: false)
        database.attributes = Attributes([("db.system", .string("postgresql"))])
        let outcome = ingest.ingest(Spans.export([badTrace, database, Spans.span(id: 9, kind: .server)]), peer: "test")
        #expect(outcome == SpanIngest.Outcome(flows: 1, otherSpans: 1, rejectedSpans: 1))
        let events = inbox.drain()
        guard case .connected(_, let hello, _) = events.first else {
            Issue.record("the service must connect before its flows: \(events)")
            return
        }
        #expect(hello.appName == "svc")
        #expect(hello.agentName == "OpenTelemetry")
        #expect(flows(events).map(\.id) == [flowID(9)])
    }

    @Test func eachServiceInstanceIsItsOwnAgent() {
        let inbox = Inbox()
        let ingest = SpanIngest(inbox: inbox)
        _ = ingest.ingest(Spans.export([Spans.span(id: 1, kind: .server)], service: "a"), peer: "test")
        _ = ingest.ingest(Spans.export([Spans.span(id: 2, kind: .server)], service: "b"), peer: "test")
        _ = ingest.ingest(Spans.export([Spans.span(id: 3, kind: .server)], service: "a"), peer: "test")
        var session = Session()
        _ = session.apply(inbox.drain(), at: .now)
        #expect(session.agents.map(\.hello.appName) == ["a", "b"])
        #expect(session.store.allRecords.map(\.agent) == [0, 1, 0])
    }

    /// Without `host.name` a service is named by its exporter's host, not
    /// the port its connection came from: a reconnecting exporter (an idle
    /// close, a restart) stays one service.
    @Test func aServiceWithoutHostNameStaysOneAcrossExporterConnections() {
        let inbox = Inbox()
        let ingest = SpanIngest(inbox: inbox)
        _ = ingest.ingest(Spans.export([Spans.span(id: 1, kind: .server)], service: "a"), peer: "10.0.0.5:40001")
        _ = ingest.ingest(Spans.export([Spans.span(id: 2, kind: .server)], service: "a"), peer: "10.0.0.5:40002")
        _ = ingest.ingest(Spans.export([Spans.span(id: 3, kind: .server)], service: "a"), peer: "[::1]:5000")
        var session = Session()
        _ = session.apply(inbox.drain(), at: .now)
        #expect(session.agents.map(\.hello.hostName) == ["10.0.0.5", "::1"])
        #expect(session.store.allRecords.map(\.agent) == [0, 0, 1])
    }

    @Test func oldConventionServerSpanBuildsItsURLFromParts() throws {
        var span = Spans.span(id: 1, kind: .server, http: false)
        span.attributes = Attributes([
            ("http.method", .string("PUT")), ("http.scheme", .string("https")), ("net.host.name", .string("api.local")),
            ("net.host.port", .int(8443)), ("http.target", .string("/v1/items?x=1")), ("http.status_code", .string("201")),
        ])
        let log = try #require(SpanFlow.log(for: span, parent: nil))
        #expect(log.request.method == "PUT")
        #expect(log.request.url == "https://api.local:8443/v1/items?x=1")
        #expect(log.response?.statusCode == 201)
        #expect(log.timing.duration == 0.25)
    }
}
