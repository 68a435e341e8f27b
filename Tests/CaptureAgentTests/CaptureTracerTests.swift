// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgent
import Foundation
import TestSupport
import Tracing
import XCTest
@testable import CaptureAgentAsyncHTTPClient

/// The span the capture's tracer gives AsyncHTTPClient, set the way
/// AsyncHTTPClient sets it (`span.attributes[key] = value`, one at a time).
final class CaptureTracerTests: XCTestCase {
    /// Runs `body` with a client of an agent that records flows (an
    /// inspector is connected), or, with `recording` false, of one that
    /// has no inspector.
    private func withClient(recording: Bool = true, _ body: (ClientCapture) throws -> Void) throws {
        let path = temporarySocketPath("tracer")
        let inspector = recording ? try TestInspector(path: path) : nil
        defer { inspector?.kill() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)))
        defer { agent.stop() }
        if recording { XCTAssertTrue(eventually { agent.isConnected }) }
        XCTAssertEqual(agent.isRecording, recording)
        try body(ClientCapture(agent: agent, appConfiguration: HTTPClient.Configuration()))
    }

    private func setAsAsyncHTTPClientDoes(_ span: CaptureSpan) {
        span.attributes["http.request.method"] = "DELETE"
        span.attributes["url.scheme"] = "http"
        span.attributes["server.address"] = "127.0.0.1"
        span.attributes["server.port"] = 9
        span.attributes["url.path"] = "/item"
        span.attributes["url.full"] = "http://127.0.0.1:9/item?x=1"
        span.attributes["url.query"] = "x=1"
    }

    /// With no tracer of the app's (none, or the no-op one), the watched
    /// request keeps the attributes, so each insert goes into one table;
    /// a no-op span would read back empty every time.
    func testWithoutAnAppTracerTheRequestKeepsTheAttributes() throws {
        for appTracer in [nil, NoOpTracer() as any Tracer] {
            try withClient { client in
                let tracer = CaptureTracer(wrapping: appTracer, client: client)
                XCTAssertTrue(tracer.innerKeepsNothing)
                let span = tracer.startSpan("DELETE", ofKind: .client)
                setAsAsyncHTTPClientDoes(span)
                // Each write handed the table back, with every attribute so far.
                let attributes = span.attributes
                XCTAssertEqual(attributes.count, 7)
                XCTAssertEqual(attributes.get("url.full"), .string("http://127.0.0.1:9/item?x=1"))
                // A read with no write after it keeps the table: the next read
                // is empty, as a no-op span's always is.
                XCTAssertTrue(span.attributes.isEmpty)

                // Announced under the URL's key once the URL was set.
                XCTAssertTrue(client.hasWaitingRequests)
                let claimed = client.claim(key: "127.0.0.1:9/item?x=1")
                XCTAssertTrue(claimed.traced === span.request)
                XCTAssertFalse(client.hasWaitingRequests, "claimed: nothing waits")
                span.end()
            }
        }
    }

    /// While no flow is recorded the span is not watched: no request is
    /// made or announced, so a connection's unbuilt flow has nothing to
    /// look up, and the attributes go to the app's span as without capture.
    func testWhileNothingRecordsTheSpanIsOnlyForwarded() throws {
        try withClient(recording: false) { client in
            let appTracer = KeepingTracer()
            for tracer in [CaptureTracer(wrapping: nil, client: client), CaptureTracer(wrapping: appTracer, client: client)] {
                let span = tracer.startSpan("DELETE", ofKind: .client)
                XCTAssertNil(span.request)
                setAsAsyncHTTPClientDoes(span)
                XCTAssertFalse(client.hasWaitingRequests)
                XCTAssertNil(client.claim(key: "127.0.0.1:9/item?x=1").traced)
                span.end()
            }
            XCTAssertEqual(appTracer.ended.withLock { $0 }.map(\.count), [7], "the app's tracer still gets every attribute")
        }
    }

    /// A request the tracer announced and that ends before any connection
    /// took it is withdrawn: nothing is left waiting for a connection's
    /// unbuilt flow to look up.
    func testAWithdrawnRequestLeavesNothingWaiting() throws {
        try withClient { client in
            let tracer = CaptureTracer(wrapping: nil, client: client)
            let spans = (0 ..< 3).map { _ in tracer.startSpan("DELETE", ofKind: .client) }
            for span in spans { setAsAsyncHTTPClientDoes(span) }
            XCTAssertTrue(client.hasWaitingRequests)
            XCTAssertTrue(client.claim(key: "127.0.0.1:9/item?x=1").traced === spans[0].request, "oldest first")
            spans[1].end()
            XCTAssertTrue(client.hasWaitingRequests, "the third still waits")
            spans[2].end()
            XCTAssertFalse(client.hasWaitingRequests)
            XCTAssertNil(client.claim(key: "127.0.0.1:9/item?x=1").traced)
            spans[0].end()
        }
    }

    /// An app's own tracer keeps its spans' attributes itself, and gets
    /// every one AsyncHTTPClient sets.
    func testAnAppTracerGetsTheAttributes() throws {
        try withClient { client in
            let appTracer = KeepingTracer()
            let tracer = CaptureTracer(wrapping: appTracer, client: client)
            XCTAssertFalse(tracer.innerKeepsNothing)
            let span = tracer.startSpan("DELETE", ofKind: .client)
            setAsAsyncHTTPClientDoes(span)
            XCTAssertTrue(client.claim(key: "127.0.0.1:9/item?x=1").traced === span.request)
            span.end()
            XCTAssertEqual(appTracer.ended.withLock { $0 }.map(\.count), [7])
            // The app's tracer still gets the injection, into the request's headers.
            var headers: [String: String] = [:]
            tracer.inject(span.context, into: &headers, using: DictionaryInjector())
            XCTAssertEqual(appTracer.injections.withLock { $0 }, 1)
        }
    }
}

/// A tracer that keeps its spans' attributes and records them when a span ends.
private final class KeepingTracer: Tracer, @unchecked Sendable {
    let ended = Locked<[SpanAttributes]>([])

    final class KeptSpan: Tracing.Span, @unchecked Sendable {
        let tracer: KeepingTracer
        let context = ServiceContext.topLevel
        var operationName: String
        var attributes = SpanAttributes([:])
        let isRecording = true

        init(tracer: KeepingTracer, operationName: String) {
            self.tracer = tracer
            self.operationName = operationName
        }

        func setStatus(_ status: SpanStatus) {}
        func addEvent(_ event: SpanEvent) {}
        func addLink(_ link: SpanLink) {}
        func recordError<Instant: TracerInstant>(_ error: Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
            tracer.ended.withLock { $0.append(attributes) }
        }
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> KeptSpan {
        KeptSpan(tracer: self, operationName: operationName)
    }

    func forceFlush() {}
    let injections = Locked(0)
    func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Carrier == Inject.Carrier {
        injections.withLock { $0 += 1 }
    }
    func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Carrier == Extract.Carrier {}
}

/// Injects into a dictionary, as AsyncHTTPClient's injector adds header fields.
private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}
#endif
