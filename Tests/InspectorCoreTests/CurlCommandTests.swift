import Foundation
import TestSupport
import XCTest
import WireProtocol
@testable import InspectorCore

final class CurlCommandTests: XCTestCase {
    /// Runs the generated command against a loopback server and returns what
    /// the server received.
    private func replay(_ request: Request) throws -> RecordedHTTPRequest {
        let server = try OneShotHTTPRecorder()
        var request = request
        request.url = request.url.replacingOccurrences(of: "PORT", with: "\(server.port)")
        let (status, output) = try ProgramRun.run(["/bin/sh", "-c", CurlCommand.make(for: request) + " --silent --show-error --max-time 10 --output /dev/null"])
        XCTAssertEqual(status, 0, "curl failed for:\n\(CurlCommand.make(for: request))\n\(output)")
        return try server.recorded(timeout: 10)
    }

    private func assertReplaysExactly(_ request: Request, path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        _ = try Prerequisite.tool("curl", installedBy: "apt-get install curl")
        let received = try replay(request)
        XCTAssertEqual(received.method, request.method, file: file, line: line)
        XCTAssertEqual(received.target, path, file: file, line: line)
        let transport: Set<String> = ["host", "content-length"]
        XCTAssertEqual(received.headers.filter { !transport.contains($0.name.lowercased()) },
                       request.headers.filter { $0.name.lowercased() != "content-length" },
                       "curl must send the recorded headers, in order, and nothing of its own", file: file, line: line)
        XCTAssertEqual(received.body, request.body?.data ?? Data(), file: file, line: line)
    }

    func testJSONPostReplaysExactly() throws {
        try assertReplaysExactly(Request(
            method: "POST", url: "http://127.0.0.1:PORT/orders?q=caf%C3%A9&x=1",
            headers: [HTTPHeader(name: "Content-Type", value: "application/json"),
                      HTTPHeader(name: "X-Quote", value: #"it's "quoted" $HOME `x`"#),
                      HTTPHeader(name: "X-Dup", value: "1"), HTTPHeader(name: "X-Dup", value: "2")],
            body: CapturedBody(data: Data("{\"name\":\"Zoë 東京\",\n\"note\":\"it's 100%\"}".utf8))),
            path: "/orders?q=caf%C3%A9&x=1")
    }

    func testBinaryBodyWithNULsQuotesAndPercentReplaysExactly() throws {
        var bytes = Data((0...255).map(UInt8.init))
        bytes.append(contentsOf: Array("'%s\\n\"".utf8))
        try assertReplaysExactly(Request(
            method: "PUT", url: "http://127.0.0.1:PORT/blob",
            headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
            body: CapturedBody(data: bytes)), path: "/blob")
    }

    func testBodyStartingWithAtSignIsNotReadAsAFileName() throws {
        try assertReplaysExactly(Request(method: "POST", url: "http://127.0.0.1:PORT/at",
                                         body: CapturedBody(data: Data("@/etc/passwd".utf8))), path: "/at")
    }

    func testCustomMethodEmptyHeaderAndURLWithBracketsAndDotSegments() throws {
        try assertReplaysExactly(Request(
            method: "PROPFIND", url: "http://127.0.0.1:PORT/a/../b[1]/{x}?k=[v]",
            headers: [HTTPHeader(name: "Depth", value: "1"), HTTPHeader(name: "X-Empty", value: "")]),
            path: "/a/../b[1]/{x}?k=[v]")
    }

    func testHeadAndPlainGet() throws {
        try assertReplaysExactly(Request(method: "HEAD", url: "http://127.0.0.1:PORT/h",
                                         headers: [HTTPHeader(name: "Accept", value: "text/html")]), path: "/h")
        try assertReplaysExactly(Request(method: "GET", url: "http://127.0.0.1:PORT/g",
                                         headers: [HTTPHeader(name: "User-Agent", value: "orders/1.0")]), path: "/g")
    }

    func testTruncatedBodyIsMarkedInTheCommand() {
        let command = CurlCommand.make(for: Request(method: "POST", url: "http://x/",
                                                   body: CapturedBody(data: Data("abc".utf8), size: 10, isTruncated: true)))
        XCTAssertTrue(command.hasSuffix("# body truncated: only 3 of 10 bytes were captured"), command)
    }

    func testOSC52CarriesTheTextInBase64() {
        XCTAssertEqual(osc52Clipboard("curl 'x'"), "\u{1B}]52;c;Y3VybCAneCc=\u{07}")
    }
}

/// What the recorder saw on the wire.
struct RecordedHTTPRequest {
    var method: String
    var target: String
    var headers: [HTTPHeader]
    var body: Data
}

/// A loopback HTTP/1.1 server for one request: it records the request line,
/// the header fields in order and the body bytes exactly (Content-Length or
/// chunked), then answers 200 with an empty body.
final class OneShotHTTPRecorder: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<RecordedHTTPRequest, Error> = .failure(Failure(description: "no request"))

    struct Failure: Error, CustomStringConvertible { var description: String }

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { close(listener); throw Failure(description: "cannot listen on loopback: errno \(errno)") }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in serveOne() }
    }

    func recorded(timeout: TimeInterval) throws -> RecordedHTTPRequest {
        guard done.wait(timeout: .now() + timeout) == .success else { throw Failure(description: "no request within \(timeout)s") }
        return try result.get()
    }

    private func serveOne() {
        defer { close(listener); done.signal() }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var buffer = Data()
        func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(connection, &chunk, chunk.count)
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
        let separator = Data("\r\n\r\n".utf8)
        while buffer.range(of: separator) == nil { guard fill() else { return } }
        let headEnd = buffer.range(of: separator)!
        let lines = String(decoding: buffer[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ", maxSplits: 2).map(String.init)
        guard requestLine.count == 3 else { result = .failure(Failure(description: "bad request line \(lines[0])")); return }
        let headers = lines.dropFirst().map { line -> HTTPHeader in
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            return HTTPHeader(name: String(parts[0]), value: parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
        buffer.removeSubrange(..<headEnd.upperBound)
        var body = Data()
        if let length = headers.first("Content-Length").flatMap(Int.init) {
            while buffer.count < length { guard fill() else { break } }
            body = buffer.prefix(length)
        } else if headers.first("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                while buffer.range(of: Data("\r\n".utf8)) == nil { guard fill() else { return } }
                let lineEnd = buffer.range(of: Data("\r\n".utf8))!
                let size = Int(String(decoding: buffer[..<lineEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
                buffer.removeSubrange(..<lineEnd.upperBound)
                while buffer.count < size + 2 { guard fill() else { return } }
                body.append(buffer.prefix(size))
                buffer.removeSubrange(..<(size + 2))
                if size == 0 { break }
            }
        }
        result = .success(RecordedHTTPRequest(method: requestLine[0], target: requestLine[1], headers: headers, body: body))
        let reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        _ = reply.withCString { write(connection, $0, strlen($0)) }
    }
}
