import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What swift-corelibs-foundation keeps private about a task but the agent
/// needs, read in this one place from the runtime's field metadata
/// (``StoredField``: found by name once, then read at its offset). Every read
/// fails soft: a missing field means capturing with less (the default
/// configuration, a body-less request, one `didLoad` at the end), never a crash.
///
/// - `session`: the task's original `URLSession` (internal `session`,
///   declared on `URLSessionTask`).
/// - `knownBody`: `.none`, `.data(DispatchData)`, `.file(URL)` or
///   `.stream(InputStream)`. Upload-from-data and upload-from-file bodies
///   live only here; `request.httpBody` is nil for them.
/// - `workQueue`: the serial queue on which corelibs runs the task's own
///   work, including both halves of `cancel()`. The capture protocol calls
///   the client there, as corelibs' HTTP protocol does, so a late callback
///   cannot overtake a cancellation (see `ResendingFlow.withClient`).
/// - the task's behaviour in `session.taskRegistry.behaviours`: whether its
///   results go to a completion handler (one `didLoad` with the whole body,
///   because `didLoad` replaces the stored body) or to a delegate (chunks),
///   and the task delegate an async call was given.
struct TaskInternals: @unchecked Sendable {
    /// The body the app gave the task.
    enum Body {
        case none
        case data(Data)
        case file(URL)
        case stream(InputStream)
        /// `uploadTask(withStreamedRequest:)`: the delegate's
        /// `needNewBodyStream` supplies the body.
        case askDelegate
    }

    /// How the task's owner consumes the response body.
    enum Delivery: Equatable {
        /// A session delegate receives `didReceive data` per chunk.
        case delegateChunks
        /// A completion handler (or async/await) receives the whole body once;
        /// also the safe choice when the behaviour cannot be read.
        case wholeBodyOnce
    }

    var session: URLSession?
    /// The task's own work queue (internal `workQueue`), targeting the one
    /// queue on which corelibs touches every session's task registry. The
    /// protocol client reads that registry, so it must be called there.
    var workQueue: DispatchQueue?
    /// The task's `knownBody`, as read (an `Optional<_Body>`); read only for
    /// upload tasks, the one kind whose body is not in its request.
    private var knownBody: Any?
    /// A data task's request, whose body is what corelibs put into
    /// `knownBody`; read only when asked (``body``): `httpBody` hands out a
    /// copy of the bytes, a megabyte copied on the shared work queue for a
    /// 1 MiB POST.
    private var request: URLRequest?
    /// The task's behaviour in the registry, as read (a `_Behaviour`); not
    /// read when it cannot matter (see ``needsBehaviour(of:in:)``).
    private var behaviour: Any?

    /// Reads `task`'s internals. Call on the task's work queue (inside
    /// `startLoading`): the registry it reads is mutated only there.
    ///
    /// Only loads happen here; reflecting what was loaded (``body``,
    /// ``delivery``, ``completionTaskDelegate``: reflection boxes values and
    /// demangles closure types (docs/BENCHMARKS.md, "Costs behind the code")) is left to
    /// whoever asks, off that queue, which every session's tasks share.
    init(of task: URLSessionTask) {
        let fields = Fields.shared
        session = fields.session.flatMap { $0.value(in: task) as? URLSession }
        workQueue = fields.workQueue.flatMap { $0.value(in: task, as: DispatchQueue.self) }
        if task is URLSessionUploadTask {
            knownBody = fields.knownBody?.value(in: task)
        } else {
            request = task.originalRequest
        }
        if let session, Self.needsBehaviour(of: task, in: session) {
            behaviour = Self.behaviour(of: task, in: session)
        }
    }

    /// Whether the registry behaviour can change the result: only when the
    /// session has a data delegate (chunks, or a completion handler beside
    /// it), or the task is an async call (`data(for:delegate:)` and its kin
    /// may carry a task delegate). corelibs marks async calls, and only them,
    /// with `_callCompletionHandlerInline`. Otherwise (a completion handler
    /// on a session without a data delegate, the common case) the body goes
    /// whole, once, and nobody else wants chunks: no reflection needed, which
    /// spares most requests its cost (docs/BENCHMARKS.md, "Costs behind the code").
    private static func needsBehaviour(of task: URLSessionTask, in session: URLSession) -> Bool {
        if session.delegate is URLSessionDataDelegate { return true }
        // Without a session delegate a task with no completion handler sends
        // its body nowhere (``isUnobserved``): only a registry lookup.
        if session.delegate == nil { return true }
        guard let inline = Fields.shared.callsCompletionInline?.value(in: task, as: Bool.self) else { return true }
        return inline
    }

    /// Whether an upload task carries its body (data or file) rather than
    /// asking its delegate for a stream (`uploadTask(withStreamedRequest:)`
    /// leaves `knownBody` nil). True when it could not be read.
    var hasKnownBody: Bool {
        guard let knownBody else { return Fields.shared.knownBody == nil }
        return unwrappingOptionals(knownBody) != nil
    }

    /// Whether the task's body goes to the session's data delegate chunk by
    /// chunk (`.callDelegate` in the registry), which the native protocol
    /// does without the client. Reflects the behaviour: ask only when the
    /// session has a data delegate.
    var isDelegateStyle: Bool {
        consumer.delivery == .delegateChunks
    }

    /// Whether the task's body reaches nobody: a task with no completion
    /// handler (`.callDelegate` in the registry) in a session without a
    /// delegate, which corelibs runs with its body thrown away. Decided by
    /// comparing the behaviour's bytes with those of a `.callDelegate` learned
    /// from a probe task (``CallDelegatePattern``): reflecting a behaviour
    /// that holds a completion handler demangles the closure's type on the
    /// work queue, a byte comparison loads a few words
    /// (docs/BENCHMARKS.md, "Costs behind the code"). False when unknown.
    var isUnobserved: Bool {
        guard let session, session.delegate == nil, let behaviour else { return false }
        return CallDelegatePattern.matches(behaviour)
    }

    /// The body the app gave the task; nil when it cannot be read.
    var body: Body? {
        request.map(Self.body(of:)) ?? knownBody.flatMap(unwrappingOptionals).flatMap(Self.body(from:))
    }

    /// How the task's owner consumes the body, and the task delegate of
    /// `data(for:delegate:)` and its kin (which also gets the chunks), from
    /// one reflection of the task's behaviour.
    var consumer: (delivery: Delivery, completionTaskDelegate: URLSessionTaskDelegate?) {
        guard let session, let behaviour else { return (.wholeBodyOnce, nil) }
        let read = Self.read(behaviour, in: session)
        return (read.delivery ?? .wholeBodyOnce, read.taskDelegate)
    }

    /// What corelibs keeps as a data task's body: a non-empty `httpBody`,
    /// else the body stream, else none.
    private static func body(of request: URLRequest) -> Body {
        if let data = request.httpBody, !data.isEmpty { return .data(data) }
        if let stream = request.httpBodyStream { return .stream(stream) }
        return .none
    }

    /// The private fields read, found once per process.
    struct Fields: Sendable {
        static let shared = Fields()

        let session = StoredField("session", in: URLSessionTask.self)
        let workQueue = StoredField("workQueue", in: URLSessionTask.self)
        let knownBody = StoredField("knownBody", in: URLSessionTask.self)
        /// Set by corelibs' async APIs, which keep a task delegate in the behaviour.
        let callsCompletionInline = StoredField("_callCompletionHandlerInline", in: URLSessionTask.self)
        let taskRegistry = StoredField("taskRegistry", in: URLSession.self)
        /// The task's protocol (`ProtocolState`) and the lock guarding it:
        /// an answered 401 puts a fresh HTTP protocol there for the retry.
        let protocolStorage = StoredField("_protocolStorage", in: URLSessionTask.self)
        let protocolLock = StoredField("_protocolLock", in: URLSessionTask.self)
        /// The request of a retry after an answered challenge (with `Authorization`).
        let authRequest = StoredField("authRequest", in: URLSessionTask.self)
        /// `behaviours` of the registry's class (`URLSession._TaskRegistry`).
        let behaviours: StoredField?

        private init() {
            behaviours = (taskRegistry?.type as? AnyClass).flatMap { StoredField("behaviours", in: $0) }
        }
    }

    /// The protocol instance the task holds now, read under the task's own
    /// lock; nil when there is none (yet, or any more) or it cannot be read.
    static func currentProtocol(of task: URLSessionTask) -> URLProtocol? {
        let fields = Fields.shared
        guard let storage = fields.protocolStorage, let lock = fields.protocolLock?.object(in: task) as? NSLock else { return nil }
        let state = lock.withLock { storage.value(in: task) }
        guard let payload = Mirror(reflecting: state).children.first, payload.label == "existing" else { return nil }
        return payload.value as? URLProtocol
    }

    /// The request corelibs sends when it retries after an answered challenge.
    static func authRequest(of task: URLSessionTask) -> URLRequest? {
        Fields.shared.authRequest?.value(in: task, as: URLRequest?.self) ?? nil
    }


    private static func body(from value: Any) -> Body? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .enum else { return nil }
        guard let payload = mirror.children.first else {
            return String(describing: value) == "none" ? Body.none : nil
        }
        switch payload.label {
        case "data":
            if let data = payload.value as? DispatchData { return .data(copy(data)) }
            if let data = payload.value as? Data { return .data(data) }
            return nil
        case "file":
            return (payload.value as? URL).map(Body.file)
        case "stream":
            return (payload.value as? InputStream).map(Body.stream)
        default:
            return nil
        }
    }

    /// The bytes of `data`, copied region by region. (`Data(data)` takes the
    /// generic `Sequence` path, one `DispatchData.Iterator.next()` per byte,
    /// on the work queue every session shares; docs/BENCHMARKS.md, "Costs behind the code".)
    static func copy(_ data: DispatchData) -> Data {
        var bytes = Data(count: data.count)
        guard !data.isEmpty else { return bytes }
        bytes.withUnsafeMutableBytes { buffer in
            _ = data.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        }
        return bytes
    }

    /// The delivery the registry records for `task`; nil when it cannot be
    /// read (or the task is not registered yet: corelibs registers it
    /// asynchronously on the session's work queue, ahead of any `startLoading`).
    static func delivery(of task: URLSessionTask, in session: URLSession) -> Delivery? {
        behaviour(of: task, in: session).flatMap { read($0, in: session).delivery }
    }

    /// The delivery and the task delegate a registry behaviour stands for,
    /// from one reflection of it (each reflection of an enum case with a
    /// closure payload demangles the closure's type (docs/BENCHMARKS.md, "Costs behind the code")).
    ///
    /// `.callDelegate` is the one case without a payload; the others are
    /// `…CompletionHandler(closure)` and
    /// `…CompletionHandlerWithTaskDelegate(closure, delegate?)`.
    private static func read(_ behaviour: Any, in session: URLSession) -> (delivery: Delivery?, taskDelegate: URLSessionTaskDelegate?) {
        guard let payload = Mirror(reflecting: behaviour).children.first else {
            guard String(describing: behaviour) == "callDelegate" else { return (nil, nil) }
            return (session.delegate is URLSessionDataDelegate ? .delegateChunks : .wholeBodyOnce, nil)
        }
        guard let label = payload.label, label.contains("CompletionHandler") else { return (nil, nil) }
        guard label.hasSuffix("WithTaskDelegate"),
              let delegate = Array(Mirror(reflecting: payload.value).children).last
        else { return (.wholeBodyOnce, nil) }
        return (.wholeBodyOnce, unwrappingOptionals(delegate.value) as? URLSessionTaskDelegate)
    }

    static func behaviourForProbe(of task: URLSessionTask, in session: URLSession) -> Any? {
        behaviour(of: task, in: session)
    }

    private static func behaviour(of task: URLSessionTask, in session: URLSession) -> Any? {
        let fields = Fields.shared
        guard let registryField = fields.taskRegistry, let behavioursField = fields.behaviours,
              let registry = registryField.object(in: session),
              let behaviours = behavioursField.value(in: registry) as? any IntKeyedValues
        else { return nil }
        return behaviours.value(forKey: task.taskIdentifier)
    }
}

/// The in-memory bytes of the registry behaviour `.callDelegate`, learned
/// once per process from a task that is never resumed (``learn()``, called
/// by `CaptureAgent.start`, off any work queue).
enum CallDelegatePattern {
    private static let pattern = Locked<[UInt8]?>(nil)

    /// corelibs registers a new task asynchronously on its session's work
    /// queue, and the registry belongs to that queue: it is read there, in a
    /// block queued after the registration. (Polling it from this thread
    /// raced the registration and crashed about 1 run in 60 under load.)
    static func learn() {
        guard pattern.current == nil else { return }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = []
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/netinspect-probe")!)
        // Only the queue: `TaskInternals(of:)` would read the registry here,
        // off that queue, while corelibs registers the task on it (a
        // session without a delegate needs the behaviour): that crashed an
        // agent's start about one run in ten when it was the process's first.
        guard let workQueue = TaskInternals.Fields.shared.workQueue?.value(in: task, as: DispatchQueue.self) else { return }
        let bytes = workQueue.sync { TaskInternals.behaviourForProbe(of: task, in: session).map(Self.bytes(of:)) }
        if let bytes { pattern.withLock { $0 = bytes } }
    }

    static func matches(_ behaviour: Any) -> Bool {
        guard let known = pattern.current else { return false }
        return bytes(of: behaviour) == known
    }

    private static func bytes(of value: Any) -> [UInt8] {
        func raw<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        return _openExistential(value, do: raw)
    }
}

/// A dictionary keyed by `Int` whose value type is not known statically
/// (the registry's `[Int: _Behaviour]`): looks one key up without
/// converting the whole dictionary to `[Int: Any]`.
private protocol IntKeyedValues {
    func value(forKey key: Int) -> Any?
}

extension Dictionary: IntKeyedValues where Key == Int {
    fileprivate func value(forKey key: Int) -> Any? {
        self[key].map { $0 as Any }
    }
}
