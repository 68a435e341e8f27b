import AsyncHTTPClient
import Foundation
import InspectorCore
import NIOCore
import NIOHTTP1
import WireProtocol

/// netinspect's own HTTP client (AsyncHTTPClient): sends a flow's request
/// again when the app cannot, and a request a person wrote when no app
/// allows control (``OwnRequest``). Its flows reach the store
/// through the inbox, as those of one more agent named "netinspect", so the
/// list, the detail view, filters and exports treat them like any other.
///
/// ```swift
/// let client = ReplayClient(inbox: inbox)
/// client.send(OwnRequest(request: log.request, replayOf: log.id, isEdited: false))
/// client.shutdown()
/// ```
final class ReplayClient: Sendable {
    /// The most bytes of a response body kept, as the agent keeps by default.
    static let bodyCap = 1 << 20
    /// How long a request may take in all, as a URLSession's default request timeout.
    static let timeout = TimeAmount.seconds(60)

    private let client: HTTPClient
    private let inbox: Inbox

    /// Announces the pseudo-agent on the inbox; requests follow with ``send(_:)``.
    init(inbox: Inbox) {
        self.inbox = inbox
        // Redirects are flows of their own, as the app's client would show them.
        let configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
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
        let log = NetworkLog(id: id, request: own.request, timing: Timing(startedAt: started), source: source, changes: changes)
        inbox.post(.message(OwnRequest.connection, .flowStarted(log)))
        let client = client
        let inbox = inbox
        Task {
            let finished = await Self.exchange(own.request, id: id, started: started, client: client)
            inbox.post(.message(OwnRequest.connection, .flowFinished(finished)))
        }
    }

    /// Waits for requests in flight to end, then releases the client.
    func shutdown() {
        try? client.syncShutdown()
    }

    private static func exchange(_ request: WireProtocol.Request, id: FlowID, started: Date, client: HTTPClient) async -> FlowFinished {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body.data)) }
        var timing = Timing(startedAt: started)
        do {
            let answer = try await client.execute(outgoing, timeout: timeout)
            // AsyncHTTPClient reports the response head, not when the request went out.
            timing.firstResponseByte = Date().timeIntervalSince(started)
            var data = Data()
            var size = 0
            for try await chunk in answer.body {
                size += chunk.readableBytes
                if data.count < bodyCap { data.append(contentsOf: chunk.readableBytesView.prefix(bodyCap - data.count)) }
            }
            timing.finished = Date().timeIntervalSince(started)
            let headers = answer.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
            let body = size == 0 ? nil : CapturedBody(data: data, size: size, isTruncated: size > data.count)
            let response = Response(statusCode: Int(answer.status.code), headers: headers, body: body,
                                    mimeType: MediaType.essence(of: answer.headers.first(name: "Content-Type")))
            return FlowFinished(id: id, state: .completed, response: response, timing: timing)
        } catch {
            timing.finished = Date().timeIntervalSince(started)
            let failure = FlowError(domain: "AsyncHTTPClient", code: 0, message: String(describing: error))
            return FlowFinished(id: id, state: .failed, error: failure, timing: timing)
        }
    }
}
