// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
import CaptureAgent
import CaptureAgentGRPC
import Foundation
import GRPCCore
import GRPCInProcessTransport
import GRPCNIOTransportHTTP2Posix
import XCTest

/// The calls every transport is tried with, each answered by ``EchoService``.
enum GRPCScenario: String, CaseIterable, Sendable {
    case unary, clientStreaming, serverStreaming, bidirectional, errorStatus, deadline, cancelled
}

/// What the client saw of one call: compared with and without capture.
struct ClientSaw: Equatable, Sendable {
    var messages: [EchoResponse] = []
    var metadata: [String] = []
    var trailers: [String] = []
    /// The status code the call ended with (0 for OK), or -1 for an error that is not an `RPCError`.
    var code = 0
    var message = ""
}

/// Which transport the client and the server talk over.
enum GRPCTransportKind: String, CaseIterable, Sendable {
    case inProcess, http2, http2TLS
}

extension Metadata {
    var fields: [String] { map { "\($0.key): \($0.value.encoded())" } }
}

/// Runs every scenario against a fresh server over `kind`, captured into
/// `agent` (client and server) or not: what the client saw of each call,
/// and what the server saw.
func runEchoScenarios(
    over kind: GRPCTransportKind, capturedInto agent: CaptureAgent?
) async throws -> (client: [GRPCScenario: ClientSaw], server: [ServedCall]) {
    try await runEchoScenarios(over: kind, client: agent, server: agent)
}

/// Runs `scenarios` in order against a fresh server over `kind`, the client
/// captured into `clientAgent` and the server into `serverAgent` (nil: not
/// captured), while `viewer` acts as the inspector's person does.
func runEchoScenarios(
    over kind: GRPCTransportKind, client clientAgent: CaptureAgent?, server serverAgent: CaptureAgent?,
    _ scenarios: [GRPCScenario] = GRPCScenario.allCases, viewer: @escaping @Sendable () async throws -> Void = {}
) async throws -> (client: [GRPCScenario: ClientSaw], server: [ServedCall]) {
    let run = EchoRun(service: EchoService(), scenarios: scenarios, viewer: viewer)
    switch kind {
    case .inProcess:
        let transport = InProcessTransport()
        func withClient<Server: ServerTransport>(_ server: Server) async throws -> (client: [GRPCScenario: ClientSaw], server: [ServedCall]) {
            if let clientAgent { return try await run.serve(server, port: { 0 }, client: { _ in clientAgent.capture(transport.client) }) }
            return try await run.serve(server, port: { 0 }, client: { _ in transport.client })
        }
        if let serverAgent { return try await withClient(serverAgent.capture(transport.server)) }
        return try await withClient(transport.server)
    case .http2, .http2TLS:
        let secure = kind == .http2TLS
        let server = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0),
            transportSecurity: secure ? .tls(certificateChain: [.bytes(Array(TLSTestServer.certificatePEM.utf8), format: .pem)],
                                             privateKey: .bytes(Array(TLSTestServer.privateKeyPEM.utf8), format: .pem)) : .plaintext
        )
        let client = { (port: Int) throws -> HTTP2ClientTransport.Posix in
            try HTTP2ClientTransport.Posix(
                target: .ipv4(address: "127.0.0.1", port: port),
                transportSecurity: secure ? .tls { tls in
                    tls.trustRoots = .certificates([.bytes(Array(TLSTestServer.certificatePEM.utf8), format: .pem)])
                } : .plaintext
            )
        }
        let scheme = secure ? "https" : "http"
        let port = { @Sendable in try await server.listeningAddress.ipv4?.port }
        func withClient<Server: ServerTransport>(_ captured: Server) async throws -> (client: [GRPCScenario: ClientSaw], server: [ServedCall]) {
            if let clientAgent { return try await run.serve(captured, port: port, client: { clientAgent.capture(try client($0), scheme: scheme) }) }
            return try await run.serve(captured, port: port, client: client)
        }
        if let serverAgent { return try await withClient(serverAgent.capture(server, scheme: scheme)) }
        return try await withClient(server)
    }
}

/// One run of the echo service: the calls to make and the viewer acting meanwhile.
private struct EchoRun: Sendable {
    let service: EchoService
    let scenarios: [GRPCScenario]
    let viewer: @Sendable () async throws -> Void

    func serve<Server: ServerTransport, Client: ClientTransport>(
        _ transport: Server, port: @Sendable () async throws -> Int?, client makeClient: (Int) throws -> Client
    ) async throws -> (client: [GRPCScenario: ClientSaw], server: [ServedCall]) {
        let server = GRPCServer(transport: transport, services: [service])
        let serving = Task { try await server.serve() }
        defer { server.beginGracefulShutdown() }
        let client = GRPCClient(transport: try makeClient(try await port() ?? 0))
        let connections = Task { try await client.runConnections() }
        defer { client.beginGracefulShutdown() }
        let viewing = Task { try await viewer() }
        var seen: [GRPCScenario: ClientSaw] = [:]
        for scenario in scenarios {
            seen[scenario] = await call(scenario, on: client, servedCalls: { service.calls.count })
        }
        try await viewing.value
        client.beginGracefulShutdown()
        server.beginGracefulShutdown()
        _ = await connections.result
        _ = await serving.result
        return (seen, service.calls)
    }
}

/// Makes one scenario's call and says what the client saw. `servedCalls`
/// counts the calls the service has begun to handle: `.cancelled` cancels
/// once its call is one of them, so the cancellation finds the server at work.
func call<Transport: ClientTransport>(_ scenario: GRPCScenario, on client: GRPCClient<Transport>,
                                      servedCalls: (@Sendable () -> Int)? = nil) async -> ClientSaw {
    let servedBefore = servedCalls?() ?? 0
    var saw = ClientSaw()
    var options = CallOptions.defaults
    if scenario == .deadline { options.timeout = .milliseconds(200) }
    do {
        switch scenario {
        case .unary, .errorStatus, .deadline, .cancelled:
            let text = scenario == .unary ? "hi" : scenario == .errorStatus ? "fail" : "slow"
            let request = ClientRequest(message: EchoRequest(text: text), metadata: ["x-echo": "abc", "authorization": "Bearer s3cret"])
            let work = Task {
                try await client.unary(request: request, descriptor: Echo.get, serializer: Echo.requests,
                                       deserializer: Echo.responses, options: options) { response in
                    ClientSaw(messages: [try response.message], metadata: response.metadata.fields,
                              trailers: response.trailingMetadata.fields)
                }
            }
            if scenario == .cancelled {
                if let servedCalls {
                    let handling = await waitUntil { servedCalls() > servedBefore }
                    XCTAssertTrue(handling, "the service never began the call to cancel")
                } else {
                    XCTFail("cancelling needs to know when the service has the call")
                }
                work.cancel()
            }
            saw = try await work.value
        case .clientStreaming:
            let request = StreamingClientRequest<EchoRequest>(metadata: ["x-echo": "many"]) { writer in
                for text in ["a", "b", "c"] { try await writer.write(EchoRequest(text: text)) }
            }
            saw = try await client.clientStreaming(request: request, descriptor: Echo.collect, serializer: Echo.requests,
                                                   deserializer: Echo.responses, options: options) { response in
                ClientSaw(messages: [try response.message], metadata: response.metadata.fields, trailers: response.trailingMetadata.fields)
            }
        case .serverStreaming, .bidirectional:
            let streaming = scenario == .serverStreaming
            let request = StreamingClientRequest<EchoRequest>(metadata: [:]) { writer in
                if streaming { return try await writer.write(EchoRequest(text: "n", count: 3)) }
                for text in ["x", "y"] { try await writer.write(EchoRequest(text: text)) }
            }
            let handle: @Sendable (StreamingClientResponse<EchoResponse>) async throws -> ClientSaw = { response in
                var saw = ClientSaw(metadata: response.metadata.fields)
                for try await part in response.bodyParts {
                    switch part {
                    case .message(let message): saw.messages.append(message)
                    case .trailingMetadata(let trailers): saw.trailers = trailers.fields
                    }
                }
                return saw
            }
            saw = streaming
                ? try await client.serverStreaming(request: ClientRequest(message: EchoRequest(text: "n", count: 3)), descriptor: Echo.expand,
                                                   serializer: Echo.requests, deserializer: Echo.responses, options: options, onResponse: handle)
                : try await client.bidirectionalStreaming(request: request, descriptor: Echo.chat, serializer: Echo.requests,
                                                          deserializer: Echo.responses, options: options, onResponse: handle)
        }
    } catch let error as RPCError {
        saw.code = error.code.rawValue
        saw.message = error.message
        saw.trailers = error.metadata.fields
    } catch {
        saw.code = -1
        saw.message = "\(type(of: error))"
    }
    return saw
}
#endif
