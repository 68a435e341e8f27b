import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What swift-corelibs-foundation keeps private about a task but the agent
/// needs, read through `Mirror` in this one place. Every read fails soft: a
/// missing field means capturing with less (the default configuration, a
/// body-less request, one `didLoad` at the end), never a crash.
///
/// - `session`: the task's original `URLSession` (internal `session`,
///   declared on `URLSessionTask`, hence the superclass mirror for subclasses).
/// - `knownBody`: `.none`, `.data(DispatchData)`, `.file(URL)` or
///   `.stream(InputStream)`. Upload-from-data and upload-from-file bodies
///   live only here; `request.httpBody` is nil for them.
/// - `workQueue`: the serial queue on which corelibs runs the task's own
///   work, including both halves of `cancel()`. The capture protocol calls
///   the client there, as corelibs' HTTP protocol does, so a late callback
///   cannot overtake a cancellation (see `CaptureFlow.withClient`).
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
    var body: Body?
    var delivery: Delivery
    /// The task delegate of `data(for:delegate:)` and its kin, which also gets chunks.
    var completionTaskDelegate: URLSessionTaskDelegate?

    /// Reads `task`'s internals. Call on the task's work queue (inside
    /// `startLoading`): the registry it reads is mutated only there.
    init(of task: URLSessionTask) {
        let fields = Self.fields(["session", "workQueue", "knownBody"], of: task)
        session = fields["session"].flatMap(Self.unwrapped) as? URLSession
        workQueue = fields["workQueue"].flatMap(Self.unwrapped) as? DispatchQueue
        body = fields["knownBody"].flatMap(Self.unwrapped).flatMap(Self.body(from:))
        // Looked up once: each lookup reflects the session and its registry.
        let behaviour = session.flatMap { Self.behaviour(of: task, in: $0) }
        delivery = session.flatMap { session in behaviour.flatMap { Self.delivery(from: $0, in: session) } } ?? .wholeBodyOnce
        completionTaskDelegate = behaviour.flatMap(Self.completionTaskDelegate(from:))
    }

    /// The children labelled `labels` of the mirror of `subject` and of its
    /// superclasses (the first of each label, subclass first), by label.
    /// Stops once all are found: every child read is boxed, and a task has
    /// requests and responses among the fields after these.
    private static func fields(_ labels: Set<String>, of subject: Any) -> [String: Any] {
        var result: [String: Any] = [:]
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, labels.contains(label), result[label] == nil else { continue }
                result[label] = child.value
                if result.count == labels.count { return result }
            }
            mirror = current.superclassMirror
        }
        return result
    }

    /// The child labelled `label` of the mirror of `subject` or of its
    /// nearest superclass that has one: what `fields([label], of:)[label]` gives,
    /// without reflecting every other stored property of a large object.
    private static func field(_ label: String, of subject: Any) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == label }) { return child.value }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The wrapped value of an `Optional` (any depth) held in an `Any`.
    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.flatMap { unwrapped($0.value) }
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
    /// generic `Sequence` path, one `DispatchData.Iterator.next()` per byte:
    /// about 25 M instructions per MiB, on the work queue every session shares.)
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
        behaviour(of: task, in: session).flatMap { delivery(from: $0, in: session) }
    }

    private static func delivery(from behaviour: Any, in session: URLSession) -> Delivery? {
        if let label = Mirror(reflecting: behaviour).children.first?.label {
            return label.contains("CompletionHandler") ? .wholeBodyOnce : nil
        }
        guard String(describing: behaviour) == "callDelegate" else { return nil }
        return session.delegate is URLSessionDataDelegate ? .delegateChunks : .wholeBodyOnce
    }

    /// The delegate given to `data(for:delegate:)` and its kin: kept in the
    /// registry beside the completion handler, not in `task.delegate`.
    /// corelibs sends it the body's chunks as well as completing the call.
    static func completionTaskDelegate(of task: URLSessionTask, in session: URLSession) -> URLSessionTaskDelegate? {
        behaviour(of: task, in: session).flatMap(completionTaskDelegate(from:))
    }

    private static func completionTaskDelegate(from behaviour: Any) -> URLSessionTaskDelegate? {
        guard let payload = Mirror(reflecting: behaviour).children.first,
              payload.label?.hasSuffix("WithTaskDelegate") == true,
              let delegate = Array(Mirror(reflecting: payload.value).children).last
        else { return nil }
        return unwrapped(delegate.value) as? URLSessionTaskDelegate
    }

    private static func behaviour(of task: URLSessionTask, in session: URLSession) -> Any? {
        guard let registry = field("taskRegistry", of: session),
              let behaviours = field("behaviours", of: registry) as? [Int: Any]
        else { return nil }
        return behaviours[task.taskIdentifier]
    }
}
