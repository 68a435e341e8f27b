// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol

/// The agent's own clients, made from the app's configuration: each sends
/// one request and is shut down when it is done (never pooled, never kept,
/// so none outlives the app's).
extension ClientCapture {
    /// Fetches `request` for a map-remote rule with a client made from the
    /// app's configuration, not captured (the app's flow shows the answer).
    func fetch(_ request: ExchangeRequest, on eventLoop: EventLoop) -> EventLoopFuture<ExchangeResponse> {
        send(request, configuration: appConfiguration, on: eventLoop).map { response in
            ExchangeResponse(statusCode: Int(response.status.code), headers: response.headers.list,
                             body: response.body.map { Data($0.readableBytesView) } ?? Data())
        }
    }

    func send(_ exchange: ExchangeRequest, configuration: HTTPClient.Configuration, on eventLoop: EventLoop?) -> EventLoopFuture<HTTPClient.Response> {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let eventLoop = eventLoop ?? client.eventLoopGroup.next()
        let response: EventLoopFuture<HTTPClient.Response>
        do {
            var request = try HTTPClient.Request(url: exchange.url.absoluteString, method: HTTPMethod(rawValue: exchange.method))
            // AsyncHTTPClient sets these itself, from the URL and the body.
            request.headers = HTTPHeaders(exchange.headers.filter { header in
                !["host", "content-length", "transfer-encoding"].contains { HTTPHeader.namesMatch($0, header.name) }
            }.map { ($0.name, $0.value) })
            if let body = exchange.body { request.body = .bytes(body) }
            response = client.execute(request: request, eventLoop: .delegate(on: eventLoop))
        } catch {
            response = eventLoop.makeFailedFuture(error)
        }
        return response.always { _ in client.shutdown { _ in } }
    }
}

/// Replays an AsyncHTTPClient request: through a client the agent makes
/// from the app's configuration, captured (so the replay is a flow of its
/// own that says which flow it replays, and rules apply again); the app's
/// code never hears of it.
struct AsyncHTTPClientReplay: ReplaySender {
    let capture: ClientCapture

    func send(_ request: ExchangeRequest, replaying origin: ReplayOrigin) {
        var configuration = capture.appConfiguration
        capture.agent.install(ClientCapture(agent: capture.agent, appConfiguration: configuration, replayOrigin: origin), in: &configuration)
        _ = capture.send(request, configuration: configuration, on: nil)
    }
}
#endif
