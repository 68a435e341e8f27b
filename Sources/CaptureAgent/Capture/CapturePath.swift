import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol

// The in-place path: the capture protocol creates the protocol class that
// would have run the task without the agent (corelibs' own HTTP protocol,
// or an app's protocol listed after the capture class), bound to the app's
// own task, with a client that records every call and forwards it. corelibs
// then runs the task as it would without the agent: downloads, byte
// counters, progress, redirects, cookies, cache, authentication,
// `task.error`, `currentRequest`.

/// How a task is captured.
enum CapturePath: Sendable, Equatable {
    /// The next protocol in line runs the app's own task; the agent observes.
    case inPlace
    /// The demux re-sends the request through an inner session: for data
    /// tasks whose body goes straight to a session data delegate (the native
    /// protocol never hands it to the client) and for bodies read from a
    /// stream (the stream can be read once, so only a tee sees it).
    case resent
    /// An app protocol's re-send of a task already being recorded
    /// (``ObservedProtocols``): run in place without recording.
    case duplicate
}

extension CapturePath {
    /// The path for `task`, decided in `startLoading()` on its work queue.
    ///
    /// corelibs chooses the protocol class from the request alone, never
    /// asking `canInit(with: URLSessionTask)`, so this is where the task's
    /// kind and its consumer are known.
    static func choose(for task: URLSessionTask, request: URLRequest, internals: TaskInternals) -> CapturePath {
        if task is URLSessionDownloadTask { return .inPlace }
        // A body stream (or one the delegate supplies) is read once, by
        // whoever sends it: the re-sending path reads it through a tee.
        if task is URLSessionUploadTask {
            if !internals.hasKnownBody { return .resent }
        } else if request.httpBodyStream != nil {
            return .resent
        }
        guard let session = internals.session else { return .inPlace }
        // No completion handler and no session delegate: corelibs throws the
        // body away, so in place nothing would see it; the re-send keeps it.
        if session.delegate == nil { return internals.isUnobserved ? .resent : .inPlace }
        // Chunks go straight from the native protocol to a session data
        // delegate (`.callDelegate`); nothing else sees them.
        guard session.delegate is URLSessionDataDelegate else { return .inPlace }
        return internals.isDelegateStyle ? .resent : .inPlace
    }
}

/// The first protocol class after the capture class that accepts the
/// request: from the session's `protocolClasses` (which respects an app's
/// own protocols listed there), else the default classes. This is the
/// class corelibs would have created without the agent.
enum NextProtocol {
    static func protocolClass(for request: URLRequest, sessionClasses: [AnyClass]?, defaults: [AnyClass]) -> URLProtocol.Type? {
        let capture = ObjectIdentifier(CaptureURLProtocol.self)
        var candidates: ArraySlice<AnyClass> = []
        if let classes = sessionClasses, let index = classes.firstIndex(where: { ObjectIdentifier($0) == capture }) {
            candidates = classes[(index + 1)...]
        }
        for candidate in candidates + defaults[...] where ObjectIdentifier(candidate) != capture {
            if let type = candidate as? URLProtocol.Type, type.canInit(with: request) { return type }
        }
        return nil
    }
}

/// The app's own protocols (listed after the capture class) that are
/// running a captured task right now. Such a protocol may re-send the
/// request through a session of its own (the environment switcher of seed
/// 003 does, with itself, or a helper holding it, as that session's
/// delegate); when that session is captured too, its task is the same
/// exchange seen a second time, so the capture protocol lets it through
/// unrecorded (``isReSending(_:)``). A protocol that re-sends through a
/// session it is not the delegate of (nor held by it) is not recognised:
/// its exchanges are logged twice, as the app's and as the re-send.
enum ObservedProtocols {
    private static let running = Locked<Set<ObjectIdentifier>>([])

    static func insert(_ instance: URLProtocol) {
        _ = running.withLock { $0.insert(ObjectIdentifier(instance)) }
    }

    static func remove(_ identifier: ObjectIdentifier) {
        _ = running.withLock { $0.remove(identifier) }
    }

    /// Whether a task of `session` is an observed protocol re-sending its
    /// task: the session's delegate is that protocol, or holds it in a
    /// stored property. Costs nothing unless an app protocol is running.
    static func isReSending(_ session: URLSession?) -> Bool {
        let observed = running.current
        guard !observed.isEmpty, let delegate = session?.delegate else { return false }
        if let own = delegate as? URLProtocol { return observed.contains(ObjectIdentifier(own)) }
        return Mirror(reflecting: delegate).children.contains { child in
            guard let held = unwrappingOptionals(child.value) as? URLProtocol else { return false }
            return observed.contains(ObjectIdentifier(held))
        }
    }

}
