// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import AsyncHTTPClient
import CaptureAgent
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Vapor
import WireProtocol

/// The flows of one application's captured client: each exchange recorded
/// and, when the app allows control, decided by ``ExchangeControl`` and
/// carried out here in Vapor's terms.
final class VaporClientFlows: Sendable {
    let agent: CaptureAgent
    /// The application's client among the agent's clients, and its flows.
    private let numbering: FlowNumbering

    init(agent: CaptureAgent) {
        self.agent = agent
        numbering = FlowNumbering(agent: agent)
    }

    /// Sends `request` through `client`, recorded; `parent` is the inbound
    /// flow the caller was handling, `origin` the flow a viewer's replay repeats.
    func exchange(_ request: ClientRequest, parent: FlowID?, through client: CapturedClient) async throws -> ClientResponse {
        guard let url = URL(string: request.url.string) else {
            throw Abort(.internalServerError, reason: "\(request.url.string) is an invalid URL")
        }
        let exchange = ExchangeRequest(method: request.method.rawValue, url: url,
                                       headers: request.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
                                       body: request.body.map { Data($0.readableBytesView) })
        let deadline = request.timeout.map { NIODeadline.now() + $0 }
        guard agent.isCapturing, agent.configuration.shouldCapture(url) else {
            return ClientResponse(try await client.send(exchange, deadline: deadline), allocator: client.byteBufferAllocator)
        }
        return try await record(exchange, parent: parent, origin: nil, deadline: deadline, through: client)
    }

    func record(_ app: ExchangeRequest, parent: FlowID?, origin: ReplayOrigin?, deadline: NIODeadline?,
                through client: CapturedClient) async throws -> ClientResponse {
        let taskID = numbering.nextTaskID()
        let (flow, action) = ControlledFlow.start(app, as: flowStart(app, taskID: taskID, parent: parent), agent: agent, origin: origin)
        if agent.allowsControl, flow.recording.isBuilt {
            agent.replays.remember(flow.id, request: app, sender: VaporClientReplay(flows: self, configuration: client.configuration))
        }
        let effect = flow.effect
        var outgoing = app
        switch action {
        case .send(let changed):
            outgoing = changed
        case .answer(let answer):
            try await flow.wait(effect.latency + Self.transfer(answer.body.count, at: effect.downBytesPerSecond))
            flow.recording.answered(with: answer)
            return ClientResponse(answer, allocator: client.byteBufferAllocator)
        case .fail(let failure):
            try await flow.wait(effect.latency)
            let error = failure.asyncHTTPClientError
            flow.recording.finish(.failed(FlowFailure.describe(error)))
            throw error
        }
        if flow.requestReady() == .hold {
            switch await flow.holdRequest() {
            case .kill: throw HTTPClientError.cancelled
            case .cancelled: throw CancellationError()
            case .send(let request, _): outgoing = request
            }
        }
        let response: HTTPClient.Response
        do {
            try await Self.pause(Self.transfer(outgoing.body?.count ?? 0, at: effect.upBytesPerSecond))
            response = try await client.send(outgoing, deadline: deadline)
            try await Self.pause(effect.latency + Self.transfer(response.body?.readableBytes ?? 0, at: effect.downBytesPerSecond))
        } catch {
            flow.recording.finish(.thrown(error, cancelled: (error as? HTTPClientError) == .cancelled))
            throw error
        }
        let fields = response.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        flow.recording.respond { recorder in
            let event = recorder.received(statusCode: Int(response.status.code), headers: fields,
                                          mimeType: MediaType.essence(of: response.headers.first(name: "Content-Type")))
            response.body?.withUnsafeReadableBytes { recorder.receivedBody($0) }
            return event
        }
        if flow.responseArrived() == .hold {
            let body = response.body.map { Data($0.readableBytesView) } ?? Data()
            guard body.count <= flow.holdLimit else {
                flow.bodyOutgrewHold()
                flow.recording.finish(.completed)
                return ClientResponse(response, allocator: client.byteBufferAllocator)
            }
            switch await flow.holdResponse(ExchangeResponse(statusCode: Int(response.status.code), headers: fields, body: body)) {
            case .kill, .cancelled:
                throw HTTPClientError.cancelled
            case .deliver(let delivered, let edited):
                flow.recording.finish(.completed)
                if edited { return ClientResponse(delivered, allocator: client.byteBufferAllocator) }
            }
        }
        flow.recording.finish(.completed)
        return ClientResponse(response, allocator: client.byteBufferAllocator)
    }
}

extension VaporClientFlows {
    /// The flow of `app`, the application's request.
    private func flowStart(_ app: ExchangeRequest, taskID: Int, parent: FlowID?) -> FlowStart {
        var start = FlowStart(method: app.method, url: app.url.absoluteString, headers: app.headers,
                              sessionID: numbering.sessionID, taskID: taskID)
        start.source = CaptureSource(client: .vaporClient)
        start.parentID = parent
        start.requestBody = app.body
        return start
    }
}

/// A viewer's replay of a Vapor client's request: sent again with a client
/// made from the application's client configuration (so it does not depend
/// on the app's own client still running), recorded as a flow that says
/// what it replays; the app's code never hears of it.
struct VaporClientReplay: ReplaySender {
    let flows: VaporClientFlows
    let configuration: HTTPClient.Configuration

    func send(_ request: ExchangeRequest, replaying origin: ReplayOrigin) {
        Task {
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let client = CapturedClient(flows: flows, http: http, configuration: configuration, eventLoop: http.eventLoopGroup.next(),
                                        logger: nil, byteBufferAllocator: ByteBufferAllocator())
            _ = try? await flows.record(request, parent: nil, origin: origin, deadline: nil, through: client)
            try? await http.shutdown()
        }
    }
}

extension ClientResponse {
    /// What Vapor's own client makes of AsyncHTTPClient's response.
    init(_ response: HTTPClient.Response, allocator: ByteBufferAllocator) {
        self.init(status: response.status, headers: response.headers, body: response.body, byteBufferAllocator: allocator)
    }

    /// A response the viewer's control made (map local, a person's edit).
    init(_ answer: ExchangeResponse, allocator: ByteBufferAllocator) {
        self.init(status: HTTPResponseStatus(statusCode: answer.statusCode), headers: HTTPHeaders(answer.headers.map { ($0.name, $0.value) }),
                  body: ByteBuffer(bytes: answer.body), byteBufferAllocator: allocator)
    }
}
#endif
