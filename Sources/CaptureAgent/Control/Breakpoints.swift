import FlowFilter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// The connected viewer's breakpoints: its intercept filter and the flows
/// held now, each waiting for the viewer's answer.
///
/// A hold always ends, exactly once: the viewer resumes or kills it, the
/// viewer goes away (``releaseAll(_:)``), the app cancels the task, or its
/// timeout passes. Whoever ends it first wins; the others find nothing.
package final class Breakpoints: Sendable {
    /// How a hold ended, given to the flow that waits.
    package enum Decision: Sendable {
        /// Go on; with an edit when the viewer sent one.
        case resume(FlowResume?)
        /// The viewer killed the flow.
        case kill
        /// Go on unmodified: timeout, viewer gone, or the app cancelled.
        case release(FlowRelease.Reason)

        /// What the `released` message says of it.
        package var reason: FlowRelease.Reason {
            switch self {
            case .kill: .killed
            case .resume: .resumed
            case .release(let reason): reason
            }
        }
    }

    private struct Hold {
        var serial: Int
        var phase: HoldPhase
        var decide: @Sendable (Decision) -> Void
    }

    private struct State {
        var filterText: String?
        var filter: FilterExpression?
        var holds: [FlowID: Hold] = [:]
        var nextSerial = 0
    }

    private let state = Locked(State())
    /// Seconds a flow waits for the viewer before it goes on unmodified.
    package let timeout: TimeInterval

    package init(timeout: TimeInterval) {
        self.timeout = timeout
    }

    /// Whether the viewer asked for breakpoints (one lock, no allocation:
    /// asked for every request while control is allowed).
    package var isActive: Bool { state.withLock { $0.filter != nil } }

    /// Sets the intercept filter; nil or a filter that does not compile
    /// holds nothing. Flows held now stay held (as in mitmproxy).
    package func intercept(_ text: String?) {
        let filter = text.flatMap { try? FilterExpression.parse($0) }
        state.withLock {
            $0.filterText = filter == nil ? nil : text
            $0.filter = filter
        }
    }

    /// Whether the flow, as it stands, is to be held.
    package func matches(_ log: NetworkLog) -> Bool {
        guard let filter = state.withLock({ $0.filter }) else { return false }
        return filter.matches(log)
    }

    /// Holds flow `id` until one decision arrives, which `decide` gets (on
    /// an arbitrary thread). Returns at once.
    package func hold(_ id: FlowID, phase: HoldPhase, decide: @escaping @Sendable (Decision) -> Void) {
        let serial = state.withLock { state in
            state.nextSerial += 1
            state.holds[id] = Hold(serial: state.nextSerial, phase: phase, decide: decide)
            return state.nextSerial
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
            _ = end(id, serial: serial, .release(.timeout))
        }
    }

    /// Ends the hold of flow `id` with `decision`; false when it is not
    /// held (a stale or hostile id: nothing happens).
    @discardableResult
    package func decide(_ id: FlowID, _ decision: Decision) -> Bool {
        end(id, serial: nil, decision)
    }

    /// The phase flow `id` is held in, if it is.
    package func phase(of id: FlowID) -> HoldPhase? {
        state.withLock { $0.holds[id]?.phase }
    }

    /// Ends every hold unmodified and forgets the filter: the viewer went away.
    package func releaseAll(_ reason: FlowRelease.Reason) {
        let holds = state.withLock { state in
            state.filter = nil
            state.filterText = nil
            defer { state.holds.removeAll() }
            return Array(state.holds.values)
        }
        for hold in holds { hold.decide(.release(reason)) }
    }

    /// How many flows are held now.
    package var heldCount: Int { state.withLock { $0.holds.count } }

    private func end(_ id: FlowID, serial: Int?, _ decision: Decision) -> Bool {
        let hold = state.withLock { state -> Hold? in
            guard let hold = state.holds[id], serial == nil || hold.serial == serial else { return nil }
            state.holds[id] = nil
            return hold
        }
        guard let hold else { return false }
        hold.decide(decision)
        return true
    }

    // MARK: - Edits

    /// An edit's header fields, each value left at the redaction `marker`
    /// given back the value of the same name in `original` (the viewer only
    /// ever saw the marker). Shared by every client's breakpoints.
    package static func restoringRedacted(_ edited: [HTTPHeader], from original: [HTTPHeader], marker: String) -> [HTTPHeader] {
        edited.map { header in
            guard header.value == marker,
                  let kept = original.first(where: { $0.name.caseInsensitiveCompare(header.name) == .orderedSame })
            else { return header }
            return HTTPHeader(name: header.name, value: kept.value)
        }
    }

    /// The body an edit asks for: its own; none when it has none; the
    /// original when it is still marked truncated (the viewer saw only the start).
    package static func body(of edit: CapturedBody?, original: Data?) -> Data? {
        guard let edit else { return nil }
        return edit.isTruncated ? original : edit.data
    }

    /// The request a person made of `original` in an editor: method, URL,
    /// header fields and body from `edit`, except that a header whose value
    /// is `marker` keeps the original value (the viewer only saw the
    /// marker), and a body still marked truncated keeps the original body.
    package static func request(_ edit: Request, applyingTo original: URLRequest, body originalBody: Data?, marker: String) -> URLRequest {
        var request = original
        request.httpMethod = edit.method
        if let url = URL(string: edit.url), url.scheme != nil, url.host != nil { request.url = url }
        let originalFields = (original.allHTTPHeaderFields ?? [:]).map { HTTPHeader(name: $0.key, value: $0.value) }
        request.allHTTPHeaderFields = [:]
        for header in restoringRedacted(edit.headers, from: originalFields, marker: marker) {
            request.addValue(header.value, forHTTPHeaderField: header.name)
        }
        if edit.body?.isTruncated != true { request.httpBodyStream = nil }
        let body = body(of: edit.body, original: originalBody)
        request.httpBody = body?.isEmpty == false ? body : nil
        return request
    }

    /// The response a person made of the one that arrived: status, header
    /// fields and body from `edit`, with the same rules for redacted values
    /// and truncated bodies as requests.
    package static func response(_ edit: Response, applyingTo original: HTTPURLResponse, body originalBody: Data,
                                 marker: String) -> (HTTPURLResponse, Data) {
        var fields: [String: String] = [:]
        let originalFields = (original.allHeaderFields as? [String: String] ?? [:]).map { HTTPHeader(name: $0.key, value: $0.value) }
        for header in restoringRedacted(edit.headers, from: originalFields, marker: marker) {
            if let existing = fields.first(where: { $0.key.caseInsensitiveCompare(header.name) == .orderedSame })?.key {
                fields[existing] = (fields[existing] ?? "") + ", " + header.value
            } else {
                fields[header.name] = header.value
            }
        }
        let body = body(of: edit.body, original: originalBody) ?? Data()
        // The body's length is what the app gets, whatever the edit said.
        if let length = fields.keys.first(where: { $0.caseInsensitiveCompare("Content-Length") == .orderedSame }) {
            fields[length] = String(body.count)
        }
        let status = (100...999).contains(edit.statusCode) ? edit.statusCode : original.statusCode
        let response = original.url.flatMap { HTTPURLResponse(url: $0, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields) } ?? original
        return (response, body)
    }
}
