import Foundation

/// docs/COMPATIBILITY.md, declared: the powers, and every cell of the real
/// peer matrix that cannot work, with its reason. `RealPeerMatrixTests`
/// runs each cell and expects exactly this; `CompatibilityDocumentTests`
/// checks the document is this table rendered.
enum CompatibilityMatrix {
    enum Power: String, CaseIterable, Sendable {
        case capture
        case hold = "hold-past-idle"
        case edit
        case mapLocal = "map-local"
        case mapRemote = "map-remote"
        case serverReplay = "server-replay"
        case extra404 = "extra-404"
        case latency
        case failure
        case kill

        var heading: String {
            switch self {
            case .capture: "capture"
            case .hold: "hold 2.6 s, release"
            case .edit: "edit at a breakpoint"
            case .mapLocal: "map local"
            case .mapRemote: "map remote"
            case .serverReplay: "server replay, server stopped"
            case .extra404: "extra 404, server stopped"
            case .latency: "latency 400 ms"
            case .failure: "failure (reset)"
            case .kill: "kill"
            }
        }

        var meaning: String {
            switch self {
            case .capture: "the app sees what it sees without the agent, and the flow is recorded"
            case .hold: "a request held at a breakpoint for 2.6 s, longer than the server's 2 s idle timeout, then released: the app gets what it gets without the agent"
            case .edit: "a request held and edited (a header added): the server receives the edit and the client's own fields (`Host`) intact"
            case .mapLocal: "a map-local rule answers with its file"
            case .mapRemote: "a map-remote rule sends the request to another server; the app gets what that server answers without the agent"
            case .serverReplay: "the request recorded live, the server stopped (nothing listens on its port): the recording answers, as recorded"
            case .extra404: "with the server stopped, a request the recording lacks gets `--server-replay-extra 404`'s 404"
            case .latency: "a `latency=400ms` condition: the app gets what it gets without the agent, at least 400 ms later"
            case .failure: "a `fail=100%:reset` condition: the app's request fails as the client reports a reset"
            case .kill: "a request held, then killed: the app's request ends failed"
            }
        }
    }

    /// The streams side: real peers of a stream's kind, each cell a test of its own.
    struct StreamCell {
        var peer: String
        var client: String
        var what: String
        /// `Class.testMethod` in Tests/CaptureAgentTests.
        var test: String
    }

    static let streamCells = [
        StreamCell(peer: "MCP server (PyPI `mcp` 2.x, streamable HTTP on uvicorn, keep-alive 2 s)", client: "AsyncHTTPClient (async)",
                   what: "a session (initialize, the initialized notification, `tools/call`, answered as server-sent events) is what it is without the agent, and recorded",
                   test: "MCPServerPeerTests.testAnMCPSessionThroughACapturedAsyncHTTPClientIsWhatItIsWithout"),
        StreamCell(peer: "MCP server (PyPI `mcp` 2.x, streamable HTTP on uvicorn, keep-alive 2 s)", client: "AsyncHTTPClient (async)",
                   what: "a `tools/call` held 2.6 s at a breakpoint, then released, gets its answer",
                   test: "MCPServerPeerTests.testAToolCallHeldPastUvicornsKeepAliveGetsItsAnswer"),
        StreamCell(peer: "Python `websockets` client", client: "Hummingbird's and Vapor's WebSocket routes",
                   what: "both peers see the same frames as without the agent; every frame is an event",
                   test: "WebSocketCaptureTests.testPythonClientsAgainstEachServerSeeTheSameFramesAndEveryFrameIsAnEvent"),
        StreamCell(peer: "Python `websockets` server", client: "websocket-kit (Vapor's `WebSocket.connect`)",
                   what: "recorded, and the server sees the same frames",
                   test: "WebSocketCaptureTests.testWebSocketKitClientAgainstAPythonServerIsRecordedAndTheServerSeesTheSameFrames"),
    ]

    /// Cells that cannot work, and why (none, today).
    static let limits: [String: String] = [:]

    static func limit(_ client: ControlAdapter, _ server: RealPeer.Kind, _ power: Power) -> String? {
        limits["\(client.rawValue) \(server) \(power.rawValue)"]
    }

    static func clientName(_ client: ControlAdapter) -> String {
        switch client {
        case .urlSessionInPlace: "URLSession (completion handler)"
        case .urlSessionResent: "URLSession (data delegate)"
        #if AsyncHTTPClient
        case .ahcAsync: "AsyncHTTPClient (async)"
        case .ahcFuture: "AsyncHTTPClient (future)"
        #endif
        #if OpenAPI && AsyncHTTPClient
        case .openAPI: "OpenAPI (AsyncHTTPClient transport)"
        #endif
        #if Vapor
        case .vaporClient: "Vapor's `req.client`"
        #endif
        }
    }

    /// The document, as `NETINSPECT_WRITE_COMPATIBILITY=1 swift test --filter CompatibilityDocumentTests` writes it.
    static func document() -> String {
        var lines = [
            "# Compatibility: every client, real servers, every control power",
            "",
            "<!-- Generated from Tests/CaptureAgentTests/Support/CompatibilityMatrix.swift:",
            "     NETINSPECT_WRITE_COMPATIBILITY=1 swift test --filter CompatibilityDocumentTests -->",
            "",
            "Each cell below is run by `RealPeerMatrixTests` (part of `swift test`, and so of CI) against a server no one",
            "here wrote, started by the test on a loopback port: the request is sent once without the agent and once with it",
            "(an app that allows control), and what the app sees is compared: status, body byte for byte (httpbin echoes",
            "what reached it), the marked header fields. ✓ means the cell does what its column says; a cell that cannot",
            "work on Linux would say ✗ with its reason under the table. Each cell uses a new client, so its hold is",
            "on a fresh connection; `RealPeerMatrixTests.testAHeldRequestOnAKeptAliveConnectionOutlivesTheServersIdleTimeout`",
            "holds an AsyncHTTPClient request on a kept-alive connection past gunicorn's, uvicorn's and nginx's idle timeout.",
            "",
            "The servers:",
        ]
        for server in RealPeer.Kind.allCases {
            lines.append("- **\(server.rawValue)**: " + serverDescription(server))
        }
        lines += ["", "The powers:"]
        for power in Power.allCases {
            lines.append("- **\(power.heading)**: \(power.meaning).")
        }
        lines.append("")
        lines.append("| server | client | " + Power.allCases.map(\.heading).joined(separator: " | ") + " |")
        lines.append("|---|---|" + Power.allCases.map { _ in "---" }.joined(separator: "|") + "|")
        var notes: [String] = []
        for server in RealPeer.Kind.allCases {
            for client in ControlAdapter.allCases {
                let cells = Power.allCases.map { power -> String in
                    guard let reason = limit(client, server, power) else { return "✓" }
                    notes.append("- \(server.rawValue), \(clientName(client)), \(power.heading): \(reason)")
                    return "✗"
                }
                lines.append("| \(server.rawValue) | \(clientName(client)) | " + cells.joined(separator: " | ") + " |")
            }
        }
        if !notes.isEmpty { lines += [""] + notes }
        lines += ["", "## Streams", "", "| peer | client | what | test |", "|---|---|---|---|"]
        for cell in streamCells {
            lines.append("| \(cell.peer) | \(cell.client) | \(cell.what) | `\(cell.test)` |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func serverDescription(_ server: RealPeer.Kind) -> String {
        switch server {
        case .gunicornSync: "httpbin on gunicorn's default sync worker, which closes the connection after every response"
        case .gunicornKeepAlive: "httpbin on gunicorn's gthread worker with `--keep-alive 2`: an idle connection is closed after 2 s"
        case .uvicorn: "httpbin on uvicorn (`--interface wsgi --timeout-keep-alive 2`)"
        case .nginx: "Debian's nginx with `keepalive_timeout 2s`, proxying to httpbin on gunicorn"
        case .httpServer: "Python's `http.server` serving a file, answering HTTP/1.0 and closing after each response"
        }
    }
}
