// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TestSupport
import XCTest
@testable import CaptureAgent

/// A streamed completion watched live: a real server on loopback sends
/// OpenAI-style server-sent events a few at a time, AsyncHTTPClient reads
/// them through the agent, and the real `netinspect` in tmux shows each
/// event as it arrives, then the text they add up to.
final class EventStreamInspectorEndToEndTests: XCTestCase, @unchecked Sendable {
    private var pane: TmuxSession?
    private var server: GatedEventStreamServer?
    /// Shut down here too, so a failed wait does not end the run in
    /// AsyncHTTPClient's deinit check.
    private var client: HTTPClient?

    override func tearDown() {
        try? client?.syncShutdown()
        server?.release()
        server?.shutdown()
        pane?.kill()
    }

    private static func chunk(_ content: String) -> String {
        #"data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\#(content)"}}]}"# + "\n\n"
    }

    func testTheMessagesTabShowsEventsAsTheyArriveThenTheAssembledText() async throws {
        try await watchAStream(asTheFirstRequest: false)
    }

    /// The stream is the app's very first request, sent as `start()`
    /// returns (a command wrapped by `netinspect -- COMMAND` whose one call
    /// is a streamed completion): its events show while it streams, with
    /// no gap. The events that went by before the agent read the viewer's
    /// switch to version 2 once never reached it, and the tab said
    /// "Server-sent events (0)" and that the body was cut.
    func testAStreamThatIsTheAppsFirstRequestShowsItsEventsWhileItStreams() async throws {
        try await watchAStream(asTheFirstRequest: true)
    }

    private func watchAStream(asTheFirstRequest: Bool) async throws {
        let before = [Self.chunk("Hel"), Self.chunk("lo, ")]
        let after = [Self.chunk("wor"), Self.chunk("ld"), "data: [DONE]\n\n"]
        let server = try GatedEventStreamServer(before: before, after: after, interval: .milliseconds(150))
        self.server = server
        let pane = try TmuxSession(name: #function)
        try pane.waitUntilListening()
        self.pane = pane
        let agent = try CaptureAgent.start(.init(destination: .unix(path: pane.socketPath)) { $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        if !asTheFirstRequest {
            _ = try pane.waitFor("1 agent")
            XCTAssertTrue(eventually(timeout: 20) { agent.streamsBodyParts }, "the agent never switched to version 2")
        }

        var configuration = HTTPClient.Configuration()
        agent.capture(&configuration)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.client = client
        let url = "http://127.0.0.1:\(server.port)/v1/chat/completions"
        let reading = Task { () throws -> [UInt8] in
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            var body: [UInt8] = []
            for try await part in response.body { body.append(contentsOf: part.readableBytesView) }
            return body
        }

        // Mid-stream: the server holds the rest back until released.
        var screen = try pane.waitFor("⇣")
        pane.send("Enter")
        pane.send("5")
        screen = try pane.waitFor("event 2")
        XCTAssertTrue(screen.contains("⇣ streaming"), "the stream is live:\n\(screen)")
        XCTAssertTrue(screen.contains("  Hello,\n"), "the text so far, assembled (the screen drops its trailing space):\n\(screen)")
        XCTAssertFalse(screen.contains("event 3"), "no event the server has not sent:\n\(screen)")
        XCTAssertTrue(screen.contains("Server-sent events (2)"), "both events so far, the first included:\n\(screen)")
        XCTAssertFalse(screen.contains("cut"), "no gap, so nothing reads as cut:\n\(screen)")

        server.release()
        screen = try pane.waitFor("ended cleanly")
        XCTAssertTrue(screen.contains("[DONE]"), "following the stream, the view shows its end:\n\(screen)")
        pane.send("g")
        screen = try pane.waitFor("Hello, world")
        XCTAssertTrue(screen.contains("Server-sent events (5)  ended cleanly"), screen)

        let body = try await reading.value
        XCTAssertEqual(String(decoding: body, as: UTF8.self), (before + after).joined(), "the app read every byte the server sent")
        try await client.shutdown()
        self.client = nil
    }
}

/// An HTTP/1.1 server on 127.0.0.1 that answers every request with a
/// `text/event-stream`: the `before` events `interval` apart, then,
/// once ``release()`` is called, the `after` events and the end.
final class GatedEventStreamServer: @unchecked Sendable {
    private let channel: Channel
    private let gate: EventLoopPromise<Void>
    let port: Int

    init(before: [String], after: [String], interval: TimeAmount) throws {
        let loop = TestHTTPServer.group.next()
        let gate = loop.makePromise(of: Void.self)
        self.gate = gate
        channel = try ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        EventStreamHandler(before: before, after: after, interval: interval, gate: gate.futureResult))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    /// Lets the stream finish.
    func release() {
        gate.succeed()
    }

    func shutdown() {
        try? channel.close().wait()
    }
}

private final class EventStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let before: [String]
    private let after: [String]
    private let interval: TimeAmount
    private let gate: EventLoopFuture<Void>

    init(before: [String], after: [String], interval: TimeAmount, gate: EventLoopFuture<Void>) {
        self.before = before
        self.after = after
        self.interval = interval
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let head = HTTPResponseHead(version: .http1_1, status: .ok,
                                    headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Transfer-Encoding": "chunked"])
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
        let channel = context.channel
        let after = after
        let interval = interval
        let gate = gate
        Self.send(before[...], every: interval, on: channel) {
            gate.hop(to: channel.eventLoop).whenSuccess {
                Self.send(after[...], every: interval, on: channel) {
                    channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
                }
            }
        }
    }

    private static func send(_ events: ArraySlice<String>, every interval: TimeAmount, on channel: Channel,
                             then done: @escaping @Sendable () -> Void) {
        guard let event = events.first else { return done() }
        channel.eventLoop.scheduleTask(in: interval) {
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: event))), promise: nil)
            send(events.dropFirst(), every: interval, on: channel, then: done)
        }
    }
}
#endif
