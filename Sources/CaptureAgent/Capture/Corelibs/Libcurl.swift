import Foundation
import WireProtocol
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What libcurl knows about one transfer of corelibs' own HTTP protocol,
/// read from its easy handle: the transfer's phases and the request header
/// it wrote to the wire.
///
/// Nothing here is linked: `curl_easy_getinfo` and `curl_easy_setopt` are
/// looked up at run time in the libcurl that FoundationNetworking already
/// loaded (so the build needs no libcurl headers), and the easy handle is
/// read from the native protocol's fields (``NativeProtocolFields``). Any of
/// it missing means capturing without phases or sent headers, never a crash.
///
/// Every call must happen on the task's work queue: corelibs drives the
/// handle there (the multi handle's socket actions run on the session work
/// queue, which every task's work queue targets).
enum Libcurl {
    /// `CURLINFO_OFF_T` values (curl.h): microseconds since the transfer started.
    enum TimeInfo: Int32, CaseIterable {
        case total = 0x600032          // CURLINFO_TOTAL_TIME_T (OFF_T + 50)
        case nameLookup = 0x600033     // CURLINFO_NAMELOOKUP_TIME_T
        case connect = 0x600034        // CURLINFO_CONNECT_TIME_T
        case preTransfer = 0x600035    // CURLINFO_PRETRANSFER_TIME_T
        case startTransfer = 0x600036  // CURLINFO_STARTTRANSFER_TIME_T
        case appConnect = 0x600038     // CURLINFO_APPCONNECT_TIME_T (TLS done)
        case queue = 0x600041          // CURLINFO_QUEUE_TIME_T, libcurl 8.6+
        case postTransfer = 0x600043   // CURLINFO_POSTTRANSFER_TIME_T, libcurl 8.10+
    }

    private typealias GetInfo = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias SetOptPointer = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?) -> Int32
    private typealias SetOptLong = @convention(c) (UnsafeMutableRawPointer?, Int32, Int) -> Int32
    /// `curl_debug_callback`: handle, `curl_infotype`, data, size, user pointer.
    typealias DebugCallback = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32

    private struct Functions: @unchecked Sendable {
        var getInfo: GetInfo
        var setOptPointer: SetOptPointer
        var setOptLong: SetOptLong
    }

    /// Both functions are variadic in C. Called here with one pointer or
    /// `long` argument, which the x86-64 and AArch64 Linux calling
    /// conventions pass exactly like a fixed third argument.
    private static let functions: Functions? = {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        guard let process = dlopen(nil, RTLD_LAZY),
              let getInfo = dlsym(process, "curl_easy_getinfo"),
              let setOpt = dlsym(process, "curl_easy_setopt")
        else { return nil }
        return Functions(
            getInfo: unsafeBitCast(getInfo, to: GetInfo.self),
            setOptPointer: unsafeBitCast(setOpt, to: SetOptPointer.self),
            setOptLong: unsafeBitCast(setOpt, to: SetOptLong.self)
        )
        #else
        return nil
        #endif
    }()

    /// Whether libcurl's functions were found in this process.
    static var isAvailable: Bool { functions != nil }

    /// One time value of `handle`'s last transfer, in seconds; nil when
    /// libcurl does not know this value (older libcurl) or it is negative.
    static func time(_ info: TimeInfo, of handle: UnsafeMutableRawPointer) -> Double? {
        guard let functions else { return nil }
        var microseconds: Int64 = -1
        let code = withUnsafeMutablePointer(to: &microseconds) { functions.getInfo(handle, info.rawValue, UnsafeMutableRawPointer($0)) }
        guard code == 0, microseconds >= 0 else { return nil }
        return Double(microseconds) / 1_000_000
    }

    /// The time values of one transfer that libcurl had, in seconds; a
    /// value it did not have reads nil. A fixed set of fields rather than a
    /// dictionary: read on every flow, where a dictionary of eight hashes
    /// and allocates to fill and read (docs/BENCHMARKS.md, "Costs behind the code").
    struct Times: Sendable {
        private var values: InlineArray<8, Double> = .init(repeating: -1)

        subscript(info: TimeInfo) -> Double? {
            get {
                let value = values[Self.slot(of: info)]
                return value >= 0 ? value : nil
            }
            set { values[Self.slot(of: info)] = newValue ?? -1 }
        }

        private static func slot(of info: TimeInfo) -> Int {
            switch info {
            case .total: 0
            case .nameLookup: 1
            case .connect: 2
            case .preTransfer: 3
            case .startTransfer: 4
            case .appConnect: 5
            case .queue: 6
            case .postTransfer: 7
            }
        }
    }

    private static let localIP: Int32 = 0x100029      // CURLINFO_LOCAL_IP (STRING + 41)
    private static let localPort: Int32 = 0x20002A    // CURLINFO_LOCAL_PORT (LONG + 42)

    /// The address `handle`'s last connection was bound to, `ip:port`
    /// (what a captured service that received the request has as its
    /// peer); nil when libcurl does not say.
    static func localAddress(of handle: UnsafeMutableRawPointer) -> String? {
        guard let functions else { return nil }
        var ip: UnsafePointer<CChar>?
        var port = 0
        guard withUnsafeMutablePointer(to: &ip, { functions.getInfo(handle, localIP, UnsafeMutableRawPointer($0)) }) == 0,
              withUnsafeMutablePointer(to: &port, { functions.getInfo(handle, localPort, UnsafeMutableRawPointer($0)) }) == 0,
              let ip, port > 0 else { return nil }
        let text = String(cString: ip)
        return text.isEmpty ? nil : PeerAddress.text(host: text, port: port)
    }

    /// All the time values of `handle`'s last transfer that libcurl has.
    static func times(of handle: UnsafeMutableRawPointer) -> Times {
        var result = Times()
        for info in TimeInfo.allCases {
            result[info] = time(info, of: handle)
        }
        return result
    }

    // MARK: - The header blocks as written and read

    private static let verbose: Int32 = 41            // CURLOPT_VERBOSE (LONG + 41)
    private static let debugFunction: Int32 = 20094   // CURLOPT_DEBUGFUNCTION (FUNCTIONPOINT + 94)
    private static let debugData: Int32 = 10095       // CURLOPT_DEBUGDATA (CBPOINT + 95)
    private static let prereqFunction: Int32 = 20312  // CURLOPT_PREREQFUNCTION (FUNCTIONPOINT + 312), libcurl 7.80+
    private static let prereqData: Int32 = 10313      // CURLOPT_PREREQDATA (CBPOINT + 313)
    private static let headerOut: Int32 = 2           // curl_infotype CURLINFO_HEADER_OUT
    private static let headerIn: Int32 = 1            // curl_infotype CURLINFO_HEADER_IN

    /// One request written and the response head read for it.
    struct Exchange: Sendable {
        /// The request header block, as written (request line and fields).
        var headerOut = ""
        /// Of the last response head read (a `100 Continue` is replaced by
        /// the final one): its status line and its `Location` field.
        var headerIn = ""
    }

    /// What the debug callback saw of one handle's transfers, one exchange
    /// per request written (a redirect writes the next one on the same handle).
    struct Seen: Sendable {
        var exchanges: [Exchange] = []
    }

    /// A handle's record, changed in place under ``watched``'s lock.
    private final class Recording: @unchecked Sendable {
        var seen = Seen()
    }

    /// Handles being watched, by address. No pointer of ours is handed to
    /// libcurl: the user pointer of each callback is the handle itself, so a
    /// late call for a handle no longer watched finds nothing and does nothing.
    private static let watched = Locked<[UnsafeMutableRawPointer: Recording]>([:])

    private typealias PrereqCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32

    /// Called by libcurl on the work queue just before it writes a request
    /// (after connecting or picking a kept-alive connection), for every
    /// transfer of the handle, redirects included. corelibs configures each
    /// transfer from scratch (verbose off, no debug function) and adds the
    /// handle to its multi handle, which may start the transfer at once, so
    /// this is the one moment to turn the debug output on that is always in
    /// time. Setting these two options only stores them in the handle.
    private static let prereq: PrereqCallback = { handle, _, _, _, _ in
        guard let handle, let functions = Libcurl.functions, Libcurl.watched.withLock({ $0[handle] != nil }) else { return 0 }
        _ = functions.setOptPointer(handle, Libcurl.debugData, nil)
        _ = functions.setOptPointer(handle, Libcurl.debugFunction, unsafeBitCast(Libcurl.debug, to: UnsafeRawPointer.self))
        _ = functions.setOptLong(handle, Libcurl.verbose, 1)
        return 0  // CURL_PREREQFUNC_OK
    }

    private static let debug: DebugCallback = { handle, type, data, size, _ in
        guard let handle, let data, size > 0 else { return 0 }
        let bytes = UnsafeRawBufferPointer(start: data, count: size)
        if type == Libcurl.headerOut {
            let text = String(decoding: bytes, as: UTF8.self)
            let startsRequest = Libcurl.isRequestLine(bytes)
            Libcurl.watched.withLock { watched in
                guard let recording = watched[handle] else { return }
                if startsRequest {
                    // A request line starts an exchange; one written again
                    // before any answer (a dead kept-alive connection) replaces it.
                    if let last = recording.seen.exchanges.last, last.headerIn.isEmpty {
                        recording.seen.exchanges[recording.seen.exchanges.count - 1] = Exchange(headerOut: text)
                    } else {
                        recording.seen.exchanges.append(Exchange(headerOut: text))
                    }
                } else if !recording.seen.exchanges.isEmpty {
                    recording.seen.exchanges[recording.seen.exchanges.count - 1].headerOut += text
                }
            }
        } else if type == Libcurl.headerIn {
            // Header lines arrive one by one; only the status line and
            // `Location` are kept (a status line starts a new head).
            let isStatus = Libcurl.hasPrefix(bytes, "HTTP/")
            guard isStatus || Libcurl.hasPrefix(bytes, "location:", ignoringCase: true) else { return 0 }
            let text = String(decoding: bytes, as: UTF8.self)
            Libcurl.watched.withLock { watched in
                guard let recording = watched[handle], !recording.seen.exchanges.isEmpty else { return }
                let last = recording.seen.exchanges.count - 1
                if isStatus {
                    recording.seen.exchanges[last].headerIn = text
                } else {
                    recording.seen.exchanges[last].headerIn += text
                }
            }
        }
        return 0
    }

    /// Whether the first line of `bytes` is a request line (`… HTTP/1.1`).
    private static func isRequestLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let end = bytes.firstIndex { $0 == 0x0D || $0 == 0x0A } ?? bytes.endIndex
        let marker: [UInt8] = Array(" HTTP/".utf8)
        guard end >= marker.count else { return false }
        for start in 0 ... (end - marker.count) where bytes[start] == 0x20 {
            if (0 ..< marker.count).allSatisfy({ bytes[start + $0] == marker[$0] }) { return true }
        }
        return false
    }

    private static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString, ignoringCase: Bool = false) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        for index in expected.indices {
            var byte = bytes[index]
            if ignoringCase, byte >= 0x41, byte <= 0x5A { byte += 0x20 }
            if byte != expected[index] { return false }
        }
        return true
    }

    /// Starts recording the header blocks of `handle`'s transfers. Call on
    /// the work queue before the native protocol starts. False when libcurl
    /// could not be reached.
    static func watchHeaders(of handle: UnsafeMutableRawPointer) -> Bool {
        guard let functions else { return false }
        watched.withLock { $0[handle] = Recording() }
        guard functions.setOptPointer(handle, prereqData, UnsafeRawPointer(handle)) == 0,
              functions.setOptPointer(handle, prereqFunction, unsafeBitCast(prereq, to: UnsafeRawPointer.self)) == 0
        else {
            watched.withLock { $0[handle] = nil }
            return false
        }
        return true
    }

    /// What was recorded for `handle`; stops watching it and turns its debug
    /// output off. Call on the work queue, once its transfer is over.
    static func stopWatching(_ handle: UnsafeMutableRawPointer) -> Seen? {
        let recording = watched.withLock { $0.removeValue(forKey: handle) }
        if let functions { _ = functions.setOptLong(handle, verbose, 0) }
        return recording?.seen
    }

    /// Handles being watched now (for tests).
    static var watchedCount: Int { watched.withLock { $0.count } }
}
