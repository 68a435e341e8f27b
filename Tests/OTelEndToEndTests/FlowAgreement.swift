// Built with the SwiftOTel trait (on by default; Package.swift).
#if SwiftOTel
import Foundation
import Testing
import WireProtocol

/// What a flow read back from the agent's span (through swift-otel and
/// netinspect's OTLP receiver) must share with the agent's own flow.
enum FlowAgreement {
    /// Start and end times agree within this many seconds: the span carries
    /// nanoseconds, a flow's `Date` a `Double`.
    static let timeTolerance = 0.001

    static func check(span: NetworkLog, agent: NetworkLog, sourceLocation: SourceLocation = #_sourceLocation) {
        let url = agent.request.url
        #expect(span.request.method == agent.request.method, "method of \(url)", sourceLocation: sourceLocation)
        #expect(span.request.url == agent.request.url, sourceLocation: sourceLocation)
        #expect(span.direction == agent.direction, "direction of \(url)", sourceLocation: sourceLocation)
        #expect(span.response?.statusCode == agent.response?.statusCode, "status of \(url)", sourceLocation: sourceLocation)
        #expect(span.state == agent.state, "state of \(url)", sourceLocation: sourceLocation)

        // The agent's error travels as `error.type` "DOMAIN CODE" and the
        // span status's message; the receiver puts them back together.
        let expectedError = agent.error.map { "\($0.domain) \($0.code): \($0.message)" }
        #expect(span.error?.message == expectedError, "error of \(url)", sourceLocation: sourceLocation)

        // Header names are lowercase attribute keys; attributes are a
        // dictionary, so only the order within one name is kept.
        #expect(grouped(span.request.headers) == grouped(agent.request.headersAsSent), "request headers of \(url)", sourceLocation: sourceLocation)
        #expect(grouped(span.response?.headers ?? []) == grouped(agent.response?.headers ?? []), "response headers of \(url)",
                sourceLocation: sourceLocation)

        #expect(span.request.body?.size == agent.request.body?.size, "request body size of \(url)", sourceLocation: sourceLocation)
        #expect(span.response?.body?.size == agent.response?.body?.size, "response body size of \(url)", sourceLocation: sourceLocation)

        let startGap = abs(span.timing.startedAt.timeIntervalSince(agent.timing.startedAt))
        #expect(startGap < timeTolerance, "start of \(url) differs by \(startGap) s", sourceLocation: sourceLocation)
        let endGap = abs((span.timing.duration ?? -1) - (agent.timing.duration ?? 0))
        #expect(endGap < timeTolerance, "duration of \(url) differs by \(endGap) s", sourceLocation: sourceLocation)
    }

    /// Values by lowercased name, in order within each name.
    static func grouped(_ headers: [HTTPHeader]) -> [String: [String]] {
        headers.reduce(into: [:]) { $0[$1.name.lowercased(), default: []].append($1.value) }
    }
}
#endif
