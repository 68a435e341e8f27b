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

/// `--json --messages` on a real stream: a loopback server sends an
/// OpenAI-style completion of 20 events, the first with the response head
/// and the last ones together with the end (as real servers do), an app
/// reads it with AsyncHTTPClient through the agent, and the real
/// `netinspect` prints a line per event: each exactly once, in order, timed.
final class HeadlessMessagesStreamEndToEndTests: XCTestCase {
    static let words = ["The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog ", "and ",
                        "runs ", "far ", "into ", "the ", "green ", "wood ", "at ", "dusk ", "today", "[DONE]"]

    static func event(_ word: String) -> String {
        word == "[DONE]" ? "data: [DONE]\n\n"
            : #"data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\#(word)"}}]}"# + "\n\n"
    }

    func testEachEventIsPrintedOnceInOrderWithItsTimeTheFirstIncluded() async throws {
        let server = try CompletionStreamServer(events: Self.words.map(Self.event), interval: .milliseconds(15), lastTogether: 3)
        defer { server.shutdown() }
        let path = temporarySocketPath("messages20")
        let inspector = try InspectorProcess(listen: "unix:\(path)", arguments: ["--messages"])
        defer { inspector.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: path)) { $0.initialConnectionWait = 5; $0.flushTimeout = 1 })
        defer { agent.stop() }
        // The stream's parts go out one by one only once the viewer reads version 2 (issue 45's item 1 is the other case).
        let switched = await waitUntil(timeout: 20) { agent.streamsBodyParts }
        XCTAssertTrue(switched, "the agent never switched to version 2")

        var configuration = HTTPClient.Configuration()
        agent.capture(&configuration)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/v1/chat/completions"),
                                                timeout: .seconds(60))
        var body: [UInt8] = []
        for try await part in response.body { body.append(contentsOf: part.readableBytesView) }
        try await client.shutdown()
        XCTAssertEqual(String(decoding: body, as: UTF8.self), Self.words.map(Self.event).joined())

        let flowPrinted = await waitUntil(timeout: 20) { inspector.jsonLines.contains { $0["message"] == nil } }
        XCTAssertTrue(flowPrinted, "the flow's own line: \(inspector.output) \(inspector.errorOutput)")
        let messages = inspector.jsonLines.compactMap { $0["message"] as? [String: Any] }
        let texts = messages.map { $0["text"] as? String ?? "?" }
        XCTAssertEqual(texts, Self.words.map { Self.event($0).dropFirst(6).dropLast(2) }.map(String.init),
                       "each event once, in order:\n\(inspector.output)")
        let times = messages.map { $0["at"] as? Double }
        XCTAssertFalse(times.contains { $0 == nil }, "every event has its time: \(times)")
        let known = times.compactMap { $0 }
        XCTAssertEqual(known, known.sorted(), "the times go forward")
        let dates = messages.compactMap { $0["date"] as? Double }
        XCTAssertEqual(dates, dates.sorted(), "the dates go forward, none at the flow's start after later ones")
    }
}

/// An HTTP/1.1 server on 127.0.0.1 that answers with a `text/event-stream`:
/// the first event in the same write as the head, the others `interval`
/// apart, and the last `lastTogether` of them with the end in one write.
private final class CompletionStreamServer: @unchecked Sendable {
    private let channel: Channel
    let port: Int

    init(events: [String], interval: TimeAmount, lastTogether: Int) throws {
        channel = try ServerBootstrap(group: TestHTTPServer.group.next())
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        CompletionStreamHandler(events: events, interval: interval, lastTogether: lastTogether))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel.close().wait()
    }
}

private final class CompletionStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let events: [String]
    private let interval: TimeAmount
    private let lastTogether: Int

    init(events: [String], interval: TimeAmount, lastTogether: Int) {
        self.events = events
        self.interval = interval
        self.lastTogether = lastTogether
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let head = HTTPResponseHead(version: .http1_1, status: .ok,
                                    headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Transfer-Encoding": "chunked"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: events[0])))), promise: nil)
        Self.send(events.dropFirst().dropLast(lastTogether), every: interval, on: context.channel) { [events, lastTogether] channel in
            channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: events.suffix(lastTogether).joined()))), promise: nil)
            channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
        }
    }

    private static func send(_ events: ArraySlice<String>, every interval: TimeAmount, on channel: Channel,
                             then done: @escaping @Sendable (Channel) -> Void) {
        channel.eventLoop.scheduleTask(in: interval) {
            guard let event = events.first else { return done(channel) }
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: event))), promise: nil)
            send(events.dropFirst(), every: interval, on: channel, then: done)
        }
    }
}
#endif
