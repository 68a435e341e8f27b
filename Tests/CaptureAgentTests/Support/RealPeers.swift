import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Servers no one here wrote, each started as a child process on a free
/// loopback port with the connection habits that broke netinspect's
/// control in a new user's first minutes: gunicorn's sync workers (a close
/// after every response), gunicorn with a 2 s keep-alive, uvicorn, nginx
/// from Debian (`keepalive_timeout 2s`, in front of gunicorn) and Python's
/// `http.server` answering HTTP/1.0. httpbin is the app on the first four,
/// so `/anything` echoes what the server received.
///
/// `.ci/run` installs them (PyPI's httpbin, gunicorn, uvicorn; Debian's
/// nginx); a missing one fails the test that needs it, never skips it.
final class RealPeer: @unchecked Sendable {
    enum Kind: String, CaseIterable, Sendable {
        case gunicornSync = "gunicorn (sync)"
        case gunicornKeepAlive = "gunicorn (keep-alive 2 s)"
        case uvicorn = "uvicorn (keep-alive 2 s)"
        case nginx = "nginx (keepalive_timeout 2s)"
        case httpServer = "http.server (HTTP/1.0)"

        /// Whether `/anything` echoes the request (httpbin) rather than serving a file.
        var echoes: Bool { self != .httpServer }
        /// Whether it takes a POST (`http.server` answers 501).
        var takesPOST: Bool { self != .httpServer }
    }

    let kind: Kind
    let port: Int
    private let processes: [Process]
    private let directory: URL

    init(_ kind: Kind) throws {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        switch kind {
        case .gunicornSync:
            processes = [try Self.launch(["python3", "-m", "gunicorn", "-b", "127.0.0.1:\(port)", "-w", "1", "httpbin:app"], in: directory)]
        case .gunicornKeepAlive:
            processes = [try Self.launch(Self.gunicornKeepAlive(port: port), in: directory)]
        case .uvicorn:
            processes = [try Self.launch(["python3", "-m", "uvicorn", "--host", "127.0.0.1", "--port", "\(port)", "--interface", "wsgi",
                                          "--timeout-keep-alive", "2", "--log-level", "warning", "httpbin:app"], in: directory)]
        case .nginx:
            let backend = try Self.freePort()
            let gunicorn = try Self.launch(Self.gunicornKeepAlive(port: backend), in: directory)
            try Self.nginxConfiguration(port: port, backend: backend, directory: directory)
            let nginx = try Self.launch([Self.nginxPath, "-p", directory.path, "-c", directory.appendingPathComponent("nginx.conf").path,
                                         "-e", "stderr"], in: directory)
            processes = [gunicorn, nginx]
            try Self.waitForPort(backend, kind: kind.rawValue, processes: processes)
        case .httpServer:
            try Data("served by http.server\n".utf8).write(to: directory.appendingPathComponent("anything"))
            processes = [try Self.launch(["python3", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", directory.path],
                                         in: directory)]
        }
        try Self.waitForPort(port, kind: kind.rawValue, processes: processes)
    }

    deinit { stop() }

    func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!
    }

    /// Stops the server; nothing listens on its port afterwards.
    func stop() {
        for process in processes.reversed() where process.isRunning {
            // SIGINT is every one's quick shutdown (gunicorn's SIGTERM waits
            // up to 30 s for kept-alive connections); its workers go with it.
            process.interrupt()
            if !eventually(timeout: 10, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Starting

    private static func gunicornKeepAlive(port: Int) -> [String] {
        ["python3", "-m", "gunicorn", "-b", "127.0.0.1:\(port)", "-w", "1", "-k", "gthread", "--threads", "8", "--keep-alive", "2", "httpbin:app"]
    }

    static let nginxPath = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? "/usr/sbin/nginx"

    private static func nginxConfiguration(port: Int, backend: Int, directory: URL) throws {
        // Run as whoever runs the test; temporary files in the peer's own folder.
        let user = getuid() == 0 ? "user root;" : ""
        let configuration = """
        \(user)
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(directory.path)/nginx.pid;
        events { worker_connections 256; }
        http {
            access_log off;
            keepalive_timeout 2s;
            client_body_temp_path \(directory.path)/body;
            proxy_temp_path \(directory.path)/proxy;
            fastcgi_temp_path \(directory.path)/fastcgi;
            uwsgi_temp_path \(directory.path)/uwsgi;
            scgi_temp_path \(directory.path)/scgi;
            server {
                listen 127.0.0.1:\(port);
                location / {
                    proxy_pass http://127.0.0.1:\(backend);
                    proxy_set_header Host $http_host;
                }
            }
        }
        """
        try Data(configuration.utf8).write(to: directory.appendingPathComponent("nginx.conf"))
    }

    static func launch(_ argv: [String], in directory: URL) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0].hasPrefix("/") ? argv[0] : "/usr/bin/env")
        process.arguments = argv[0].hasPrefix("/") ? Array(argv.dropFirst()) : argv
        process.currentDirectoryURL = directory
        let log = directory.appendingPathComponent("\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    struct NotStarted: Error, CustomStringConvertible {
        var description: String
    }

    static func waitForPort(_ port: Int, kind: String, processes: [Process]) throws {
        let accepting = eventually(timeout: 30) { processes.allSatisfy(\.isRunning) && connects(to: port) }
        guard accepting else {
            for process in processes where process.isRunning { process.terminate() }
            throw NotStarted(description: "\(kind) did not start on port \(port) (.ci/run installs it: pip install httpbin gunicorn uvicorn; apt-get install nginx)")
        }
    }

    static func connects(to port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A port nothing listens on now (the kernel's pick, released).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard ok else { throw NotStarted(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// An MCP server from PyPI's `mcp` SDK (Fixtures/mcp_server.py: streamable
/// HTTP on uvicorn, 2 s keep-alive, one tool `add`).
final class MCPPeer: @unchecked Sendable {
    let port: Int
    private let process: Process

    init() throws {
        port = try RealPeer.freePort()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/mcp_server.py")
        process = try RealPeer.launch(["python3", script.path, "\(port)"], in: FileManager.default.temporaryDirectory)
        try RealPeer.waitForPort(port, kind: "the MCP server (pip install mcp uvicorn)", processes: [process])
    }

    deinit { stop() }

    var url: String { "http://127.0.0.1:\(port)/mcp" }

    func stop() {
        guard process.isRunning else { return }
        // One process, no workers: uvicorn's graceful stop would wait for
        // the session's open event stream.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
