import Foundation
import WireProtocol

/// A request as every capture adapter hands it to the control core: plain
/// values, whichever client made it (URLSession, AsyncHTTPClient, an
/// OpenAPI transport, or, later, a server receiving it).
///
/// ```swift
/// let request = ExchangeRequest(method: "GET", url: URL(string: "http://127.0.0.1:8080/a")!,
///                               headers: [HTTPHeader(name: "Accept", value: "*/*")])
/// ```
package struct ExchangeRequest: Sendable, Equatable {
    package var method: String
    package var url: URL
    /// In the order the client set them; duplicates kept.
    package var headers: [HTTPHeader]
    /// The whole body, when the adapter has it; nil for none, or for a body
    /// that streams and is not held (``bodyStreams``).
    package var body: Data?
    /// The body is a stream the adapter passes on as it is, unread.
    package var bodyStreams: Bool
    /// Which way it goes through the app: `inbound` for a request a
    /// service received (what `~inbound` and `~outbound` read).
    package var direction: FlowDirection

    package init(method: String, url: URL, headers: [HTTPHeader], body: Data? = nil, bodyStreams: Bool = false,
                 direction: FlowDirection = .outbound) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.bodyStreams = bodyStreams
        self.direction = direction
    }

    /// The request as a filter sees a flow that has not been sent (what a
    /// traffic rule's filter reads): its method, URL, header fields, body
    /// and direction, as the flow's log will have them. The log's other
    /// parts no filter term reads in the agent (`~parent` finds no parent
    /// there; `~id` names flows in the viewer).
    package var pendingLog: NetworkLog {
        NetworkLog(
            request: Request(method: method, url: url.absoluteString, headers: sortedHeaders, body: body.map { CapturedBody(data: $0) }),
            timing: Timing(startedAt: Date(timeIntervalSince1970: 0)),
            direction: direction == .inbound ? .inbound : nil
        )
    }

    /// The header fields sorted by name, as the log compares them (a
    /// Foundation request keeps no order of its own).
    package var sortedHeaders: [HTTPHeader] {
        headers.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }
}

/// A response as the control core sees it: the whole body, for one a
/// breakpoint holds or a map-local rule makes.
package struct ExchangeResponse: Sendable, Equatable {
    package var statusCode: Int
    package var headers: [HTTPHeader]
    package var body: Data

    package init(statusCode: Int, headers: [HTTPHeader], body: Data) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }
}

extension Array where Element == HTTPHeader {
    /// Sets field `name` to `value` (nil removes it): the first field of
    /// that name keeps its place and takes the value, later ones go, and a
    /// field not there yet is added last. This is what Foundation's
    /// `setValue(_:forHTTPHeaderField:)` does to a request.
    package mutating func set(_ name: String, to value: String?) {
        guard let first = firstIndex(where: { HTTPHeader.namesMatch($0.name, name) }) else {
            if let value { append(HTTPHeader(name: name, value: value)) }
            return
        }
        var index = endIndex
        while index > first + 1 {
            index -= 1
            if HTTPHeader.namesMatch(self[index].name, name) { remove(at: index) }
        }
        if let value { self[first].value = value } else { remove(at: first) }
    }
}
