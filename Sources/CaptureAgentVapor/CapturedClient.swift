// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import Vapor
import WireProtocol

extension Application.Clients.Provider {
    /// `app.client` and `req.client` through the agent: every request is
    /// recorded as Vapor's client sends it, and (when the app allows
    /// control) every traffic rule applies before it is sent, map remote
    /// included, with breakpoints and replay. A request made while a
    /// captured handler runs names that inbound flow as its parent.
    ///
    /// ```swift
    /// let agent = try CaptureAgent.start()
    /// app.clients.use(.captured(by: agent))
    /// // in a route: let response = try await req.client.get("http://inventory/items/42")
    /// ```
    ///
    /// It sends with `app.http.client.shared` (built from
    /// `app.http.client.configuration`). Do not also capture that
    /// configuration with `CaptureAgentAsyncHTTPClient`, or each call shows twice.
    public static func captured(by agent: CaptureAgent) -> Self {
        .init { app in
            let flows = VaporClientFlows(agent: agent)
            app.clients.use { app in
                CapturedClient(flows: flows, http: app.http.client.shared, configuration: app.http.client.configuration,
                               eventLoop: app.eventLoopGroup.next(),
                               logger: app.logger, byteBufferAllocator: ByteBufferAllocator())
            }
        }
    }
}

/// A Vapor `Client` that sends with AsyncHTTPClient and records each
/// exchange. Vapor hands it the whole request before anything is sent and
/// takes the whole response back, so every control power fits.
struct CapturedClient: Client {
    let flows: VaporClientFlows
    let http: HTTPClient
    /// What `http` was made from: a replay makes a client of its own from it.
    let configuration: HTTPClient.Configuration
    let eventLoop: any EventLoop
    var logger: Logger?
    var byteBufferAllocator: ByteBufferAllocator

    func send(_ request: ClientRequest) -> EventLoopFuture<ClientResponse> {
        // On the caller's task, where its handler's context is current.
        let parent = CaptureAgent.currentInboundFlowID
        let promise = eventLoop.makePromise(of: ClientResponse.self)
        promise.completeWithTask { try await flows.exchange(request, parent: parent, through: self) }
        return promise.futureResult
    }

    /// Sends one request with AsyncHTTPClient, as Vapor's own client does.
    func send(_ request: ExchangeRequest, deadline: NIODeadline?) async throws -> HTTPClient.Response {
        var outgoing = try HTTPClient.Request(url: request.url.absoluteString, method: HTTPMethod(rawValue: request.method))
        outgoing.headers = HTTPHeaders(request.headers.map { ($0.name, $0.value) })
        if let body = request.body { outgoing.body = .bytes(body) }
        return try await http.execute(request: outgoing, eventLoop: .delegate(on: eventLoop), deadline: deadline, logger: logger).get()
    }

    func delegating(to eventLoop: any EventLoop) -> any Client {
        CapturedClient(flows: flows, http: http, configuration: configuration, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
    }

    func logging(to logger: Logger) -> any Client {
        CapturedClient(flows: flows, http: http, configuration: configuration, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
    }

    func allocating(to byteBufferAllocator: ByteBufferAllocator) -> any Client {
        CapturedClient(flows: flows, http: http, configuration: configuration, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
    }
}
#endif
