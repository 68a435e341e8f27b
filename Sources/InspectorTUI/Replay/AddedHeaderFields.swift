import Foundation
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The header fields URLSession on Linux puts on the wire that a request of
/// netinspect's own client did not set, so its flow shows the request as
/// sent (``Request/clientHeaders``, "added by netinspect").
///
/// URLSession gives nothing back of what it sent, so the fields are worked
/// out from what the code that sends them does; `OwnClientTests`
/// holds each rule against a loopback server that reads the raw request.
/// swift-corelibs-foundation 6.3.1 (`HTTPURLProtocol.swift`) adds
/// `Connection: keep-alive`, `User-Agent: PROCESS (unknown version)
/// curl/X.Y.Z` and `Accept-Language` (the current locale's language, when
/// it has one) to every request that lacks them (`curlHeadersToSet`,
/// :665-674), a form `Content-Type` to a POST with a body and none of its
/// own (:397-399), and asks libcurl to decode every content coding it knows
/// (`set(automaticBodyDecompression: true)`, :436; `EasyHandle.swift`
/// :337-342). libcurl 7.88.1 then adds `Host` (`lib/http.c` :2076-2096),
/// `Accept: */*` (:3059-3060), `Accept-Encoding` listing its decoders
/// (:3037-3041, `lib/content_encoding.c` :843-892) and `Content-Length` to
/// a request with a body, which corelibs gives every method but a GET
/// without one and HEAD (`HTTPURLProtocol.swift` :333-345, :439;
/// `NativeProtocol.swift` :664-676).
///
/// ```swift
/// let added = AddedHeaderFields.current.fields(method: "GET", url: url, headers: [], bodySize: 0)
/// // Host, Accept, Accept-Encoding, Connection, User-Agent, Accept-Language
/// ```
struct AddedHeaderFields: Sendable {
    /// What the libcurl in this process says of itself: its version and the
    /// content codings it decodes, in the order it lists them.
    struct Libcurl: Sendable, Equatable {
        var version: String
        var contentCodings: [String]

        /// Reads `curl_version()`'s text, `libcurl/7.88.1 OpenSSL/3.0.19
        /// zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 …`: zlib brings `deflate` and
        /// `gzip`, brotli `br`, zstd `zstd` (`lib/version.c`, `lib/content_encoding.c`).
        init?(versionText: String) {
            let parts = versionText.split(separator: " ")
            guard let first = parts.first, first.hasPrefix("libcurl/") else { return nil }
            // "7.88.1", or "8.5.0-DEV": corelibs prints the numeric version.
            version = String(first.dropFirst("libcurl/".count).prefix { $0.isNumber || $0 == "." })
            let libraries = Set(parts.compactMap { $0.split(separator: "/").first.map(String.init) })
            contentCodings = (libraries.contains("zlib") ? ["deflate", "gzip"] : [])
                + (libraries.contains("brotli") ? ["br"] : []) + (libraries.contains("zstd") ? ["zstd"] : [])
        }

        init(version: String, contentCodings: [String]) {
            self.version = version
            self.contentCodings = contentCodings
        }

        /// The libcurl FoundationNetworking loaded, asked at run time as the
        /// agent asks it (no libcurl headers at build time); nil when it
        /// cannot be found, and then the fields that depend on it are left out.
        static let loaded: Libcurl? = {
            #if os(Linux)
            typealias Version = @convention(c) () -> UnsafePointer<CChar>?
            guard let process = dlopen(nil, RTLD_LAZY), let symbol = dlsym(process, "curl_version"),
                  let text = unsafeBitCast(symbol, to: Version.self)() else { return nil }
            return Libcurl(versionText: String(cString: text))
            #else
            return nil
            #endif
        }()
    }

    /// The program's name, which corelibs puts first in `User-Agent`.
    var processName: String
    /// The current locale's language code, corelibs' `Accept-Language`.
    var languageCode: String?
    var libcurl: Libcurl?

    /// This process's values.
    static var current: AddedHeaderFields {
        AddedHeaderFields(processName: ProcessInfo.processInfo.processName,
                          languageCode: Locale.current.languageCode,
                          libcurl: .loaded)
    }

    /// The fields added to a request with these `headers` (as sent, one per
    /// name), in the order libcurl writes its own and then corelibs' (which
    /// travel among the request's own fields in an order nobody chooses).
    func fields(method: String, url: URL, headers: [HTTPHeader], bodySize: Int) -> [HTTPHeader] {
        let has = Set(headers.map { $0.name.lowercased() })
        var added: [HTTPHeader] = []
        func add(_ name: String, _ value: String?) {
            guard let value, !has.contains(name.lowercased()) else { return }
            added.append(HTTPHeader(name: name, value: value))
        }
        add("Host", Self.host(of: url))
        add("Accept", "*/*")
        add("Accept-Encoding", libcurl.flatMap { $0.contentCodings.isEmpty ? nil : $0.contentCodings.joined(separator: ", ") })
        add("Connection", "keep-alive")
        add("User-Agent", libcurl.map { "\(processName) (unknown version) curl/\($0.version)" })
        add("Accept-Language", languageCode)
        if method == "POST", bodySize > 0 { add("Content-Type", "application/x-www-form-urlencoded") }
        if method != "HEAD", method != "GET" || bodySize > 0 { add("Content-Length", String(bodySize)) }
        return added
    }

    /// `Host` as libcurl writes it: the port only when it is not the
    /// scheme's own, an IPv6 address in brackets.
    static func host(of url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              var host = components.host, !host.isEmpty else { return nil }
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let defaultPort = components.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = components.port, port != defaultPort else { return host }
        return "\(host):\(port)"
    }
}
