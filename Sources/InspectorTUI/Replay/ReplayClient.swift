import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// netinspect's own HTTP client (URLSession, which ships with the toolchain
/// and so costs no build): sends a flow's request again when the app
/// cannot, and a request a person wrote when no app allows control
/// (``OwnRequest``). Its flows reach the store through the inbox, as those
/// of one more agent named "netinspect", so the list, the detail view,
/// filters and exports treat them like any other.
///
/// As AsyncHTTPClient did before it: redirects are not followed (each is a
/// flow of its own, as the app's client would show it), a request has 60 s
/// in all, a response body is kept up to 1 MiB with its true size counted.
/// What URLSession does differently (fields it adds, bodies it decodes) is
/// in docs/GUIDE.md, "Replay from anywhere"; the flow records it.
///
/// ```swift
/// let client = ReplayClient(inbox: inbox)
/// client.send(OwnRequest(request: log.request, replayOf: log.id, isEdited: false))
/// client.shutdown()
/// ```
final class ReplayClient: Sendable {
    /// The most bytes of a response body kept, as the agent keeps by default.
    static let bodyCap = 1 << 20
    /// How long a request may take in all. URLSession's own request timeout
    /// (the same 60 s) restarts whenever bytes move, so a slow trickle would
    /// never end without this deadline.
    static let timeout: TimeInterval = 60

    private let session: URLSession
    private let transfers: ReplayTransfers
    private let inbox: Inbox

    /// Announces the pseudo-agent on the inbox; requests follow with ``send(_:)``.
    init(inbox: Inbox) {
        self.inbox = inbox
        let configuration = URLSessionConfiguration.default
        // Nothing carried over from one request to the next: each is sent as written.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = Self.timeout
        transfers = ReplayTransfers(bodyCap: Self.bodyCap)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: queue)
        let hello = Hello(agentName: OwnRequest.clientName, agentVersion: "", appName: OwnRequest.clientName,
                          processID: Int(getpid()), hostName: ProcessInfo.processInfo.hostName)
        inbox.post(.connected(OwnRequest.connection, hello, peer: "in-process"))
    }

    /// Sends the request; its flow starts now and finishes when the answer
    /// (or the failure) arrives. Never blocks the caller.
    func send(_ own: OwnRequest) {
        let id = FlowID()
        let started = Date()
        let source = CaptureSource(client: .init(rawValue: OwnRequest.clientName))
        let changes = FlowChanges(rules: [], replayOf: own.replayOf, edited: own.isEdited ? [.request] : nil,
                                  composed: own.replayOf == nil ? true : nil)
        let outgoing: OutgoingRequest
        do {
            outgoing = try OutgoingRequest(own.request, added: .current)
        } catch {
            let log = NetworkLog(id: id, request: own.request, timing: Timing(startedAt: started), source: source, changes: changes)
            inbox.post(.message(OwnRequest.connection, .flowStarted(log)))
            var timing = Timing(startedAt: started)
            timing.finished = 0
            let failure = FlowError(domain: ReplayTransfers.errorDomain, code: error.code, message: error.message)
            inbox.post(.message(OwnRequest.connection, .flowFinished(FlowFinished(id: id, state: .failed, error: failure, timing: timing))))
            return
        }
        let log = NetworkLog(id: id, request: outgoing.recorded, timing: Timing(startedAt: started), source: source, changes: changes)
        inbox.post(.message(OwnRequest.connection, .flowStarted(log)))
        let inbox = inbox
        let task = session.dataTask(with: outgoing.urlRequest)
        transfers.begin(task, id: id, started: started) { finished in
            inbox.post(.message(OwnRequest.connection, .flowFinished(finished)))
        }
        task.resume()
        let transfers = transfers
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.timeout) {
            transfers.timeOut(task)
        }
    }

    /// Cancels requests still in flight (their flows end cancelled) and
    /// lets the session go.
    func shutdown() {
        session.invalidateAndCancel()
    }
}
