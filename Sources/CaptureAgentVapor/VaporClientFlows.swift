// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import AsyncHTTPClient
import CaptureAgent
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
    private let sessionID: Int
    private let flowNumbers = Counter()

    init(agent: CaptureAgent, sessionID: Int) {
        self.agent = agent
        self.sessionID = sessionID
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
        var control = ExchangeControl(policy: agent.controlPolicy)
        var outgoing = app
        var localAnswer: ExchangeResponse?
        var failure: NetworkFailure?
        if control.policy.canChange {
            switch control.start(app) {
            case .send(let changed): outgoing = changed
            case .answer(let answer): localAnswer = answer
            case .fail(let failed): failure = failed
            }
        }
        if let origin { control.isReplay(of: origin) }
        // The viewer's control needs the log even with no inspector to see it.
        let taskID = flowNumbers.next()
        let flow = FlowRecording(agent: agent, building: control.policy.canChange) { id in
            var recorder = FlowRecorder(id: id, method: outgoing.method, url: outgoing.url.absoluteString, headers: outgoing.headers,
                                        sessionID: sessionID, taskID: taskID, configuration: agent.configuration, clock: agent.clock)
            recorder.source = CaptureSource(client: .vaporClient)
            recorder.parentID = parent
            if let body = outgoing.body { recorder.setRequestBody(recorder.capped(body)) }
            if let changes = control.changes { recorder.setChanges(changes) }
            return recorder
        }
        if agent.allowsControl, flow.isBuilt {
            agent.replays.remember(flow.id, request: app, sender: VaporClientReplay(flows: self, configuration: client.configuration))
        }
        if let failure {
            flow.start()
            try await Self.wait(control.effect.latency, flow: flow)
            let error = Self.error(for: failure)
            flow.finish { recorder, _ in recorder.finished(state: .failed, error: FlowFailure.describe(error), requestBody: nil) }
            throw error
        }
        if let localAnswer {
            flow.requestEnded()
            try await Self.wait(control.effect.latency + Self.transfer(localAnswer.body.count, at: control.effect.downBytesPerSecond), flow: flow)
            return respond(with: localAnswer, flow: flow, allocator: client.byteBufferAllocator)
        }
        if flow.withLog({ control.requestReady($0()) }) == .hold {
            try await holdRequest(&outgoing, control: &control, flow: flow)
        }
        let response: HTTPClient.Response
        do {
            try await Self.pause(Self.transfer(outgoing.body?.count ?? 0, at: control.effect.upBytesPerSecond))
            response = try await client.send(outgoing, deadline: deadline)
            try await Self.pause(control.effect.latency + Self.transfer(response.body?.readableBytes ?? 0, at: control.effect.downBytesPerSecond))
        } catch {
            let cancelled = FlowFailure.isCancellation(error) || (error as? HTTPClientError) == .cancelled
            flow.finish { recorder, _ in
                recorder.finished(state: cancelled ? .cancelled : .failed, error: FlowFailure.describe(error), requestBody: nil)
            }
            throw error
        }
        let fields = response.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        flow.respond { recorder in
            let event = recorder.received(statusCode: Int(response.status.code), headers: fields,
                                          mimeType: mimeType(of: response.headers.first(name: "Content-Type")))
            response.body?.withUnsafeReadableBytes { recorder.receivedBody($0) }
            return event
        }
        if flow.withLog({ control.responseArrived($0()) }) == .hold {
            let body = response.body.map { Data($0.readableBytesView) } ?? Data()
            guard body.count <= control.holdLimit else {
                control.bodyOutgrewHold()
                return finish(response, flow: flow, allocator: client.byteBufferAllocator)
            }
            let held = ExchangeResponse(statusCode: Int(response.status.code), headers: fields, body: body)
            if let edited = try await holdResponse(held, control: &control, flow: flow) {
                return respond(with: edited, flow: flow, allocator: client.byteBufferAllocator, replacing: true)
            }
        }
        return finish(response, flow: flow, allocator: client.byteBufferAllocator)
    }

    /// Holds a request a breakpoint matched. Throws for a kill
    /// (`HTTPClientError.cancelled`, as a cancelled AsyncHTTPClient request)
    /// or the caller's cancellation.
    private func holdRequest(_ outgoing: inout ExchangeRequest, control: inout ExchangeControl, flow: FlowRecording) async throws {
        let decision = await agent.hold(flow.id, phase: .request)
        switch control.requestDecided(decision) {
        case .kill:
            flow.finish { recorder, _ in recorder.finished(state: .cancelled, error: FlowFailure.killed, requestBody: nil) }
            throw HTTPClientError.cancelled
        case .cancelled:
            flow.finish { recorder, _ in
                recorder.finished(state: .cancelled, error: FlowFailure.describe(CancellationError()), requestBody: nil)
            }
            throw CancellationError()
        case .send(let request, let edited):
            guard edited else { return }
            outgoing = request
            flow.update { recorder in
                recorder.replaceRequest(method: request.method, url: request.url, headers: request.headers,
                                        body: request.body.map(recorder.capped))
                if let changes = control.changes { recorder.setChanges(changes) }
            }
            flow.restart()
        }
    }

    /// Holds a whole response a breakpoint matched; returns a person's edit,
    /// or nil to give the app the response as it came.
    private func holdResponse(_ held: ExchangeResponse, control: inout ExchangeControl,
                              flow: FlowRecording) async throws -> ExchangeResponse? {
        let original = flow.log?.response
        let decision = await agent.hold(flow.id, phase: .response, response: original)
        switch control.responseDecided(decision, held: held, original: original) {
        case .kill, .cancelled:
            flow.finish { recorder, _ in recorder.finished(state: .cancelled, error: FlowFailure.killed, requestBody: nil) }
            throw HTTPClientError.cancelled
        case .deliver(let delivered, let edited):
            guard edited else { return nil }
            if let changes = control.changes { flow.update { $0.setChanges(changes, afterStart: true) } }
            return delivered
        }
    }

    /// The app gets a response the control core made (map local, an edit).
    private func respond(with answer: ExchangeResponse, flow: FlowRecording, allocator: ByteBufferAllocator,
                         replacing: Bool = false) -> ClientResponse {
        let mime = mimeType(of: answer.headers.first("Content-Type"))
        if replacing {
            flow.update { $0.replaceResponse(statusCode: answer.statusCode, headers: answer.headers, mimeType: mime, body: answer.body) }
        } else {
            flow.respond { recorder in
                let event = recorder.received(statusCode: answer.statusCode, headers: answer.headers, mimeType: mime)
                answer.body.withUnsafeBytes { recorder.receivedBody($0) }
                return event
            }
        }
        flow.finish { recorder, _ in recorder.finished(state: .completed, error: nil, requestBody: nil) }
        return ClientResponse(status: HTTPResponseStatus(statusCode: answer.statusCode),
                              headers: HTTPHeaders(answer.headers.map { ($0.name, $0.value) }),
                              body: ByteBuffer(bytes: answer.body), byteBufferAllocator: allocator)
    }

    private func finish(_ response: HTTPClient.Response, flow: FlowRecording, allocator: ByteBufferAllocator) -> ClientResponse {
        flow.finish { recorder, _ in recorder.finished(state: .completed, error: nil, requestBody: nil) }
        return ClientResponse(response, allocator: allocator)
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
}
#endif
