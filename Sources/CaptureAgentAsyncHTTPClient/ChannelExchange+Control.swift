import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol

/// What the control handlers do to the flow on the channel: the log shows
/// what a rule or an edit changed, and a held flow ends when the viewer decides.
/// On the channel's event loop, as all of ``ChannelExchange``.
extension ChannelExchange {
    /// How a flow held at a breakpoint ended.
    enum HeldEnd {
        case completed
        case killed
        case cancelled
    }

    /// A response head came (the capture has recorded it): whether a breakpoint holds it.
    func responseArrived() -> ExchangeControl.ResponseAction {
        guard var control, let flow else { return .deliver }
        let action = flow.recording.withLog { control.responseArrived($0()) } ?? .deliver
        self.control = control
        return action
    }

    /// The whole request (`body`) is in: whether a breakpoint holds it.
    func requestReady(body: ByteBuffer) -> ExchangeControl.RequestAction {
        guard var control, let flow, flow.recording.isBuilt else { return .send }
        if body.readableBytes > 0 {
            flow.recording.update { $0.setRequestBody($0.capped(Data(body.readableBytesView))) }
        }
        let action = flow.recording.withLog { control.requestReady($0()) } ?? .send
        self.control = control
        return action
    }

    /// The rules changed the request (`request`: as they left it) or answered it.
    func recordChanges(_ changes: FlowChanges?, request: ExchangeRequest?) {
        guard let changes, let flow else { return }
        let app = app
        flow.recording.update { recorder in
            if let request, request != app {
                recorder.replaceRequest(method: request.method, url: request.url, headers: request.headers, body: nil)
            }
            recorder.setChanges(changes)
        }
        flow.recording.restart()
    }

    /// A person edited the held request: the log shows what is sent instead.
    func recordEdit(_ changes: FlowChanges?, request: ExchangeRequest) {
        guard let flow, flow.recording.isBuilt else { return }
        if !request.bodyStreams { flow.recording.wholeRequestBody(request.body ?? Data()) }
        flow.recording.update { recorder in
            var body = recorder.log.request.body
            if !request.bodyStreams {
                let data = request.body ?? Data()
                body = data.isEmpty ? nil : recorder.capped(data)
            }
            recorder.replaceRequest(method: request.method, url: request.url, headers: request.headers, body: body)
            if let changes { recorder.setChanges(changes) }
        }
        flow.recording.restart()
    }

    /// A person edited the held response of `flow`: the log shows what the app gets.
    func recordEdit(_ changes: FlowChanges?, response: ExchangeResponse, of flow: WireFlow) {
        flow.recording.update { recorder in
            recorder.replaceResponse(statusCode: response.statusCode, headers: response.headers,
                                     mimeType: mimeType(of: response.headers.first("Content-Type")), body: response.body)
            if let changes { recorder.setChanges(changes, afterStart: true) }
        }
    }

    /// The viewer killed the held request.
    func killed() {
        guard let flow, !flow.recording.isFinished else { return }
        finish(flow, state: .cancelled, error: FlowFailure.killed)
        self.flow = nil
    }

    /// Ends a flow whose response a breakpoint held.
    func finishHeld(_ flow: WireFlow, as end: HeldEnd) {
        flow.isHeldByControl = false
        switch end {
        case .completed: finish(flow, state: .completed, error: nil)
        case .killed: finish(flow, state: .cancelled, error: FlowFailure.killed)
        case .cancelled: finish(flow, state: .cancelled, error: FlowFailure.describe(HTTPClientError.cancelled))
        }
    }

    /// Keeps the app's request for a viewer's replay; `body` is nil when it
    /// was too large (or a file) to keep.
    func rememberForReplay(body: ByteBuffer?) {
        guard var request = app, let body, let flow, flow.recording.isBuilt else { return }
        let id = flow.recording.id
        app = nil
        request.body = body.readableBytes > 0 ? Data(body.readableBytesView) : nil
        request.bodyStreams = false
        client.agent.replays.remember(id, request: request, sender: AsyncHTTPClientReplay(capture: client))
    }
}
