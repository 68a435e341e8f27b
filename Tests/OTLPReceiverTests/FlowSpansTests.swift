@testable import CaptureAgent
import Foundation
import InMemoryTracing
import OTLPReceiver
import Testing
import Tracing
import WireProtocol

/// The agent's spans, read back by the receiver, give the agent's flow: the
/// conventions written on one side are the ones read on the other. The
/// tracer is handed in, so no process-wide bootstrap touches other tests.
@Suite struct FlowSpansTests {
    private static func tracer() -> InMemoryTracer {
        let counter = Locked(0)
        @Sendable func next(_ digits: Int) -> String {
            let value = counter.withLock { count -> Int in
                count += 1
                return count
            }
            return String(repeating: "0", count: digits - 1) + String(value, radix: 16).suffix(1)
        }
        return InMemoryTracer(idGenerator: .init(nextTraceID: { next(32) }, nextSpanID: { next(16) }))
    }

    private static func flow(inbound: Bool = false, status: Int = 201, body: String = #"{"sku":9}"#) -> (started: NetworkLog, finished: FlowFinished) {
        var log = NetworkLog(
            request: Request(method: "POST", url: inbound ? "http://svc.local:8080/items?x=1" : "https://api.local/items",
                             headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                                       HTTPHeader(name: "Authorization", value: "<redacted>")],
                             body: CapturedBody(data: Data(body.utf8))),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 1_800_000_000)))
        log.direction = inbound ? .inbound : nil
        let finished = FlowFinished(
            id: log.id, state: .completed,
            response: Response(statusCode: status, headers: [HTTPHeader(name: "Location", value: "/items/9")],
                               body: CapturedBody(data: Data("created".utf8))),
            timing: Timing(startedAt: log.timing.startedAt, finished: 0.125))
        return (log, finished)
    }

    /// What the receiver makes of a recorded span.
    private static func received(_ span: FinishedInMemorySpan) throws -> NetworkLog {
        var otlp = OTLPSpan()
        otlp.traceID = try #require(PythonSDKExportTests.bytes(hex: span.traceID))
        otlp.spanID = try #require(PythonSDKExportTests.bytes(hex: span.spanID))
        otlp.kind = span.kind == .server ? .server : .client
        otlp.startTimeUnixNano = span.startInstant.nanosecondsSinceEpoch
        otlp.endTimeUnixNano = span.endInstant.nanosecondsSinceEpoch
        span.attributes.forEach { key, value in
            let converted: AttributeValue = switch value {
            case .string(let string): .string(string)
            case .stringArray(let strings): .array(strings.map { .string($0) })
            case .int64(let int): .int(int)
            case .int32(let int): .int(Int64(int))
            default: .other
            }
            otlp.attributes.pairs.append((key, converted))
        }
        return try #require(SpanFlow.log(for: otlp, parent: nil))
    }

    @Test(arguments: [false, true])
    func aFlowBecomesASpanTheReceiverReadsBackAsTheSameFlow(inbound: Bool) throws {
        let tracer = Self.tracer()
        let spans = FlowSpans(.includingBodies, tracer: tracer)
        let (log, finished) = Self.flow(inbound: inbound)
        spans.observe(.flowStarted(log))
        #expect(tracer.finishedSpans.isEmpty)
        spans.observe(.flowFinished(finished))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.kind == (inbound ? .server : .client))
        #expect(span.operationName == "POST")

        let back = try Self.received(span)
        #expect(back.request.method == "POST")
        #expect(back.request.url == log.request.url)
        #expect(back.direction == log.direction)
        // SpanAttributes is a dictionary: the order between header names is not kept.
        #expect(back.request.headers.sorted { $0.name < $1.name } == [HTTPHeader(name: "authorization", value: "<redacted>"),
                                                                     HTTPHeader(name: "content-type", value: "application/json")])
        #expect(back.request.body?.data == Data(#"{"sku":9}"#.utf8))
        #expect(back.response?.statusCode == 201)
        #expect(back.response?.headers == [HTTPHeader(name: "location", value: "/items/9")])
        #expect(back.response?.body?.data == Data("created".utf8))
        #expect(back.timing.startedAt == log.timing.startedAt)
        #expect(back.timing.duration == 0.125)
        #expect(back.state == .completed)
    }

    /// The conventions write an IPv6 server address without brackets; the
    /// receiver puts them back, with the port.
    @Test func aServiceOnIPv6ReadsBackWithItsAddressAndPort() throws {
        let tracer = Self.tracer()
        let spans = FlowSpans(.enabled, tracer: tracer)
        var log = NetworkLog(request: Request(method: "GET", url: "http://[::1]:8080/items?x=1"),
                             timing: Timing(startedAt: Date(timeIntervalSince1970: 1_800_000_000)))
        log.direction = .inbound
        spans.observe(.flowStarted(log))
        spans.observe(.flowFinished(FlowFinished(id: log.id, state: .completed, response: Response(statusCode: 200),
                                                 timing: Timing(startedAt: log.timing.startedAt, finished: 0.01))))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["server.address"]?.toSpanAttribute() == .string("::1"))
        #expect(try Self.received(span).request.url == "http://[::1]:8080/items?x=1")
    }

    @Test func bodiesStayOutUnlessTheAppOptsIn() throws {
        let tracer = Self.tracer()
        let spans = FlowSpans(.enabled, tracer: tracer)
        let (log, finished) = Self.flow()
        spans.observe(.flowStarted(log))
        spans.observe(.flowFinished(finished))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["http.request.body.content"] == nil)
        #expect(span.attributes["http.response.body.content"] == nil)
        #expect(span.attributes["http.request.body.size"]?.toSpanAttribute() == .int64(9))
    }

    @Test func theSpanNestsInTheContextCurrentWhenTheFlowStarted() throws {
        let tracer = Self.tracer()
        let spans = FlowSpans(.enabled, tracer: tracer)
        let handler = tracer.startSpan("handle order", context: .topLevel, ofKind: .server, at: DefaultTracerClock.now)
        let (log, finished) = Self.flow(status: 503)
        ServiceContext.withValue(handler.context) { spans.observe(.flowStarted(log)) }
        // Finished elsewhere, outside that context, as clients do.
        spans.observe(.flowFinished(finished))
        handler.end()
        let span = try #require(tracer.finishedSpans.first { $0.kind == .client })
        #expect(span.parentSpanID == handler.spanID)
        #expect(span.traceID == handler.traceID)
        // A client's 5xx is an error, in the attributes and the status.
        #expect(span.attributes["error.type"]?.toSpanAttribute() == .string("503"))
        #expect(span.status?.code == .error)
    }

    @Test func spansAreOffByDefault() {
        #expect(CaptureAgent.Configuration().spans == .disabled)
    }
}
