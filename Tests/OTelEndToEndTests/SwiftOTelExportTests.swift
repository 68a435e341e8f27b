// Built with the SwiftOTel trait (on by default; Package.swift).
#if SwiftOTel
import CaptureAgent
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import OTel
import ServiceLifecycle
import Testing
import TestSupport
import WireProtocol

/// An app as docs/FLEET.md describes it: swift-otel bootstrapped with its
/// OTLP/HTTP exporter (protobuf) pointed at the real netinspect's OTLP
/// listener, and CaptureAgent with `spans = .enabled` connected to the same
/// netinspect's agent socket. Every request then reaches netinspect twice,
/// once as the agent's flow and once as the agent's span through swift-otel,
/// and `--json` must show the two agreeing. A POST through a second agent,
/// with bodies opted in, shows bodies travel as span attributes only then.
@Suite struct SwiftOTelExportTests {
    static let appName = "otel-e2e-shop"
    /// The app's credentials: sent to the server, redacted in every log.
    static let token = "e2e-token-9c1d"

    @Test func everyFlowArrivesFromTheAgentAndAsItsSwiftOTelSpanAndTheyAgree() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let requests = try Self.requests(server)

        // The app's view without capture, to compare with its view under
        // capture. (This session exists before the agent starts, so the
        // agent says once that URLSession.shared is not captured; the test
        // does not use it.)
        let plain = URLSession(configuration: .ephemeral)
        var uncaptured: [AppView] = []
        for request in requests { uncaptured.append(await AppView(request, session: plain)) }

        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-otel-e2e-\(getpid()).sock").path
        let inspector = try InspectorProcess(listen: "unix:\(socket)", arguments: ["--listen", "otlp:127.0.0.1:0"])
        let port = try inspector.listeningPort()

        let observability = try OTel.bootstrap(configuration: Self.otel(port: port), environment: [:])
        let services = ServiceGroup(services: [observability], logger: Logger(label: "otel-e2e") { _ in SwiftLogNoOpLogHandler() })
        let running = Task { try await services.run() }

        let captured = await Self.capture(requests, socket: socket, spans: .enabled)
        #expect(captured == uncaptured, "capture changed what the app saw")
        #expect(captured.first?.headers["set-cookie"]?.contains(LoopbackServer.cookieSecret) == true, "the app gets its cookie")
        #expect(captured.map(\.status) == [200, 201, 404, 500, nil])
        // The same app with bodies opted in, through a second agent: one POST.
        let withBodies = try Self.post(server.url("/orders?bodies=1"))
        _ = await Self.capture([withBodies], socket: socket, spans: .includingBodies)

        // Everything out: the agents' queues went at their stop; swift-otel's
        // graceful shutdown exports what its batch still holds.
        await services.triggerGracefulShutdown()
        try await running.value

        let all = requests + [withBodies]
        let opentelemetry = CaptureSource.Client(rawValue: "OpenTelemetry")
        let (fromAgent, fromSpans) = try inspector.waitFor("\(all.count) flows from each side") { () -> ([NetworkLog], [NetworkLog])? in
            guard let flows = try? Self.flows(printedBy: inspector) else { return nil }
            let fromAgent = flows.filter { $0.source?.client == .urlSession }
            let fromSpans = flows.filter { $0.source?.client == opentelemetry }
            return fromAgent.count >= all.count && fromSpans.count >= all.count ? (fromAgent, fromSpans) : nil
        }
        // Exactly one of each: swift-otel's own exports add none (its
        // AsyncHTTPClient never went through `agent.capture(_:)`).
        #expect(fromAgent.count == all.count)
        #expect(fromSpans.count == all.count)
        #expect(try Self.flows(printedBy: inspector).count == 2 * all.count)

        var pairs: [String: (agent: NetworkLog, span: NetworkLog)] = [:]
        for request in all {
            let url = try #require(request.url?.absoluteString)
            let agentFlow = try #require(fromAgent.first { $0.request.url == url }, "no agent flow for \(url)")
            let spanFlow = try #require(fromSpans.first { $0.request.url == url }, "no span flow for \(url)")
            FlowAgreement.check(span: spanFlow, agent: agentFlow)
            if request.value(forHTTPHeaderField: "Authorization") != nil {
                #expect(FlowAgreement.grouped(spanFlow.request.headers)["authorization"] == ["<redacted>"])
            }
            pairs[url] = (agentFlow, spanFlow)
        }

        // Redacted values stayed redacted on both paths.
        let printed = inspector.output
        #expect(!printed.contains(Self.token))
        #expect(!printed.contains(LoopbackServer.cookieSecret))
        // Bodies travel as span attributes only when the app opts in.
        let optedIn = try #require(pairs[withBodies.url?.absoluteString ?? ""])
        #expect(optedIn.span.request.body?.data == Data(#"{"sku":9,"quantity":3}"#.utf8))
        #expect(optedIn.span.response?.body?.data == optedIn.agent.response?.body?.data)
        #expect(optedIn.span.response?.body?.data.isEmpty == false)
        #expect(pairs.values.filter { $0.span.request.url != optedIn.span.request.url }
            .allSatisfy { ($0.span.request.body?.data.isEmpty ?? true) && ($0.span.response?.body?.data.isEmpty ?? true) })

        // The agents came over the Unix socket, the spans' service (an app
        // of the same name, from `service.name`) over OTLP's TCP.
        let connected = inspector.errorOutput.split(separator: "\n").filter { $0.contains("\(Self.appName) (pid ") && $0.contains(") connected") }
        #expect(connected.filter { $0.contains("(pid \(getpid()) ") && $0.contains("connected from unix:") }.count == 2,
                "\(inspector.errorOutput)")
        #expect(connected.filter { $0.contains("connected from 127.0.0.1:") }.count == 1, "\(inspector.errorOutput)")
    }

    /// Each complete line netinspect `--json` printed so far, read as a flow, in order.
    private static func flows(printedBy inspector: InspectorProcess) throws -> [NetworkLog] {
        let text = inspector.output
        guard let lastNewline = text.lastIndex(of: "\n") else { return [] }
        return try text[..<lastNewline].split(separator: "\n").map { try NetworkLog(jsonLine: Array($0.utf8)) }
    }

    /// What the app sees of `requests` made through a session captured by an
    /// agent started for them and stopped (its queue flushed) after them.
    private static func capture(_ requests: [URLRequest], socket: String, spans: CaptureAgent.SpanEmission) async -> [AppView] {
        let agent: CaptureAgent
        do {
            agent = try CaptureAgent.start(.init(destination: .unix(path: socket)) {
                $0.appName = appName
                $0.spans = spans
            })
        } catch {
            Issue.record("the agent did not start: \(error)")
            return []
        }
        defer { agent.stop() }
        let configuration = URLSessionConfiguration.ephemeral
        agent.capture(configuration)
        let session = URLSession(configuration: configuration)
        var views: [AppView] = []
        for request in requests { views.append(await AppView(request, session: session)) }
        return views
    }

    private static func post(_ url: String) throws -> URLRequest {
        var post = URLRequest(url: try #require(URL(string: url)))
        post.httpMethod = "POST"
        post.setValue("application/json", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data(#"{"sku":9,"quantity":3}"#.utf8)
        return post
    }

    /// A GET with credentials, a POST with a body, a 404, a 500, and a
    /// connection refused.
    private static func requests(_ server: LoopbackServer) throws -> [URLRequest] {
        var get = URLRequest(url: try #require(URL(string: server.url("/items?sku=9"))))
        get.setValue("application/json", forHTTPHeaderField: "Accept")
        get.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let post = try post(server.url("/orders"))
        let closed = try LoopbackServer()
        let refused = closed.url("/refused")
        closed.shutdown()
        return try [get, post, URLRequest(url: #require(URL(string: server.url("/missing")))),
                    URLRequest(url: #require(URL(string: server.url("/boom")))), URLRequest(url: #require(URL(string: refused)))]
    }

    /// swift-otel's defaults but for the endpoint (netinspect's, as given:
    /// no `/v1/traces` appended to an explicit one), protobuf named, a short
    /// batch delay, and traces only.
    private static func otel(port: Int) -> OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.serviceName = appName
        configuration.diagnosticLogLevel = .warning
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = "http://127.0.0.1:\(port)/v1/traces"
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.batchSpanProcessor.scheduleDelay = .milliseconds(100)
        return configuration
    }
}

/// What the app got back: status, headers and body, or the error's code.
struct AppView: Equatable {
    var status: Int?
    var headers: [String: String] = [:]
    var body = Data()
    var errorCode: Int?

    init(_ request: URLRequest, session: URLSession) async {
        do {
            let (data, response) = try await session.data(for: request)
            let http = response as? HTTPURLResponse
            status = http?.statusCode
            for case let (name as String, value as String) in http?.allHeaderFields ?? [:] { headers[name.lowercased()] = value }
            body = data
        } catch {
            errorCode = (error as NSError).code
        }
    }
}
#endif
