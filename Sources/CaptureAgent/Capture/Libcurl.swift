import Foundation
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

    /// All the time values of `handle`'s last transfer that libcurl has.
    static func times(of handle: UnsafeMutableRawPointer) -> [TimeInfo: Double] {
        var result: [TimeInfo: Double] = [:]
        for info in TimeInfo.allCases {
            if let value = time(info, of: handle) { result[info] = value }
        }
        return result
    }

    // MARK: - The request header as written

    private static let verbose: Int32 = 41            // CURLOPT_VERBOSE (LONG + 41)
    private static let debugFunction: Int32 = 20094   // CURLOPT_DEBUGFUNCTION (FUNCTIONPOINT + 94)
    private static let debugData: Int32 = 10095       // CURLOPT_DEBUGDATA (CBPOINT + 95)
    private static let headerOut: Int32 = 2           // curl_infotype CURLINFO_HEADER_OUT
    private static let headerIn: Int32 = 1            // curl_infotype CURLINFO_HEADER_IN

    /// What the debug callback saw of one handle's transfer.
    struct Seen: Sendable {
        /// The request header block, as written (request line and fields).
        var headerOut = ""
        /// The first response header block (status line and fields).
        var headerIn = ""
        var headerInComplete = false
    }

    /// Handles being watched, by address. The debug callback is given no
    /// pointer of ours (`CURLOPT_DEBUGDATA` stays nil), so a late call for a
    /// handle no longer watched finds nothing and does nothing.
    private static let watched = Locked<[UnsafeMutableRawPointer: Seen]>([:])

    private static let callback: DebugCallback = { handle, type, data, size, _ in
        guard let handle, type == Libcurl.headerOut || type == Libcurl.headerIn, let data, size > 0 else { return 0 }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        Libcurl.watched.withLock { watched in
            guard var seen = watched[handle] else { return }
            if type == Libcurl.headerOut {
                // A request line starts a block (a retry on a new connection
                // writes it again); anything else continues the block.
                let first = text.prefix { $0 != "\r" && $0 != "\n" }
                seen.headerOut = first.contains(" HTTP/") ? text : seen.headerOut + text
            } else if !seen.headerInComplete {
                seen.headerIn += text
                if text == "\r\n" || text == "\n" { seen.headerInComplete = true }
            }
            watched[handle] = seen
        }
        return 0
    }

    /// Starts recording the header blocks `handle`'s next transfer writes
    /// and reads. Call after corelibs has configured the handle for the
    /// transfer (it resets the debug options each time) and before the
    /// transfer runs, on the work queue. False when it could not be set.
    static func watchHeaders(of handle: UnsafeMutableRawPointer) -> Bool {
        guard let functions else { return false }
        watched.withLock { $0[handle] = Seen() }
        let callbackPointer = unsafeBitCast(callback, to: UnsafeRawPointer.self)
        guard functions.setOptPointer(handle, debugData, nil) == 0,
              functions.setOptPointer(handle, debugFunction, callbackPointer) == 0,
              functions.setOptLong(handle, verbose, 1) == 0
        else {
            _ = functions.setOptLong(handle, verbose, 0)
            watched.withLock { $0[handle] = nil }
            return false
        }
        return true
    }

    /// What was recorded for `handle`, and stops watching it. The debug
    /// options stay set until corelibs configures the handle again.
    static func stopWatching(_ handle: UnsafeMutableRawPointer) -> Seen? {
        watched.withLock { $0.removeValue(forKey: handle) }
    }

    /// Handles being watched now (for tests).
    static var watchedCount: Int { watched.withLock { $0.count } }
}
