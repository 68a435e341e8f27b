// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import Foundation
import GRPCCore
import WireProtocol

/// One client call as the transport wrapper sees it: the flow starts with
/// the request metadata (the peer is known by then), and ends with the
/// status read, or, when the call is over without one, as the client
/// library ended it.
final class ClientCall: Sendable {
    private let agent: CaptureAgent
    private let descriptor: MethodDescriptor
    private let parentID: FlowID?
    private let sessionID: Int
    private let taskID: Int
    private let endpoint: GRPCEndpoint
    private let recording = Locked<GRPCCallRecording?>(nil)
    /// When the call's timeout runs out, if it has one.
    private let deadline: ContinuousClock.Instant?
    private let timeout: Duration?
    /// Whether a viewer's breakpoints may hold this call (decided as it starts).
    let isControlled: Bool
    /// The breakpoints' state of a controlled call (ClientCall+Control.swift).
    let controlState = Locked(ControlState())

    init(agent: CaptureAgent, descriptor: MethodDescriptor, parentID: FlowID?, sessionID: Int, taskID: Int,
         endpoint: GRPCEndpoint, deadline: ContinuousClock.Instant?, timeout: Duration?) {
        self.deadline = deadline
        self.timeout = timeout
        isControlled = agent.controlPolicy.intercepts
        self.agent = agent
        self.descriptor = descriptor
        self.parentID = parentID
        self.sessionID = sessionID
        self.taskID = taskID
        self.endpoint = endpoint
    }

    var flow: GRPCCallRecording? { recording.withLock { $0 } }

    /// The request metadata is about to be written: the flow starts.
    func started(_ metadata: Metadata) async throws {
        let flow = GRPCCallRecording(agent: agent, descriptor: descriptor, metadata: metadata, endpoint: endpoint,
                                     direction: nil, parentID: parentID, sessionID: sessionID, taskID: taskID)
        recording.withLock { $0 = flow }
        if isControlled, let flow, let control = CallControl(agent: agent, call: flow) {
            controlState.withLock { $0.control = control }
        }
    }

    /// A request message is about to be written.
    func sending(_ bytes: some GRPCContiguousBytes) async throws {
        flow?.message(.request, bytes)
    }

    func requestEnded() {
        flow?.requestEnded()
    }

    /// A response part the client library is about to read.
    func received<B>(_ part: RPCResponsePart<B>) async throws -> RPCResponsePart<B> {
        guard let flow else { return part }
        switch part {
        case .metadata(let metadata):
            flow.responded(metadata)
        case .message(let bytes):
            flow.message(.response, bytes)
        case .status(let status, let trailers) where pastDeadline:
            // The client library reports DEADLINE_EXCEEDED, whatever came.
            flow.finished(Status(code: .deadlineExceeded, message: "\(Self.deadlineExceeded.message) (the server answered \(status.code))"),
                          trailers: trailers)
        case .status(let status, let trailers):
            flow.finished(status, trailers: trailers)
        }
        return part
    }

    /// Reading the response failed: the call ends as the client library
    /// reports it (past the deadline, as DEADLINE_EXCEEDED: the read failed
    /// because the deadline cancelled it).
    func failed(_ error: any Error) {
        let rpcError = error as? RPCError
        var status = Status(code: rpcError.map { Status.Code($0.code) } ?? (error is CancellationError ? .cancelled : .unknown),
                            message: rpcError?.message ?? "\(error)")
        if cancelledByDeadline { status = Self.deadlineExceeded }
        flow?.finished(status, error: FlowError(domain: "grpc-swift", code: status.code.rawValue, message: status.message))
    }

    static let deadlineExceeded = Status(code: .deadlineExceeded, message: "the deadline passed before the call completed")

    private var pastDeadline: Bool { deadline.map { ContinuousClock.now >= $0 } ?? false }

    /// Whether a call cancelled now was cancelled by its deadline. grpc-swift
    /// starts the deadline's clock a little before the transport's
    /// `withStream` (where ``deadline`` is reckoned) and cancels the call
    /// exactly then, so by this clock the cancellation can come just before
    /// the deadline: one run in eight of `GRPCCaptureTests` logged CANCELLED
    /// for a deadline that way. A margin of a quarter of the timeout, at most
    /// 50 ms, covers that gap; an app that cancels its own call within it is
    /// logged DEADLINE_EXCEEDED. (A status that arrives is judged by the
    /// deadline itself.)
    private var cancelledByDeadline: Bool {
        guard let deadline, let timeout else { return false }
        return ContinuousClock.now >= deadline - min(timeout / 4, .milliseconds(50))
    }

    /// The client library is done with the stream. A call that read no
    /// status was cancelled: by the app, or by its deadline.
    func closed() {
        guard let flow, !flow.isFinished else { return }
        let status = cancelledByDeadline ? Self.deadlineExceeded : Status(code: .cancelled, message: "the client cancelled the call")
        flow.finished(status, error: FlowError(domain: "grpc-swift", code: status.code.rawValue, message: status.message))
    }
}
#endif
