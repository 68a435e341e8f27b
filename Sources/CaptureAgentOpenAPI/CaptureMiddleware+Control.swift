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
        let reason: FlowRelease.Reason = switch decision {
        case .kill: .killed
        case .resume: .resumed
        case .release(let reason): reason
        }
        agent.emit(.released(FlowRelease(id: id, phase: phase, reason: reason)))
        return decision
    }

    /// The request a person made of `outgoing` at a breakpoint.
    func applying(_ edit: WireProtocol.Request, to outgoing: Outgoing) -> Outgoing {
        var result = outgoing
        if let method = HTTPRequest.Method(edit.method) { result.request.method = method }
        if let url = URL(string: edit.url), url.scheme != nil, url.host != nil, url != outgoing.url { result.retarget(to: url) }
        let marker = agent.configuration.redactionMarker
        var fields = HTTPFields()
        for header in edit.headers {
            guard let name = HTTPField.Name(header.name) else { continue }
            let value = header.value == marker ? (outgoing.request.headerFields[name] ?? header.value) : header.value
            fields.append(HTTPField(name: name, value: value))
        }
        result.request.headerFields = fields
        if let body = edit.body, !body.isTruncated {
            result.body = body.data.isEmpty ? nil : HTTPBody(body.data)
            result.request.headerFields[.contentLength] = body.data.isEmpty ? nil : String(body.data.count)
        } else if edit.body == nil {
            result.body = nil
            result.request.headerFields[.contentLength] = nil
        }
        return result
    }

    /// The response a person made of the one that arrived.
    func applying(_ edit: Response, to response: HTTPResponse, body: Data) -> (HTTPResponse, Data) {
        let marker = agent.configuration.redactionMarker
        var fields = HTTPFields()
        for header in edit.headers {
            guard let name = HTTPField.Name(header.name) else { continue }
            fields.append(HTTPField(name: name, value: header.value == marker ? (response.headerFields[name] ?? header.value) : header.value))
        }
        let data = if let edited = edit.body, !edited.isTruncated { edited.data } else if edit.body == nil { Data() } else { body }
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
