extension CaptureAgent {
    /// Whether the agent also emits each captured flow as a span through
    /// swift-distributed-tracing's bootstrapped tracer (swift-otel, say), so
    /// a fleet's flows reach an OpenTelemetry Collector and from there
    /// `netinspect --listen otlp:…` (docs/FLEET.md).
    ///
    /// Off by default: nothing is built and nothing is recorded for it.
    /// When on, flows are recorded even while no inspector is connected.
    /// Spans follow the HTTP semantic conventions (kind client, or server
    /// for inbound flows), with headers as the log has them (redacted) and
    /// bodies only with ``includingBodies``.
    ///
    /// ```swift
    /// InstrumentationSystem.bootstrap(otelTracer)   // the app's own tracing setup
    /// var configuration = CaptureAgent.Configuration()
    /// configuration.spans = .enabled
    /// let agent = try CaptureAgent.start(configuration)
    /// ```
    public struct SpanEmission: Sendable, Equatable {
        /// Whether spans are emitted at all.
        public var isEnabled: Bool
        /// Whether captured bodies go into `http.request.body.content` and
        /// `http.response.body.content` (text bodies only, as captured, up
        /// to ``Configuration/bodyCaptureLimit``).
        public var includesBodies: Bool

        /// No spans (the default).
        public static let disabled = SpanEmission(isEnabled: false, includesBodies: false)
        /// A span per flow, without bodies.
        public static let enabled = SpanEmission(isEnabled: true, includesBodies: false)
        /// A span per flow, with text bodies.
        public static let includingBodies = SpanEmission(isEnabled: true, includesBodies: true)
    }
}
