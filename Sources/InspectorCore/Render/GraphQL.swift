import Foundation
import WireProtocol

/// Recognises GraphQL requests, so the list can name them by operation
/// rather than show a row of identical `POST /graphql`.
enum GraphQL {
    /// Bodies larger than this are not parsed for the list (it is drawn several times a second).
    static let maximumBody = 64 * 1024

    /// The operation name of a GraphQL request (`operationName`, else the
    /// name in `query Name`/`mutation Name`), `query` or `mutation` for an
    /// anonymous one, or nil when the request is not GraphQL over JSON or a query string.
    static func operation(of request: Request) -> String? {
        if let body = request.body, !body.data.isEmpty {
            guard body.data.count <= maximumBody, body.data.first(where: { $0 > 0x20 }) == UInt8(ascii: "{"),
                  body.data.range(of: Data("\"query\"".utf8)) != nil else { return nil }
            let value = body.data.withUnsafeBytes { raw in try? JSONParser.parse(raw.bindMemory(to: UInt8.self)) }
            guard let value, let query = value["query"]?.stringValue else { return nil }
            return value["operationName"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? name(inDocument: query)
        }
        guard request.url.contains("query="), let items = URLComponents(string: request.url)?.queryItems,
              let query = items.first(where: { $0.name == "query" })?.value else { return nil }
        return items.first { $0.name == "operationName" }?.value.flatMap { $0.isEmpty ? nil : $0 } ?? name(inDocument: query)
    }

    /// `query Name(…) {…}` gives `Name`; `{ … }` gives `query`; anything
    /// that does not start like a GraphQL document gives nil.
    static func name(inDocument document: String) -> String? {
        let words = document.split { $0.isWhitespace || $0 == "(" || $0 == "{" || $0 == "@" }
        let trimmed = document.drop { $0.isWhitespace }
        if trimmed.hasPrefix("{") { return "query" }
        guard let kind = words.first, ["query", "mutation", "subscription"].contains(kind) else { return nil }
        if words.count > 1, let first = words[1].first, first.isLetter || first == "_",
           !document.drop(while: { $0.isWhitespace }).dropFirst(kind.count).drop(while: { $0.isWhitespace }).hasPrefix("{") {
            return String(words[1])
        }
        return String(kind)
    }
}
