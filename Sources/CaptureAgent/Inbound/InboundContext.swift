import Instrumentation
import WireProtocol

/// The key under which a handler's `ServiceContext` carries the inbound flow
/// it serves. An inbound capture middleware sets it around the handler; every
/// outbound adapter reads it when a flow starts and records it as the flow's
/// `parentID`. Being a `ServiceContext` value, it nests under an app's own
/// tracing context and travels wherever that context travels.
private enum InboundFlowKey: ServiceContextKey {
    typealias Value = FlowID
    static var nameOverride: String? { "netinspect.inbound-flow" }
}

extension ServiceContext {
    /// The inbound flow (a request this service received) whose handler runs
    /// with this context; nil outside any captured handler.
    ///
    /// ```swift
    /// var context = ServiceContext.current ?? .topLevel
    /// context.inboundFlowID = flow.id
    /// try await ServiceContext.withValue(context) { try await handler() }
    /// ```
    public var inboundFlowID: FlowID? {
        get { self[InboundFlowKey.self] }
        set { self[InboundFlowKey.self] = newValue }
    }
}

extension CaptureAgent {
    /// The inbound flow the current task is handling, if any: what an
    /// outbound flow started now records as its `parentID`.
    ///
    /// ```swift
    /// let parent = CaptureAgent.currentInboundFlowID   // nil outside a captured handler
    /// ```
    public static var currentInboundFlowID: FlowID? { ServiceContext.current?.inboundFlowID }

    /// Runs `operation` as the handler of inbound flow `id`: flows it starts,
    /// on this task and its child tasks, name `id` as their parent.
    ///
    /// ```swift
    /// let response = try await CaptureAgent.handling(flow.id) { try await next(request, context) }
    /// ```
    public static func handling<T>(
        _ id: FlowID,
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> T
    ) async rethrows -> T {
        var context = ServiceContext.current ?? .topLevel
        context.inboundFlowID = id
        return try await ServiceContext.withValue(context, isolation: isolation, operation: operation)
    }
}
