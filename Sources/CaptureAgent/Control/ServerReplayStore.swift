import Foundation
import WireProtocol

/// The recorded responses the connected viewer offers for server replay,
/// and which of them this agent has used.
///
/// The book lives in the agent so an answer costs no round trip: the app's
/// client gets it at ``ExchangeControl/start(_:)`` like a map-local file.
/// Each agent keeps its own account of what it used: two apps replaying one
/// file each get every response once.
///
/// ```swift
/// store.receive(book)                                   // from the viewer
/// if let answer = store.answer(for: request) { … }      // nil: not replaying
/// ```
package final class ServerReplayStore: Sendable {
    private struct Book {
        var options: ServerReplayOptions
        var entries: [ServerReplayEntry]
        var used: [Bool]
        /// Entry indices by key, each list in the recording's order.
        var byKey: [UInt64: [Int]] = [:]
        var byKeyWithoutBody: [UInt64: [Int]] = [:]
        var left: Int

        init(options: ServerReplayOptions, entries: [ServerReplayEntry]) {
            self.options = options
            self.entries = entries
            used = Array(repeating: false, count: entries.count)
            left = entries.count
            for (index, entry) in entries.enumerated() {
                byKey[entry.key.withBody, default: []].append(index)
                byKeyWithoutBody[entry.key.withoutBody, default: []].append(index)
            }
        }

        /// The next recorded response for a key: the first unused one in
        /// order; once all are used, the last again with reuse, else none.
        mutating func take(_ indices: [Int]) -> Int? {
            if let next = indices.first(where: { !used[$0] }) {
                used[next] = true
                left -= 1
                return next
            }
            return options.reuse ? indices.last : nil
        }
    }

    private struct State {
        var book: Book?
        /// Parts of a book still arriving (``ServerReplayBook/continues``).
        var arriving: [ServerReplayEntry] = []
    }

    private let state = Locked(State())
    private let redactURL: @Sendable (URL) -> String
    private let redactHeaders: @Sendable ([HTTPHeader]) -> [HTTPHeader]

    /// `redactURL` and `redactHeaders` make a live request look as the log
    /// records it, which is what a recording's keys were made from.
    package init(redactURL: @escaping @Sendable (URL) -> String,
                 redactHeaders: @escaping @Sendable ([HTTPHeader]) -> [HTTPHeader]) {
        self.redactURL = redactURL
        self.redactHeaders = redactHeaders
    }

    /// A `serverReplay` message: a part of a book, a whole one (which
    /// replaces the last), or nil to stop.
    package func receive(_ part: ServerReplayBook?) {
        state.withLock { state in
            guard let part else {
                state = State()
                return
            }
            state.arriving += part.entries
            guard !part.continues else { return }
            state.book = Book(options: part.options, entries: state.arriving)
            state.arriving = []
        }
    }

    /// Whether a book is in force.
    package var isActive: Bool { state.withLock { $0.book != nil } }

    /// What server replay does with a request.
    package enum Answer: Sendable, Equatable {
        /// Give the app this recorded response (after `wait` seconds, with
        /// the timing option).
        case recorded(ExchangeResponse, ServerReplayMark, wait: Double?)
        /// No recorded response and `--server-replay-extra 404`.
        case notFound(ExchangeResponse, ServerReplayMark)
        /// No recorded response and `--server-replay-extra kill`.
        case kill(ServerReplayMark)
    }

    /// The answer for `request`; nil when no book is in force, or for a
    /// request no recording answers under `--server-replay-extra forward`.
    package func answer(for request: ExchangeRequest) -> Answer? {
        state.withLock { state in
            guard var book = state.book else { return nil }
            defer { state.book = book }
            let hasBody = !(request.bodyStreams && request.body == nil)
            guard let key = ServerReplayKey(method: request.method, url: redactURL(request.url),
                                            headers: redactHeaders(request.headers), body: request.body, options: book.options)
            else { return nil }
            let indices = hasBody ? book.byKey[key.withBody] : book.byKeyWithoutBody[key.withoutBody]
            if let indices, let index = book.take(indices) {
                let entry = book.entries[index]
                let wait = book.options.timing ? entry.wait : nil
                let mark = ServerReplayMark(recordedID: entry.recordedID, left: book.left, waited: wait)
                return .recorded(Self.exchangeResponse(entry.response), mark, wait: wait)
            }
            switch book.options.extra {
            case .forward:
                return nil
            case .notFound:
                let body = Data("netinspect server replay: no recorded response for \(request.method) \(redactURL(request.url))\n".utf8)
                let response = ExchangeResponse(statusCode: 404, headers: [
                    HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8"),
                    HTTPHeader(name: "Content-Length", value: String(body.count)),
                ], body: body)
                return .notFound(response, ServerReplayMark(left: book.left, extra: "404"))
            case .kill:
                return .kill(ServerReplayMark(left: book.left, extra: "kill"))
            }
        }
    }

    /// A recorded response as the app gets it: its body whole, and the
    /// framing fields made true of that body (the recording may have been
    /// chunked, or decoded from what the wire carried).
    static func exchangeResponse(_ recorded: Response) -> ExchangeResponse {
        let body = recorded.body?.data ?? Data()
        var headers = recorded.headers
        headers.set("Transfer-Encoding", to: nil)
        if recorded.body?.isDecoded == true { headers.set("Content-Encoding", to: nil) }
        headers.set("Content-Length", to: String(body.count))
        return ExchangeResponse(statusCode: recorded.statusCode, headers: headers, body: body)
    }
}
