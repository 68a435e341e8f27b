/// The app a flow came from, as its agent's hello names it (for spans
/// received over OTLP, the service): what `~app` and `~pid` match. Only
/// the inspector knows it; the agent's rules and breakpoints, which see
/// their own app's flows, match without one.
///
/// ```swift
/// let origin = FlowOrigin(app: "checkout", processID: 4242, host: "build-7")
/// try FilterExpression.parse("~app ^checkout$ & ~pid 4242").matches(log, origin: origin)   // true
/// ```
package struct FlowOrigin: Sendable, Hashable {
    /// The app's name (`Hello.appName`; the OTLP `service.name`).
    package var app: String
    /// Its process id (0 when unknown, as for most spans).
    package var processID: Int
    /// The host it runs on.
    package var host: String

    /// Creates an origin.
    package init(app: String, processID: Int, host: String) {
        self.app = app
        self.processID = processID
        self.host = host
    }
}
