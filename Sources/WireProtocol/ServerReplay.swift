import Foundation

/// How recorded responses are matched to the app's requests and what
/// happens to a request no recording answers: mitmproxy's `server_replay_*`
/// options, under the same names.
///
/// ```swift
/// var options = ServerReplayOptions()
/// options.ignoreParams = ["ts"]       // --server-replay-ignore-params ts
/// options.extra = .notFound           // --server-replay-extra 404
/// ```
public struct ServerReplayOptions: Sendable, Equatable {
    /// What a request that no recorded response answers gets.
    public enum Extra: String, Sendable, Equatable, CaseIterable {
        /// It goes to the network as usual.
        case forward
        /// It is answered 404 with no network.
        case notFound = "404"
        /// It fails as a connection reset, as the app's client reports one.
        case kill
    }

    /// Query parameters left out of the match.
    public var ignoreParams: [String] = []
    /// Match on everything but the host (and port).
    public var ignoreHost = false
    /// Match on everything but the request body.
    public var ignoreContent = false
    /// Request header fields that must match too (names, case-insensitive).
    public var useHeaders: [String] = []
    /// What an unmatched request gets.
    public var extra = Extra.forward
    /// Keep the last response of a request for every later match of it;
    /// without this each recorded response answers once, in order.
    public var reuse = false
    /// Answer after the recorded wait (the time the server took to start
    /// its response), not at once.
    public var timing = false

    /// Options with mitmproxy's defaults.
    public init() {}
}

/// What a request is matched on: its method, scheme, host, port, path,
/// query pairs in order, the header fields options name, and its body.
/// The viewer computes it for each recorded request and the agent for each
/// live one, with this one function, so the two always agree.
///
/// ```swift
/// let key = ServerReplayKey(method: "GET", url: "https://api.example.com/items?page=2",
///                           headers: [], body: nil, options: ServerReplayOptions())
/// // key.withBody == key.withoutBody: a request with no body
/// ```
public struct ServerReplayKey: Sendable, Equatable, Hashable {
    /// The digest over everything, the body included.
    public var withBody: UInt64
    /// The digest with the body left out: what an agent matches on when it
    /// cannot see the body before the request goes (a body that streams).
    public var withoutBody: UInt64

    /// The key of a request as the log records it (redacted values as the
    /// log shows them; the agent redacts a live request the same way first).
    /// Nil for a URL that cannot be read.
    public init?(method: String, url: String, headers: [HTTPHeader], body: Data?, options: ServerReplayOptions) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased() else { return nil }
        var text = method.uppercased() + "\n" + scheme + "\n"
        if !options.ignoreHost {
            let port = parts.port ?? URLAuthority.defaultPort(ofScheme: scheme) ?? 80
            text += (parts.host ?? "").lowercased() + ":" + String(port)
        }
        text += "\n" + (parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath) + "\n"
        for item in parts.percentEncodedQueryItems ?? [] {
            let name = item.name.removingPercentEncoding ?? item.name
            guard !options.ignoreParams.contains(name) else { continue }
            text += item.name + "=" + (item.value ?? "") + "&"
        }
        text += "\n"
        for name in options.useHeaders {
            let values = headers.filter { HTTPHeader.namesMatch($0.name, name) }.map(\.value)
            text += name.lowercased() + ":" + values.joined(separator: ",") + "\n"
        }
        var digest = Self.fnv1a(Self.offsetBasis, Array(text.utf8))
        withoutBody = digest
        if !options.ignoreContent, let body, !body.isEmpty {
            digest = Self.fnv1a(Self.fnv1a(digest, [0]), body)
        }
        withBody = digest
    }

    public init(withBody: UInt64, withoutBody: UInt64) {
        self.withBody = withBody
        self.withoutBody = withoutBody
    }

    private static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    /// FNV-1a, 64 bits: stable across processes and releases (Swift's
    /// `Hasher` is seeded per process), and collisions among a recording's
    /// few thousand keys are vanishingly unlikely.
    private static func fnv1a(_ start: UInt64, _ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash = start
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// One recorded response a viewer offers for replay.
public struct ServerReplayEntry: Sendable, Equatable {
    /// The request it answers.
    public var key: ServerReplayKey
    /// The recorded flow it comes from, when the file named one.
    public var recordedID: FlowID?
    /// The response as recorded, body included.
    public var response: Response
    /// Seconds from the request to the response's start, as recorded
    /// (what ``ServerReplayOptions/timing`` waits).
    public var wait: Double?

    public init(key: ServerReplayKey, recordedID: FlowID? = nil, response: Response, wait: Double? = nil) {
        self.key = key
        self.recordedID = recordedID
        self.response = response
        self.wait = wait
    }
}

/// Recorded responses a viewer sends agents that allow control (message
/// `serverReplay`, viewer to agent). A large recording travels in several
/// messages, each under the agent's frame limit: those with ``continues``
/// set are kept until the last, which puts the whole book in force (it
/// replaces any earlier one).
///
/// ```swift
/// let book = ServerReplayBook(options: ServerReplayOptions(), entries: entries)
/// let frame = ViewerMessage.serverReplay(book).frame()
/// ```
public struct ServerReplayBook: Sendable, Equatable {
    public var options: ServerReplayOptions
    public var entries: [ServerReplayEntry]
    /// More entries of the same book follow in the next message.
    public var continues: Bool

    public init(options: ServerReplayOptions, entries: [ServerReplayEntry], continues: Bool = false) {
        self.options = options
        self.entries = entries
        self.continues = continues
    }
}

/// What the log says of a response that server replay gave the app with
/// no network (``FlowChanges/serverReplay``).
///
/// ```swift
/// if let mark = flow.changes?.serverReplay { print("replayed, \(mark.left) left") }
/// ```
public struct ServerReplayMark: Sendable, Equatable {
    /// The recorded flow the response comes from, when known.
    public var recordedID: FlowID?
    /// Recorded responses this agent has not yet used, after this one.
    public var left: Int
    /// Nil for a recorded response; `404` or `kill` for what
    /// ``ServerReplayOptions/extra`` did to an unmatched request.
    public var extra: String?
    /// The recorded wait the agent kept before answering, in seconds.
    public var waited: Double?

    public init(recordedID: FlowID? = nil, left: Int, extra: String? = nil, waited: Double? = nil) {
        self.recordedID = recordedID
        self.left = left
        self.extra = extra
        self.waited = waited
    }
}
