// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import NIOCore
import Tracing

extension CaptureAgent {
    /// Makes every `HTTPClient` created from `configuration` captured, for
    /// both of its APIs: `execute(_:timeout:)` and the future-based
    /// `execute(request:)` that Vapor's `app.client` uses. Call it before
    /// creating the client; a client copies its configuration when it is
    /// created.
    ///
    /// ```swift
    /// import AsyncHTTPClient
    /// import CaptureAgent
    /// import CaptureAgentAsyncHTTPClient
    ///
    /// let agent = try CaptureAgent.start()
    /// var configuration = HTTPClient.Configuration()
    /// agent.capture(&configuration)
    /// let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    /// let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:8080/"), timeout: .seconds(30))
    /// ```
    ///
    /// What it changes in `configuration`, none of which changes the traffic:
    /// - `http1_1ConnectionDebugInitializer` and `http2StreamChannelDebugInitializer`
    ///   add a pass-through channel handler to each connection (each HTTP/2
    ///   stream) right behind AsyncHTTPClient's HTTP codec, which records each
    ///   request and response as they go on the wire, redirect hops included.
    ///   An initializer the app had set still runs, after the handler is added.
    /// - `tracing.tracer` wraps the tracer the configuration had (the app's, or
    ///   the bootstrapped default), forwarding everything to it. It reports
    ///   async requests that fail before any connection carries them
    ///   (connection refused, DNS, connect or pool timeout) as failed flows.
    ///   The future-based API starts its spans only once a connection exists,
    ///   so its requests that never reach one are not captured (docs/AGENT.md).
    ///
    /// For an app that allows control (``CaptureAgent/allowsControl``), and
    /// only then, it also sets `proxy` to the agent's control tunnel, a
    /// loopback `CONNECT` tunnel in the app's own process, so the viewer's
    /// decisions come before the client has a connection to the server: a
    /// breakpoint holds as long as a person needs whatever the server's
    /// idle timeout, and server replay and map local answer with nothing
    /// listening at the server's address. A proxy the app had set is kept,
    /// and then these decisions are made on the server's connection, as
    /// without the tunnel (docs/AGENT.md, "AsyncHTTPClient under control").
    ///
    /// Calling it twice for the same agent does nothing the second time.
    public func capture(_ configuration: inout HTTPClient.Configuration) {
        if let tracer = configuration.tracing.tracer as? CaptureTracer, tracer.client.agent === self { return }
        let tunnel = allowsControl && configuration.proxy == nil ? ControlTunnel.of(self) : nil
        install(ClientCapture(agent: self, appConfiguration: configuration, tunnel: tunnel), in: &configuration)
        if let tunnel { configuration.proxy = .server(host: "127.0.0.1", port: tunnel.port) }
    }

    func install(_ client: ClientCapture, in configuration: inout HTTPClient.Configuration) {
        let appHTTP1 = configuration.http1_1ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { channel in
            client.install(on: channel, kind: .http1Connection).flatMap {
                appHTTP1?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            }
        }
        let appStream = configuration.http2StreamChannelDebugInitializer
        configuration.http2StreamChannelDebugInitializer = { channel in
            client.install(on: channel, kind: .http2Stream).flatMap {
                appStream?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            }
        }
        configuration.tracing.tracer = CaptureTracer(wrapping: configuration.tracing.tracer, client: client)
    }
}
#endif
