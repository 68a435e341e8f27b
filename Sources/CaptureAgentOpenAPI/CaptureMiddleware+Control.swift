import CaptureAgent
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import OpenAPIRuntime
import WireProtocol

/// A viewer's traffic rules and breakpoints, for an app that allows control.
/// A middleware sees each request before the transport and may change it,
/// answer it, or wait before calling `next`, so everything the URLSession
/// capture does is possible here, on any transport.
extension CaptureMiddleware {
    /// A request as the transport will get it.
    struct Outgoing {
        var request: HTTPRequest
        var body: HTTPBody?
        var baseURL: URL
        var url: URL
    }

    /// What the rules made of a request.
    enum Ruled {
        case send(Outgoing, FlowChanges?)
        case answer(HTTPResponse, Data, FlowChanges)
    }

    /// Applies the rules in force; `.send` with no changes when none matched.
    func applyRules(to outgoing: Outgoing) -> Ruled {
        let rules = agent.rules.rules
        guard !rules.isEmpty else { return .send(outgoing, nil) }
        var probe = URLRequest(url: outgoing.url)
        probe.httpMethod = outgoing.request.method.rawValue
        for field in outgoing.request.headerFields { probe.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        switch rules.apply(to: probe) {
        case .unchanged:
            return .send(outgoing, nil)
        case .send(let changed, let changes):
            var result = outgoing
            if let url = changed.url, url != outgoing.url { result.retarget(to: url) }
            result.request.headerFields = Self.fields(changed.allHTTPHeaderFields ?? [:], keepingOrderOf: outgoing.request.headerFields)
            return .send(result, changes)
        case .answer(let response, let data, let changes):
            var fields = HTTPFields()
            for (name, value) in response.allHeaderFields {
                if let text = name as? String, let name = HTTPField.Name(text) { fields.append(HTTPField(name: name, value: "\(value)")) }
            }
            return .answer(HTTPResponse(status: HTTPResponse.Status(code: response.statusCode), headerFields: fields), data, changes)
        }
    }

    /// An edit's header fields as HTTP fields, redacted values restored from `original`.
    static func fields(restoring edited: [HTTPHeader], from original: HTTPFields, marker: String) -> HTTPFields {
        let originalHeaders = original.map { HTTPHeader(name: $0.name.rawName, value: $0.value) }
        var fields = HTTPFields()
        for header in Breakpoints.restoringRedacted(edited, from: originalHeaders, marker: marker) {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        return fields
    }

    /// The fields of `dictionary`, in the order `original` had them, new ones last.
    static func fields(_ dictionary: [String: String], keepingOrderOf original: HTTPFields) -> HTTPFields {
        var remaining = dictionary
        var fields = HTTPFields()
        for field in original {
            guard let key = remaining.keys.first(where: { $0.caseInsensitiveCompare(field.name.rawName) == .orderedSame }),
                  let value = remaining.removeValue(forKey: key)
            else { continue }
            // Foundation joined repeated fields with ", "; keep them as one.
            if fields[field.name] == nil { fields.append(HTTPField(name: field.name, value: value)) }
        }
        for (name, value) in remaining.sorted(by: { $0.key < $1.key }) {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return fields
    }

    /// Holds flow `id` until the viewer (or the timeout, or the task's
    /// cancellation, or the viewer going away) decides; says so on both ends.
    func hold(_ id: FlowID, phase: HoldPhase, response: Response? = nil) async -> Breakpoints.Decision {
        let breakpoints = agent.breakpoints
        guard !Task.isCancelled else { return .release(.cancelled) }
        agent.emit(.held(FlowHold(id: id, phase: phase, response: response, timeout: breakpoints.timeout)))
        let decision = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Breakpoints.Decision, Never>) in
                breakpoints.hold(id, phase: phase) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            breakpoints.decide(id, .release(.cancelled))
        }
        agent.emit(.released(FlowRelease(id: id, phase: phase, reason: decision.reason)))
        return decision
    }

    /// The request a person made of `outgoing` at a breakpoint.
    func applying(_ edit: WireProtocol.Request, to outgoing: Outgoing) -> Outgoing {
        var result = outgoing
        if let method = HTTPRequest.Method(edit.method) { result.request.method = method }
        if let url = URL(string: edit.url), url.scheme != nil, url.host != nil, url != outgoing.url { result.retarget(to: url) }
        result.request.headerFields = Self.fields(restoring: edit.headers, from: outgoing.request.headerFields,
                                                  marker: agent.configuration.redactionMarker)
        if edit.body?.isTruncated != true {
            // The person's own body (or none): the original stream is not read.
            let data = Breakpoints.body(of: edit.body, original: nil) ?? Data()
            result.body = data.isEmpty ? nil : HTTPBody(data)
            result.request.headerFields[.contentLength] = data.isEmpty ? nil : String(data.count)
        }
        return result
    }

    /// The response a person made of the one that arrived.
    func applying(_ edit: Response, to response: HTTPResponse, body: Data) -> (HTTPResponse, Data) {
        var fields = Self.fields(restoring: edit.headers, from: response.headerFields, marker: agent.configuration.redactionMarker)
        let data = Breakpoints.body(of: edit.body, original: body) ?? Data()
        if fields[.contentLength] != nil { fields[.contentLength] = String(data.count) }
        let status = (100...999).contains(edit.statusCode) ? edit.statusCode : response.status.code
        return (HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: fields), data)
    }
}

extension CaptureMiddleware.Outgoing {
    /// Sends the request to `url` instead: its origin becomes the base URL,
    /// its path and query the request's path.
    mutating func retarget(to target: URL) {
        guard var origin = URLComponents(url: target, resolvingAgainstBaseURL: true) else { return }
        let path = (origin.percentEncodedPath.isEmpty ? "/" : origin.percentEncodedPath)
            + (origin.percentEncodedQuery.map { "?" + $0 } ?? "")
        origin.percentEncodedPath = ""
        origin.percentEncodedQuery = nil
        origin.fragment = nil
        guard let base = origin.url else { return }
        baseURL = base
        request.path = path
        if request.authority != nil { request.authority = origin.percentEncodedHost.map { host in origin.port.map { "\(host):\($0)" } ?? host } }
        url = target
    }
}
