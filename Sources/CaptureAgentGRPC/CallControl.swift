// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import Foundation
import GRPCCore
import WireProtocol

/// A viewer's breakpoints over one gRPC call, client or server side:
/// ``ControlledFlow`` decides and holds, this tells the transport wrapper
/// how the call goes on. It exists only for an app that
/// allows control, while the viewer asks for breakpoints.
///
/// Traffic rules do not apply to gRPC calls (the policy's rules are left
/// out): a call's URL is its method, a map-local file is not a gRPC answer,
/// and metadata rules are not built (ControlPowers.swift says why). A
/// person's edit at a breakpoint is not applied either: a held call goes on
/// as it was, or is killed.
final class CallControl: Sendable {
    /// How a held call goes on.
    enum Outcome: Sendable, Equatable {
        /// As it was (resumed, timed out, or the viewer went away).
        case proceed
        /// The viewer killed it: the app (client) or the client (server)
        /// gets ``killedStatus``.
        case kill
        /// The app's task was cancelled while it was held.
        case cancelled
    }

    /// What the other end gets for a call a person killed.
    static let killedStatus = Status(code: .cancelled, message: "killed at a breakpoint")

    /// What a write after a kill (or a cancellation at a hold) throws.
    static let stoppedError = RPCError(code: .cancelled, message: "the call was stopped at a breakpoint")

    private let flow: ControlledFlow

    /// Nil when nothing may hold `call`: control not allowed, no
    /// breakpoints asked for now, or no flow built (no viewer).
    init?(agent: CaptureAgent, call: GRPCCallRecording) {
        var policy = agent.controlPolicy
        policy.rules = .empty
        policy.replays = false   // a recorded HTTP response is no gRPC answer
        guard policy.intercepts, let log = call.log, let url = URL(string: log.request.url) else { return nil }
        // The call's end carries its status, so the transport wrapper ends it.
        flow = ControlledFlow(recording: call.flow, agent: agent, policy: policy, ends: .onlyHolds)
        _ = flow.decide(ExchangeRequest(method: log.request.method, url: url, headers: log.request.headers, bodyStreams: true,
                                        direction: log.direction ?? .outbound))
    }

    /// The most message bytes a held response keeps back.
    var holdLimit: Int { flow.holdLimit }

    /// The request is about to go out (client) or to the handler (server):
    /// held when the breakpoint filter matches the flow as it stands.
    func holdRequest(_ call: GRPCCallRecording) async -> Outcome {
        guard flow.requestReady() == .hold else { return .proceed }
        switch await flow.holdRequest() {
        case .send: return .proceed
        case .kill: return .kill
        case .cancelled: return .cancelled
        }
    }

    /// The response head arrived (initial metadata, or a status with no
    /// messages): whether to keep the response back until its status.
    func holdsResponse(_ call: GRPCCallRecording) -> Bool {
        flow.responseArrived() == .hold
    }

    /// The kept messages grew past ``holdLimit``: they go on unheld.
    func responseOutgrewHold() {
        flow.bodyOutgrewHold()
    }

    /// The whole response is kept back: holds it for the viewer.
    func holdResponse(_ call: GRPCCallRecording) async -> Outcome {
        let held = ExchangeResponse(statusCode: 200, headers: call.log?.response?.headers ?? [], body: Data())
        switch await flow.holdResponse(held) {
        case .deliver: return .proceed
        case .kill: return .kill
        case .cancelled: return .cancelled
        }
    }
}
#endif
