import Foundation
import NIOConcurrencyHelpers
import ProtobufWire
import WireProtocol

/// The lines of the detail view's tabs, before wrapping.
enum DetailContent {
    /// `views`: the body view chosen per content type (``BodyFormatter/View``), by ``Format/shortContentType(_:)``.
    /// `schema`: the `--proto` descriptor sets, for the gRPC tab.
    /// `bodyLimit`: the most lines of a body (``BodyFormatter/maximumLines``
    /// unless a search asked for the whole body).
    static func lines(for record: FlowStore.Record, agent: AgentInfo?, tab: DetailTab, timeZone: TimeZone,
                      views: [String: BodyFormatter.View] = [:], schema: ProtoSchema = ProtoSchema(),
                      bodyLimit: Int = BodyFormatter.maximumLines) -> [StyledLine] {
        switch tab {
        case .request: request(record, agent: agent, views: views, bodyLimit: bodyLimit)
        case .response: response(record, arrived: false, views: views, bodyLimit: bodyLimit)
        case .timing: timing(record.log, held: record.heldTime, timeZone: timeZone)
        case .grpc: grpc(record.log, schema: schema, dropped: record.bodiesDropped)
        case .messages: messages(record.log, schema: schema)
        }
    }

    private static func request(_ record: FlowStore.Record, agent: AgentInfo?, views: [String: BodyFormatter.View],
                                bodyLimit: Int) -> [StyledLine] {
        let request = record.log.request
        var lines: [StyledLine] = [StyledLine([Span(request.method, .method), Span(" "), Span(request.url)])]
        if let agent {
            let hello = agent.hello
            lines.append(StyledLine("from \(hello.appName) (pid \(hello.processID) on \(hello.hostName)), session \(record.log.sessionID) task \(record.log.taskID)", .dim))
        }
        if let source = record.log.source { lines.append(StyledLine(sourceLine(source), .dim)) }
        lines.append(StyledLine("flow id \(record.log.id)  (~id \(DumpFormat.shortID(record.log.id)) filters to it)", .dim))
        if let hold = record.hold { lines += holdLines(hold, inbound: record.log.isInbound) }
        if let changes = record.log.changes { lines += changeLines(changes, request: request, source: record.log.source) }
        lines.append("")
        lines += requestHeaders(request, client: record.log.source?.client)
        lines += queryTable(request.url)
        lines += requestCookies(request.headers)
        lines.append("")
        if let body = request.body {
            lines += bodyLines(body, contentType: request.headers.first("Content-Type"), dropped: record.bodiesDropped, views: views,
                               limit: bodyLimit)
        } else {
            lines.append(StyledLine("No request body", .dim))
        }
        return lines
    }

    /// What a held flow waits for, and the keys that answer it. A request
    /// the app received waits before its handler, its response before the
    /// client gets it, and a kill refuses the client with 503.
    static func holdLines(_ hold: FlowHold, inbound: Bool) -> [StyledLine] {
        let what = switch (hold.phase, inbound) {
        case (.request, false): "before its request is sent"
        case (.response, false): "before the app sees its response"
        case (.request, true): "before the app's handler runs"
        case (.response, true): "before its client gets the response"
        }
        return ["", StyledLine([
            Span("HELD ", .warning),
            Span("at a breakpoint \(what): a resumes, e edits (saving resumes with the edit), X kills\(inbound ? " (503 to the client)" : ""); "
                 + "it goes on unmodified after \(Int(hold.timeout)) s"),
        ])]
    }

    /// `arrived`: a response held at a breakpoint, which the agent has whole
    /// although the flow's state still says it is being received.
    private static func response(_ record: FlowStore.Record, arrived: Bool, views: [String: BodyFormatter.View],
                                 bodyLimit: Int = BodyFormatter.maximumLines) -> [StyledLine] {
        let log = record.log
        var lines: [StyledLine] = []
        if let hold = record.hold, hold.phase == .response, let held = hold.response {
            lines += holdLines(hold, inbound: record.log.isInbound)
            lines.append(StyledLine("The response as it arrived (the app has not seen it):", .dim))
            var shown = record
            shown.log.response = held
            return lines + response(shown.withoutHold, arrived: true, views: views)
        }
        if let response = log.response {
            lines.append(StyledLine([
                Span("HTTP \(response.statusCode) \(Format.reason(response.statusCode))", Format.style(forStatus: response.statusCode)),
                Span(log.state == .responded && !arrived ? (Format.isStreaming(log) ? "  \(Format.streamingLabel): the body so far" : "  (receiving body…)") : "",
                     .pending),
            ]))
            if log.state == .cancelled {
                lines.append(StyledLine("Cancelled: the app got a cancellation error, not this response", .failed))
            }
            lines.append("")
            lines += redirects(log.redirects)
            lines += headers(response.headers)
            lines += responseCookies(response.headers)
            lines.append("")
            let contentType = response.mimeType ?? response.headers.first("Content-Type")
            if let body = response.body {
                lines += bodyLines(body, contentType: contentType, dropped: record.bodiesDropped, views: views, limit: bodyLimit)
            } else {
                lines.append(StyledLine(log.state.isFinal ? "No response body" : "Body not received yet", .dim))
            }
        } else if log.state == .pending {
            lines.append(StyledLine("Waiting for the response…", .pending))
            lines += redirects(log.redirects)
        } else {
            lines.append(StyledLine("No response (\(log.state.rawValue))", .failed))
            lines.append("")
            lines += redirects(log.redirects)
        }
        if let error = log.error {
            if lines.last != "" { lines.append("") }
            lines.append(StyledLine("Error", .heading))
            lines.append(StyledLine(Format.errorText(error), .error))
        }
        return lines
    }

    /// "captured by URLSession, in-place · operation getFeed"
    static func sourceLine(_ source: CaptureSource) -> String {
        var text = "captured from \(source.client)"
        if let path = source.path { text += ", \(path)" }
        if let operation = source.operationID { text += " · operation \(operation)" }
        return text
    }

    /// The request head as sent: the app's fields, then those the client
    /// added, marked, so "Headers (0)" never hides what went on the wire.
    private static func requestHeaders(_ request: WireProtocol.Request, client: CaptureSource.Client?) -> [StyledLine] {
        guard !request.clientHeaders.isEmpty else { return headers(request.headers) }
        let by = client.map { "added by \($0)" } ?? "added by the client"
        var lines = [StyledLine([
            Span("Headers (\(request.headers.count + request.clientHeaders.count))", .heading),
            Span("  \(request.headers.count) set by the app, \(request.clientHeaders.count) \(by)", .dim),
        ])]
        for header in request.headers {
            lines.append(StyledLine([Span(header.name, .jsonKey), Span(": "), Span(header.value)]))
        }
        for header in request.clientHeaders {
            lines.append(StyledLine([Span(header.name, .dim), Span(": ", .dim), Span(header.value, .dim), Span("  + \(by)", .dim)]))
        }
        return lines
    }

    private static func headers(_ headers: [HTTPHeader]) -> [StyledLine] {
        var lines = [StyledLine("Headers (\(headers.count))", .heading)]
        for header in headers {
            lines.append(StyledLine([Span(header.name, .jsonKey), Span(": "), Span(header.value)]))
        }
        return lines
    }

    private static func redirects(_ hops: [RedirectHop]) -> [StyledLine] {
        guard !hops.isEmpty else { return [] }
        var lines = [StyledLine("Redirects (\(hops.count))", .heading)]
        for hop in hops {
            lines.append(StyledLine([
                Span("\(hop.statusCode) ", Format.style(forStatus: hop.statusCode)),
                Span(hop.from), Span(" → ", .dim), Span(hop.to),
            ]))
        }
        lines.append("")
        return lines
    }

    /// The body's heading, then the body in the view chosen for its content type.
    private static func bodyLines(_ body: CapturedBody, contentType: String?, dropped: Bool, views: [String: BodyFormatter.View],
                                  limit: Int) -> [StyledLine] {
        let view = views[Format.shortContentType(contentType)] ?? .auto
        var text = "Body  \(Format.size(body.size))"
        if let contentType { text += "  \(contentType)" }
        if body.isDecoded { text += "  (decoded by the client)" }
        return [StyledLine([Span(text, .heading), Span("  view: \(view.rawValue)", .dim)])]
            + BodyFormatter.lines(for: body, contentType: contentType, dropped: dropped, view: view, limit: limit)
    }

    // MARK: Timing

    private static let waterfallWidth = 40

    private static func timing(_ log: NetworkLog, held: HeldTime, timeZone: TimeZone) -> [StyledLine] {
        let timing = log.timing
        var lines: [StyledLine] = [
            StyledLine([Span("Started       ", .heading), Span(Format.timestamp(timing.startedAt, in: timeZone))]),
        ]
        if let source = log.source {
            lines.append(StyledLine([Span("Captured      ", .heading), Span(captureDescription(source))]))
        }
        lines += connectionLines(log)
        lines.append("")
        let points: [(String, Double?)] = [
            ("Request sent", timing.requestSent),
            ("First byte", timing.firstResponseByte),
            ("Finished", timing.finished),
        ]
        for (name, offset) in points {
            guard let offset else {
                lines.append(StyledLine([Span(name.padding(toLength: 14, withPad: " ", startingAt: 0), .heading), Span("—", .dim)]))
                continue
            }
            lines.append(StyledLine([
                Span(name.padding(toLength: 14, withPad: " ", startingAt: 0), .heading),
                Span(("+" + Format.milliseconds(offset)).fitted(toWidth: 12, alignRight: true)),
                Span("   " + Format.time(timing.date(at: offset), in: timeZone, milliseconds: true), .dim),
            ]))
        }
        lines.append("")
        lines.append(StyledLine("Waterfall", .heading))
        let end = timing.finished ?? timing.firstResponseByte ?? timing.requestSent ?? 0
        // A hold is its own phase, not sending or receiving time: the agent's
        // offsets include it, the inspector measured it between `held` and
        // `released` (clamped, as the two clocks differ).
        let heldBefore = min(held.request, timing.requestSent ?? held.request)
        let receivedAt = timing.finished.map { max(timing.firstResponseByte ?? 0, $0 - held.response) }
        var phases: [(String, Double, Double?, Style)] = []
        if heldBefore > 0 { phases.append(("held", 0, heldBefore, .warning)) }
        if log.isInbound {
            // The service's side: the agent marks the request sent when the
            // handler has read its body, or at the response head when it
            // read none; then the whole time up to the head is the handler's.
            let readBody = timing.requestSent.map { $0 < (timing.firstResponseByte ?? .infinity) } ?? false
            if readBody { phases.append(("request in", heldBefore, timing.requestSent, .barWaiting)) }
            phases += [
                ("handler", readBody ? timing.requestSent ?? 0 : heldBefore, timing.firstResponseByte, .barWaiting),
                ("response", timing.firstResponseByte ?? 0, receivedAt, .barReceiving),
            ]
        } else {
            phases += [
                ("sending", heldBefore, timing.requestSent, .barWaiting),
                ("waiting", timing.requestSent ?? 0, timing.firstResponseByte, .barWaiting),
                ("receiving", timing.firstResponseByte ?? 0, receivedAt, .barReceiving),
            ]
        }
        if held.response > 0, let receivedAt { phases.append(("held", receivedAt, timing.finished, .warning)) }
        for (name, start, stop, style) in phases {
            let label = Span(name.padding(toLength: 11, withPad: " ", startingAt: 0))
            guard let stop else {
                lines.append(StyledLine([label, Span("(not yet)", .dim)]))
                continue
            }
            let scale = end > 0 ? Double(waterfallWidth) / end : 0
            let offset = Int((start * scale).rounded())
            let length = max(1, Int((stop * scale).rounded()) - offset)
            lines.append(StyledLine([
                label,
                Span(String(repeating: " ", count: min(offset, waterfallWidth - 1))),
                Span(String(repeating: "█", count: min(length, waterfallWidth - min(offset, waterfallWidth - 1))), style),
                Span(String(repeating: " ", count: max(0, waterfallWidth - offset - length))),
                Span(Format.milliseconds(stop - start).fitted(toWidth: 11, alignRight: true)),
            ]))
        }
        if let duration = timing.duration {
            lines.append(StyledLine([
                Span("total".padding(toLength: 11 + waterfallWidth, withPad: " ", startingAt: 0), .heading),
                Span(Format.milliseconds(duration).fitted(toWidth: 11, alignRight: true)),
            ]))
        }
        if let phases = timing.phases { lines += phaseLines(phases) }
        return lines
    }

    private static func captureDescription(_ source: CaptureSource) -> String {
        switch source.path {
        case .inPlace?: "\(source.client), in place (the client ran the app's own request)"
        case .resent?: "\(source.client), re-sent (the agent sent the request on the app's behalf)"
        case .wire?: "\(source.client), on the wire (read off the connection)"
        case .tracer?: "\(source.client), by its tracer (it never reached a connection)"
        case let path?: "\(source.client), \(path)"
        case nil: "\(source.client)"
        }
    }

    /// The client's own phase measurements, as a waterfall of their own:
    /// each phase starts where the previous one ended.
    private static func phaseLines(_ phases: TransferPhases) -> [StyledLine] {
        let known = phases.named.compactMap { phase in phase.seconds.map { (phase.name, $0) } }
        guard !known.isEmpty else { return [] }
        let total = known.reduce(0) { $0 + $1.1 }
        var lines: [StyledLine] = ["", StyledLine("Phases" + (phases.source.map { " (measured by \($0))" } ?? ""), .heading)]
        var start = 0.0
        for (name, seconds) in known {
            let scale = total > 0 ? Double(waterfallWidth) / total : 0
            let offset = min(Int((start * scale).rounded()), waterfallWidth - 1)
            let length = max(1, min(Int(((start + seconds) * scale).rounded()) - offset, waterfallWidth - offset))
            lines.append(StyledLine([
                Span(name.padding(toLength: 11, withPad: " ", startingAt: 0)),
                Span(String(repeating: " ", count: offset)),
                Span(String(repeating: "█", count: length), name == "receive" ? .barReceiving : .barWaiting),
                Span(String(repeating: " ", count: max(0, waterfallWidth - offset - length))),
                Span(Format.milliseconds(seconds).fitted(toWidth: 11, alignRight: true)),
            ]))
            start += seconds
        }
        return lines
    }
}

extension AppState {
    /// The detail view's lines, wrapped to the screen width. Formatting a
    /// large body takes milliseconds, and the view is drawn on every event
    /// and clock tick, so the last result is kept for as long as the flow,
    /// tab and width stay the same.
    func detailLines(_ detail: DetailState) -> [StyledLine] {
        guard let record = session.store[detail.sequence] else {
            return [StyledLine("This flow is no longer stored (evicted or cleared).", .warning)]
        }
        let key = DetailLinesKey(sequence: record.sequence, revision: record.revision, tab: detail.tab, width: size.width, views: bodyViews,
                                 wholeBody: detail.showsWholeBody)
        if let lines = detailCache.lines(for: key) { return relationLines(detail) + lines }
        let agent = record.agent.flatMap { session.agents.indices.contains($0) ? session.agents[$0] : nil }
        let lines = DetailContent.lines(for: record, agent: agent, tab: detail.tab, timeZone: timeZone, views: bodyViews, schema: protoSchema,
                                        bodyLimit: detail.showsWholeBody ? Int.max : BodyFormatter.maximumLines)
            .flatMap { $0.wrapped(toWidth: size.width) }
        detailCache.store(lines, for: key)
        return relationLines(detail) + lines
    }
}

/// The detail view's lines depend on these alone.
struct DetailLinesKey: Hashable, Sendable {
    var sequence: Int
    var revision: Int
    var tab: DetailTab
    var width: Int
    var views: [String: BodyFormatter.View]
    var wholeBody: Bool
}

/// Remembers the last lines formatted (the detail view's, the diff's): a
/// memo of a pure function of its key, so sharing it between copies of the
/// state changes no result.
final class LinesMemo<Key: Hashable & Sendable>: Sendable {
    private let entry = NIOLockedValueBox<(key: Key, lines: [StyledLine])?>(nil)

    func lines(for key: Key) -> [StyledLine]? {
        entry.withLockedValue { $0?.key == key ? $0?.lines : nil }
    }

    func store(_ lines: [StyledLine], for key: Key) {
        entry.withLockedValue { $0 = (key, lines) }
    }
}
