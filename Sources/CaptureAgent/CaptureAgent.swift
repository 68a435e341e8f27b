import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

/// Captures the HTTP traffic of `URLSession`s in this process and streams it
/// to a netinspect inspector.
///
/// Start it first thing in `main`, before any `URLSession` exists, so that
/// `URLSession.shared` is captured too; opt other sessions in with
/// ``capture(_:)``:
///
/// ```swift
/// import CaptureAgent
/// import Foundation
/// #if canImport(FoundationNetworking)
/// import FoundationNetworking
/// #endif
///
/// let agent = try CaptureAgent.start()   // $NETINSPECT, else the default socket
/// let config = URLSessionConfiguration.default
/// agent.capture(config)
/// let session = URLSession(configuration: config)
/// // … use `session` and `URLSession.shared` as usual …
/// agent.stop()
/// ```
///
/// The app's requests and responses are not changed: almost every task is
/// run by Foundation's own HTTP protocol, bound to the app's task, while the
/// agent records what it reports (downloads included); only data tasks whose
/// body goes straight to a session data delegate, and stream bodies, are
/// re-sent through one inner session per original session. Events go to the
/// inspector from one background thread; with no inspector listening they
/// are counted and dropped.
///
/// See `docs/AGENT.md` for the two capture paths, what differs on Linux,
/// redaction and limits.
public final class CaptureAgent: Sendable {
    /// The configuration the agent was started with.
    public let configuration: Configuration
    /// Where the agent sends events.
    public let destination: Configuration.Destination

    package let clock: FlowClock
    let demuxes: DemuxRegistry
    /// Numbers each client (`NetworkLog.sessionID`), whatever its kind.
    let sessionNumbers: Counter
    /// `URLSessionConfiguration.default.protocolClasses`: where the next
    /// protocol in line is looked for when the session lists none after ours.
    let defaultProtocolClasses: [AnyClass]
    private let pathCounts = Locked(PathCounts())
    /// In-place flows whose final event is being built.
    let finishing = DispatchGroup()
    private let streamer: EventStreamer
    /// Spans for flows, when ``Configuration/spans`` asks for them; nil (nothing built) otherwise.
    private let spans: FlowSpans?
    /// The connected viewer's traffic rules; always empty unless the app
    /// allows control (``Configuration/allowsControl`` or `NETINSPECT_CONTROL=1`).
    package let rules: RuleStore
    /// Recent requests as the app made them, for a viewer's replays; holds
    /// nothing unless control is allowed.
    package let replays: ReplayBuffer
    /// The connected viewer's breakpoints; never active unless control is allowed.
    package let breakpoints: Breakpoints
    /// The recorded responses the connected viewer replays; never in force
    /// unless control is allowed.
    package let serverReplay: ServerReplayStore
    /// What adapters keep for the agent's life; closed by ``stop()``.
    package let attachments = AgentAttachments()
    /// Whether this agent accepts a viewer's rules, as its hello says.
    public let allowsControl: Bool
    private let isRunning = Locked(true)

    /// Why ``start(_:)`` failed.
    public enum StartError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Another agent is running in this process; stop it first.
        case alreadyRunning
        /// `$NETINSPECT` is set but is not `unix:PATH` or `tcp:HOST:PORT`.
        case invalidDestination(String)

        /// What went wrong, for a person.
        public var description: String {
            switch self {
            case .alreadyRunning: "a CaptureAgent is already running in this process"
            case .invalidDestination(let reason): "invalid $\(Endpoint.environmentVariable): \(reason)"
            }
        }
    }

    /// What the agent has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Events dropped: no inspector connected, or even without their
        /// bodies the queue could not hold them. One kind of flow is not
        /// counted: an AsyncHTTPClient request that started while no
        /// inspector was connected and failed before any connection carried
        /// it (refused, DNS, a pool timeout). Telling it from a request a
        /// connection did carry needs the pairing the capture does only
        /// while it records (docs/AGENT.md).
        public var droppedEvents = 0
        /// Events whose bodies were cut short because the queue was over its
        /// byte bound: bodies give way before flows (each cut body is marked
        /// truncated and keeps its true size).
        public var eventsWithBodiesCut = 0
        /// Events waiting to be written.
        public var queuedEvents = 0
        /// Estimated bytes of the events waiting to be written.
        public var queuedBytes = 0
        /// The most events ever waiting at once.
        public var peakQueuedEvents = 0
        /// The most estimated bytes ever waiting at once.
        public var peakQueuedBytes = 0
        /// Connections made to an inspector.
        public var connections = 0
        /// Frames written, `hello` and `status` included.
        public var framesWritten = 0
        /// Of ``droppedEvents``: events written to an inspector that went
        /// away before taking them: the events written on the connection
        /// minus the count of the inspector's last receipt (Unix or TCP). With
        /// an inspector that sends no receipts, the events in frames it had
        /// not read from a Unix socket (Linux only; 0 over TCP). See docs/AGENT.md.
        public var unreadEventsDropped = 0
        /// Unix-socket listeners the agent would not send to because they
        /// run as another user (neither this process's user nor root); see
        /// SECURITY.md.
        public var refusedListeners = 0
    }

    /// Starts capturing and streaming.
    ///
    /// ```swift
    /// let agent = try CaptureAgent.start()
    /// let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .unix(path: "/tmp/x.sock")))
    /// let agent = try CaptureAgent.start(CaptureAgent.Configuration(destination: .tcp(host: "127.0.0.1", port: 9123)))
    /// ```
    ///
    /// Registers the capture protocol with `URLProtocol`, which captures
    /// `URLSession.shared` if no session existed yet. If one did,
    /// `URLSession.shared` cannot be captured and the agent says so once on
    /// stderr. (It checks by reading `URLSession.shared`'s protocol classes
    /// right after registering: `shared` snapshots the registered classes
    /// when it is created, and it is created here if it did not exist yet.)
    ///
    /// - Throws: ``StartError``.
    public static func start(_ configuration: Configuration = Configuration()) throws(StartError) -> CaptureAgent {
        try start(configuration, clock: .system, environment: ProcessInfo.processInfo.environment)
    }

    static func start(
        _ configuration: Configuration, clock: FlowClock, environment: [String: String]
    ) throws(StartError) -> CaptureAgent {
        let destination: Endpoint
        do {
            destination = try configuration.resolvedDestination(environment: environment)
        } catch {
            throw .invalidDestination(error.description)
        }
        let allowsControl = configuration.allowsControl || environment[Self.controlVariable] == "1"
        let agent = CaptureAgent(configuration: configuration, destination: destination, clock: clock, allowsControl: allowsControl)
        try AgentRegistry.activate(agent)
        _ = URLProtocol.registerClass(CaptureURLProtocol.self)
        warnIfSharedSessionIsNotCaptured()
        CallDelegatePattern.learn()
        agent.streamer.start()
        agent.streamer.waitForFirstAttempt(timeout: configuration.initialConnectionWait)
        return agent
    }

    /// The environment variable that allows control without a code change: `NETINSPECT_CONTROL=1`.
    public static let controlVariable = Endpoint.controlEnvironmentVariable

    private init(configuration: Configuration, destination: Endpoint, clock: FlowClock, allowsControl: Bool) {
        var configuration = configuration
        configuration.bodyCaptureLimit = max(0, configuration.bodyCaptureLimit)
        configuration.maximumPendingEvents = max(1, configuration.maximumPendingEvents)
        configuration.maximumPendingBytes = max(0, configuration.maximumPendingBytes)
        self.configuration = configuration
        self.destination = destination
        self.clock = clock
        self.allowsControl = allowsControl
        let defaults = URLSessionConfiguration.default.protocolClasses ?? []
        self.defaultProtocolClasses = defaults
        let sessionNumbers = Counter()
        self.sessionNumbers = sessionNumbers
        self.demuxes = DemuxRegistry(defaultProtocolClasses: defaults, sessionNumbers: sessionNumbers)
        let info = ProcessInfo.processInfo
        let hello = Hello(
            agentName: "CaptureAgent",
            agentVersion: Self.version,
            appName: configuration.appName ?? info.processName,
            processID: Int(info.processIdentifier),
            hostName: info.hostName,
            token: configuration.token,
            acceptsControl: allowsControl,
            highestProtocolVersion: Wire.highestProtocolVersion
        )
        let rules = RuleStore()
        self.rules = rules
        let replays = ReplayBuffer(limits: configuration.replayLimits)
        self.replays = replays
        let breakpoints = Breakpoints(timeout: configuration.breakpointTimeout)
        let marker = configuration.redactionMarker
        self.breakpoints = breakpoints
        let redaction = configuration
        let serverReplay = ServerReplayStore(redactURL: { redaction.redacting($0) },
                                             redactHeaders: { redaction.redacting($0) })
        self.serverReplay = serverReplay
        var control: (@Sendable (ViewerMessage) -> Void)?
        var viewerGone: (@Sendable () -> Void)?
        if allowsControl {
            control = { @Sendable message in
                switch message {
                case .rules(let list): rules.replace(with: list)
                case .replay(let id): replays.replay(id, edited: nil, marker: marker)
                case .editedReplay(let id, let request): replays.replay(id, edited: request, marker: marker)
                case .compose(let id, let request): replays.replay(id, edited: request, marker: marker, composed: true)
                case .intercept(let filter): breakpoints.intercept(filter)
                case .resume(let resume): breakpoints.decide(resume.id, .resume(resume))
                case .kill(let id): breakpoints.decide(id, .kill)
                case .serverReplay(let book): serverReplay.receive(book)
                case .receipt, .useProtocolVersion: break
                }
            }
            viewerGone = { @Sendable in
                rules.replace(with: [])
                serverReplay.receive(nil)
                breakpoints.releaseAll(.viewerGone)
            }
        }
        spans = configuration.spans.isEnabled ? FlowSpans(configuration.spans) : nil
        self.streamer = EventStreamer(
            destination: destination,
            hello: hello,
            limits: .init(maximumEvents: configuration.maximumPendingEvents, maximumBytes: configuration.maximumPendingBytes,
                          foldWindowNanoseconds: configuration.foldWindowNanoseconds),
            control: control,
            viewerGone: viewerGone
        )
    }

    /// The agent's version, sent in `hello`.
    public static let version = "0.1.0"

    /// Makes sessions created from `configuration` captured: puts the
    /// capture protocol first in its `protocolClasses` (where Foundation
    /// asks first). Call before creating the session; a session copies its
    /// configuration when it is created.
    ///
    /// ```swift
    /// let config = URLSessionConfiguration.default
    /// config.timeoutIntervalForRequest = 10
    /// agent.capture(config)
    /// let session = URLSession(configuration: config, delegate: myDelegate, delegateQueue: nil)
    /// ```
    public func capture(_ configuration: URLSessionConfiguration) {
        let others = (configuration.protocolClasses ?? []).filter {
            ObjectIdentifier($0) != ObjectIdentifier(CaptureURLProtocol.self)
        }
        configuration.protocolClasses = [CaptureURLProtocol.self] + others
    }

    /// Stops capturing new tasks and flushes queued events, waiting at most
    /// ``Configuration/flushTimeout``. Tasks already running finish normally;
    /// their remaining events are not sent. Calling it again does nothing.
    public func stop() {
        let wasRunning = isRunning.withLock { running -> Bool in
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        AgentRegistry.deactivate(self)
        // Flows that ended in place are logged from their own queues just
        // after the app is told; let those already under way reach the queue.
        _ = finishing.wait(timeout: .now() + configuration.flushTimeout)
        streamer.stop(timeout: configuration.flushTimeout)
        demuxes.invalidateAll()
        attachments.closeAll()
    }

    /// Whether the agent captures new tasks (until ``stop()``).
    public var isCapturing: Bool { isRunning.current }

    /// Whether an inspector is connected right now.
    public var isConnected: Bool { streamer.connected }

    /// Counters of the event stream.
    public var statistics: Statistics { streamer.currentStatistics }

    /// Inner sessions alive: one per captured original session.
    package var innerSessionCount: Int { demuxes.count }

    /// How many tasks each capture path has taken since the agent started.
    package struct PathCounts: Sendable, Equatable {
        /// Tasks run by the next protocol in line, observed in place.
        package var inPlace = 0
        /// Tasks re-sent through an inner session.
        package var resent = 0
        /// Tasks an app's own protocol made to re-send a task already being
        /// recorded: run without recording, so each exchange is logged once.
        package var duplicates = 0

        package init(inPlace: Int = 0, resent: Int = 0, duplicates: Int = 0) {
            self.inPlace = inPlace
            self.resent = resent
            self.duplicates = duplicates
        }
    }

    /// How many tasks each capture path has taken so far.
    package var capturePaths: PathCounts { pathCounts.current }

    func count(_ path: CapturePath) {
        pathCounts.withLock { counts in
            switch path {
            case .inPlace: counts.inPlace += 1
            case .resent: counts.resent += 1
            case .duplicate: counts.duplicates += 1
            }
        }
    }

    /// Counts events never built because no inspector was connected.
    package func countDropped(_ count: Int) {
        streamer.countDropped(count)
    }

    package func emit(_ message: __owned Message) {
        spans?.observe(message)
        streamer.submit(consume message)
    }

    /// Whether capture paths should record flows now: an inspector is
    /// connected, or every flow becomes a span.
    package var isRecording: Bool { spans != nil || isConnected }

    /// ``isRecording``, and whether flows should send their bodies' parts
    /// as they pass (the viewer reads protocol version 2), in one look: what
    /// a flow decides as it starts.
    package var recordingState: (isRecording: Bool, streamsBodyParts: Bool) {
        let viewer = streamer.viewerState
        return (spans != nil || viewer.isConnected, viewer.readsBodyParts)
    }

    /// Whether a flow starting now sends its bodies' parts as they pass.
    package var streamsBodyParts: Bool { streamer.viewerState.readsBodyParts }

    // MARK: - URLSession.shared

    private static let sharedWarning = Locked(false)

    private static func warnIfSharedSessionIsNotCaptured() {
        guard !sharedSessionIsCaptured else { return }
        let first = sharedWarning.withLock { warned -> Bool in
            defer { warned = true }
            return !warned
        }
        guard first else { return }
        let message = "netinspect CaptureAgent: URLSession.shared existed before CaptureAgent.start() "
            + "(or another URLSession was created first), so URLSession.shared is not captured. "
            + "Start the agent first thing in main, or use a session whose configuration went through agent.capture(_:).\n"
        FileHandle.standardError.write(Data(message.utf8))
    }

    /// Whether `URLSession.shared` asks the capture protocol first. Creates
    /// `shared` when it does not exist yet, which is when it is captured.
    static var sharedSessionIsCaptured: Bool {
        isCaptured(URLSession.shared)
    }

    /// Whether `session` asks the capture protocol first.
    static func isCaptured(_ session: URLSession) -> Bool {
        guard let first = session.configuration.protocolClasses?.first else { return false }
        return ObjectIdentifier(first) == ObjectIdentifier(CaptureURLProtocol.self)
    }
}

/// The running agent, found by the capture protocol (whose instances
/// Foundation creates) and by ``CaptureAgent/start(_:)`` to refuse a second one.
enum AgentRegistry {
    private struct State {
        var active: CaptureAgent?
        var mostRecent: CaptureAgent?
    }

    private static let state = Locked(State())

    static var active: CaptureAgent? { state.current.active }
    static var mostRecent: CaptureAgent? { state.current.mostRecent }

    static func activate(_ agent: CaptureAgent) throws(CaptureAgent.StartError) {
        let accepted = state.withLock { state -> Bool in
            guard state.active == nil else { return false }
            state.active = agent
            state.mostRecent = agent
            return true
        }
        if !accepted { throw .alreadyRunning }
    }

    static func deactivate(_ agent: CaptureAgent) {
        state.withLock { state in
            if state.active === agent { state.active = nil }
        }
    }
}
