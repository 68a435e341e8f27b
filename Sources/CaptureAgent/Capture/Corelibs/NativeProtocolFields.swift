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

/// The private fields of corelibs' native protocol read on the in-place
/// path, found once by name (``StoredField``); each read fails soft.
///
/// - `URLProtocol.properties`: where the native protocol leaves a download's
///   file (`.temporaryFileURL`) before it tells the client the task finished.
/// - `_NativeProtocol.easyHandle` and its `rawHandle`: the libcurl easy handle.
/// - `internalState`: on cancellation, the response and body received so far.
struct NativeProtocolFields: @unchecked Sendable {
    static let shared = NativeProtocolFields()

    let httpProtocolClass: AnyClass?
    let properties = StoredField("properties", in: URLProtocol.self)
    let easyHandle: StoredField?
    let rawHandle: StoredField?
    let internalState: StoredField?

    private init() {
        let http: AnyClass? = (URLSessionConfiguration.default.protocolClasses ?? []).first { String(describing: $0).hasSuffix("HTTPURLProtocol") }
        httpProtocolClass = http
        easyHandle = http.flatMap { StoredField("easyHandle", in: $0) }
        internalState = http.flatMap { StoredField("internalState", in: $0) }
        let handleClass: AnyClass? = (easyHandle?.type as? any OptionalClassReference.Type)?.wrappedClass
        rawHandle = handleClass.flatMap { StoredField("rawHandle", in: $0) }
    }

    /// Whether `native` is corelibs' HTTP protocol (or a subclass).
    func isNative(_ native: URLProtocol) -> Bool {
        guard let httpProtocolClass else { return false }
        return native.isKind(of: httpProtocolClass)
    }

    /// The libcurl easy handle of `native`; nil for any other protocol.
    func easyHandle(of native: URLProtocol) -> UnsafeMutableRawPointer? {
        guard isNative(native), let easyHandle, let rawHandle, let handle = easyHandle.optionalObject(in: native) else { return nil }
        return rawHandle.rawPointer(in: handle)
    }

    /// The file a download task's native protocol wrote, once it finished.
    func temporaryFileURL(of native: URLProtocol) -> URL? {
        guard let properties, let values = properties.value(in: native) as? any RawKeyedValues else { return nil }
        return values.value(forRawKey: "temporaryFileURL") as? URL
    }

    /// The response and in-memory body of a transfer still in progress
    /// (reflected: only on cancellation).
    func partialTransfer(of native: URLProtocol) -> (response: URLResponse?, body: Data?) {
        guard isNative(native), let internalState else { return (nil, nil) }
        let state = Mirror(reflecting: internalState.value(in: native))
        guard let transfer = state.children.first?.value else { return (nil, nil) }
        var response: URLResponse?
        var body: Data?
        for child in Mirror(reflecting: transfer).children {
            switch child.label {
            case "response":
                response = unwrappingOptionals(child.value) as? URLResponse
            case "bodyDataDrain":
                // `.inMemory(NSMutableData?)` for completion handlers.
                if let payload = Mirror(reflecting: child.value).children.first, payload.label == "inMemory",
                   let data = unwrappingOptionals(payload.value) as? NSData {
                    body = Data(referencing: data)
                }
            default:
                break
            }
        }
        return (response, body)
    }

}

/// A dictionary whose keys are a `String`-backed enum we cannot name
/// (`URLProtocol._PropertyKey`): looks one key up by its raw value.
protocol RawKeyedValues {
    func value(forRawKey key: String) -> Any?
}

extension Dictionary: RawKeyedValues where Key: RawRepresentable, Key.RawValue == String {
    func value(forRawKey key: String) -> Any? {
        Key(rawValue: key).flatMap { self[$0] }
    }
}
