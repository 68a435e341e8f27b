import Foundation
import WireProtocol
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request of netinspect's own client in URLSession's terms, and the
/// record of it as it goes on the wire.
///
/// A `URLRequest` keeps one value per field name, so fields that repeat a
/// name are sent as one, their values joined as HTTP allows (`, `, or `; `
/// for `Cookie`); the record shows them joined too. The fields URLSession
/// adds are the record's ``Request/clientHeaders`` (``AddedHeaderFields``).
///
/// ```swift
/// let outgoing = try OutgoingRequest(own.request, added: .current)
/// let task = session.dataTask(with: outgoing.urlRequest)
/// ```
struct OutgoingRequest {
    /// The request as sent, for the flow's record.
    var recorded: WireProtocol.Request
    var urlRequest: URLRequest

    /// Why a request cannot be sent, in URLSession's terms.
    struct Refusal: Error, Equatable {
        var code: Int
        var message: String
    }

    /// - Throws: ``Refusal`` for a URL that is not absolute `http` or
    ///   `https`, or a field value with a line break (which would end the
    ///   field on the wire and start another).
    init(_ request: WireProtocol.Request, added: AddedHeaderFields) throws(Refusal) {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              url.host?.isEmpty == false else {
            throw Refusal(code: NSURLErrorBadURL, message: "not an http or https URL: \(request.url)")
        }
        let headers = Self.oneFieldPerName(request.headers)
        if let broken = headers.first(where: { $0.value.contains { "\r\n\0".contains($0) } }) {
            throw Refusal(code: NSURLErrorBadURL, message: "the value of \(broken.name) has a line break")
        }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.httpMethod = request.method
        // Set as a whole: `setValue(_:forHTTPHeaderField:)` would respell
        // each name (`X-Request-ID` as `X-Request-Id`).
        urlRequest.allHTTPHeaderFields = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        // An empty body is no body: corelibs would send `Content-Length: 0` with a GET.
        let body = request.body?.data ?? Data()
        if !body.isEmpty { urlRequest.httpBody = body }
        self.urlRequest = urlRequest
        recorded = WireProtocol.Request(
            method: request.method, url: request.url, headers: headers, body: request.body,
            clientHeaders: added.fields(method: request.method, url: url, headers: headers, bodySize: body.count)
        )
    }

    /// The fields in their order, each name once (the first spelling), the
    /// values of a repeated name joined.
    static func oneFieldPerName(_ headers: [HTTPHeader]) -> [HTTPHeader] {
        var fields: [HTTPHeader] = []
        var index: [String: Int] = [:]
        for header in headers {
            let key = header.name.lowercased()
            if let at = index[key] {
                fields[at].value += (key == "cookie" ? "; " : ", ") + header.value
            } else {
                index[key] = fields.count
                fields.append(header)
            }
        }
        return fields
    }
}
