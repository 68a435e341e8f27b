// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
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
    /// How a flow held at a breakpoint ends when AsyncHTTPClient gave up on
    /// it (cancelled, a deadline) rather than the viewer deciding.
    static let heldAndCancelled = ControlledFlow.HoldEnds(cancelled: .cancelled(FlowFailure.describe(HTTPClientError.cancelled)))

    /// A response head came (the capture has recorded it): whether a breakpoint holds it.
    func responseArrived() -> ExchangeControl.ResponseAction {
        controlled?.responseArrived() ?? .deliver
    }

    /// The whole request (`body`) is in: whether a breakpoint holds it.
    func requestReady(body: ByteBuffer) -> ExchangeControl.RequestAction {
        guard let controlled, controlled.recording.isBuilt else { return .send }
        if body.readableBytes > 0 {
            controlled.recording.update { $0.setRequestBody($0.capped(Data(body.readableBytesView))) }
        }
        return controlled.requestReady()
    }

    /// Ends a flow whose response a breakpoint held, once the app has it
    /// (`completed`) or AsyncHTTPClient gave up on it.
    func finishHeld(_ flow: WireFlow, completed: Bool) {
        flow.isHeldByControl = false
        flow.recording.finish(completed ? .completed : Self.heldAndCancelled.cancelled)
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
#endif
