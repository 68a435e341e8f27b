import Foundation
internal import Tracing
import WireProtocol

/// Turns the agent's flow events into one span per finished flow, started
/// in the `ServiceContext` current when the flow's `flowStarted` was emitted,
/// through `InstrumentationSystem.tracer`.
///
/// The one hook is ``observe(_:)``, which ``CaptureAgent`` calls with every
/// event it emits. Flows in flight are held until they finish; at most
/// ``maximumInFlight`` at once, later ones get no span.
final class FlowSpans: Sendable {
    private struct InFlight {
        var log: NetworkLog
        var context: ServiceContext
    }

    static let maximumInFlight = 10_000
    private let includesBodies: Bool
    /// Nil: the bootstrapped tracer, looked up per span (the app may
    /// bootstrap after starting the agent).
    private let tracer: (any Tracer)?
    private let inFlight = Locked<[FlowID: InFlight]>([:])

    init(_ emission: CaptureAgent.SpanEmission, tracer: (any Tracer)? = nil) {
        includesBodies = emission.includesBodies
        self.tracer = tracer
    }

    func observe(_ message: Message) {
        switch message {
        case .flowStarted(let log):
            let context = ServiceContext.current ?? .topLevel
            inFlight.withLock { flows in
                if flows.count < Self.maximumInFlight { flows[log.id] = InFlight(log: log, context: context) }
            }
        case .flowResponse(let event):
            inFlight.withLock { $0[event.id]?.log.apply(event) }
        case .grpcMessage(let event):
            inFlight.withLock { $0[event.id]?.log.apply(event) }
        case .webSocketMessage(let event):
            inFlight.withLock { $0[event.id]?.log.apply(event) }
        case .bodyPart:
            // The finish carries the whole body; a span needs no preview.
            break
        case .flowFinished(let event):
            guard var flow = inFlight.withLock({ $0.removeValue(forKey: event.id) }) else { return }
            flow.log.apply(event)
            emit(flow)
        case .hello, .status, .held, .released:
            break
        }
    }

    private func emit(_ flow: InFlight) {
        let log = flow.log
        let start = UInt64(max(0, log.timing.startedAt.timeIntervalSince1970 * 1e9))
        let end = start + UInt64((log.timing.duration ?? 0) * 1e9)
        let span = (tracer ?? InstrumentationSystem.tracer).startSpan(
            log.request.method, context: flow.context, ofKind: log.isInbound ? .server : .client,
            at: DefaultTracerClock.Instant(nanosecondsSinceEpoch: start))
        let attributes = FlowSpanAttributes.attributes(of: log, includingBodies: includesBodies)
        span.attributes = attributes
        if attributes["error.type"] != nil { span.setStatus(SpanStatus(code: .error, message: log.error?.message)) }
        span.end(at: DefaultTracerClock.Instant(nanosecondsSinceEpoch: end))
    }
}

/// The HTTP semantic conventions (stable names) for one flow.
enum FlowSpanAttributes {
    static func attributes(of log: NetworkLog, includingBodies: Bool) -> SpanAttributes {
        var attributes = SpanAttributes()
        attributes["http.request.method"] = log.request.method
        // The address without an IPv6 address's brackets, as the conventions write it.
        let authority = URLAuthority(url: log.request.url)
        attributes["server.address"] = authority.host.isEmpty ? nil : authority.host
        attributes["server.port"] = authority.port
        if log.isInbound {
            let components = URLComponents(string: log.request.url)
            attributes["url.scheme"] = components?.scheme
            attributes["url.path"] = components?.percentEncodedPath
            attributes["url.query"] = components?.percentEncodedQuery
        } else {
            attributes["url.full"] = log.request.url
        }
        for (name, values) in grouped(log.request.headersAsSent) { attributes["http.request.header.\(name)"] = values }
        if let response = log.response {
            attributes["http.response.status_code"] = response.statusCode
            for (name, values) in grouped(response.headers) { attributes["http.response.header.\(name)"] = values }
            if let body = response.body {
                attributes["http.response.body.size"] = body.size
                if includingBodies, let text = String(validating: body.data, as: UTF8.self) { attributes["http.response.body.content"] = text }
            }
        }
        if let body = log.request.body {
            attributes["http.request.body.size"] = body.size
            if includingBodies, let text = String(validating: body.data, as: UTF8.self) { attributes["http.request.body.content"] = text }
        }
        // The conventions' error line: any 5xx a server sent, any 4xx or 5xx a client got.
        if let error = log.error {
            attributes["error.type"] = "\(error.domain) \(error.code)"
        } else if let status = log.response?.statusCode, status >= (log.isInbound ? 500 : 400) {
            attributes["error.type"] = String(status)
        }
        return attributes
    }

    /// Header values by lowercased name, in first-seen order, as the
    /// conventions' `http.*.header.<name>` string arrays.
    private static func grouped(_ headers: [HTTPHeader]) -> [(String, [String])] {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for header in headers {
            let name = header.name.lowercased()
            if values[name] == nil { order.append(name) }
            values[name, default: []].append(header.value)
        }
        return order.map { ($0, values[$0] ?? []) }
    }
}
