import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// How the log reads Foundation's requests and header dictionaries:
/// URLSession keeps a request's and a response's fields unordered, so the
/// log sorts them.
extension FlowStart {
    /// A URLSession flow for `urlRequest` and the session's additional headers.
    init(request urlRequest: URLRequest, additionalHeaders: [AnyHashable: Any]?, sessionID: Int, taskID: Int,
         path: CaptureSource.Path = .resent) {
        self.init(method: urlRequest.httpMethod ?? "GET", url: urlRequest.url?.absoluteString ?? "",
                  headers: FlowRecorder.requestHeaders(urlRequest.allHTTPHeaderFields ?? [:], additional: additionalHeaders),
                  sessionID: sessionID, taskID: taskID)
        source = CaptureSource(client: .urlSession, path: path)
        // As libcurl decodes: whenever `Content-Encoding` names a coding.
        responseBodyIsDecoded = nil
    }
}

extension FlowRecorder {
    /// The headers the request goes out with, as far as Foundation exposes
    /// them: the request's own fields, then the session's additional headers
    /// it does not override, each group sorted by name (Foundation keeps them
    /// in dictionaries, so the order they were set in is already lost).
    static func requestHeaders(_ own: [String: String], additional: [AnyHashable: Any]?) -> [HTTPHeader] {
        let ownNames = Set(own.keys.map { $0.lowercased() })
        let extra = (additional ?? [:]).compactMap { key, value -> HTTPHeader? in
            guard let name = key as? String, !ownNames.contains(name.lowercased()) else { return nil }
            return HTTPHeader(name: name, value: "\(value)")
        }
        return sortedHeaders(own) + extra.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// Foundation's fields sorted by name, case aside: its dictionaries
    /// keep no order, and a sorted head reads the same every time.
    package static func sortedHeaders(_ fields: [String: String]) -> [HTTPHeader] {
        // Each name lowercased once, not twice in every comparison.
        fields.map { (order: $0.key.lowercased(), header: HTTPHeader(name: $0.key, value: $0.value)) }
            .sorted { $0.order < $1.order }
            .map(\.header)
    }
}
