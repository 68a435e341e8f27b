import Foundation
import NIOCore
import NIOPosix
import WireProtocol
@testable import CaptureAgent

/// A stand-in for the inspector: listens on a Unix socket (or TCP on
/// 127.0.0.1 when `path` is empty), decodes every
/// connection with WireProtocol's `MessageDecoder`, and keeps the messages
/// per connection. Can read slowly, and can be killed.
final class TestInspector: @unchecked Sendable {
    private let serverChannel: Channel
    private let connections = Locked<[Int: [Message]]>([:])
    private let children = Locked<[Channel]>([])
    private let failures = Locked<[String]>([])
    private let versions = Locked<[Int]>([])
    private let nextConnection = Locked(0)
    let path: String
    /// The TCP port, when listening on TCP.
    private(set) var port = 0

    /// - Parameter slowReadBytesPerTick: when set, reads at most this many
    ///   bytes every 100 ms instead of as fast as it can.
    init(path: String, slowReadBytesPerTick: Int? = nil) throws {
        self.path = path
        if !path.isEmpty { unlink(path) }
        let connections = self.connections
        let children = self.children
        let failures = self.failures
        let versions = self.versions
        let counter = nextConnection
        var bootstrap = ServerBootstrap(group: TestHTTPServer.group)
            .childChannelInitializer { channel in
                let id = counter.withLock { value -> Int in
                    defer { value += 1 }
                    return value
                }
                children.withLock { $0.append(channel) }
                if slowReadBytesPerTick != nil {
                    channel.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { task in
                        if channel.isActive { channel.read() } else { task.cancel() }
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DecodingHandler(
                        onMessage: { message in connections.withLock { $0[id, default: []].append(message) } },
                        onError: { error in failures.withLock { $0.append("\(error)") } },
                        onPayload: { version in versions.withLock { $0.append(version) } }
                    ))
                }
            }
        if let slow = slowReadBytesPerTick {
            bootstrap = bootstrap
                .childChannelOption(.autoRead, value: false)
                .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: slow))
        }
        if path.isEmpty {
            serverChannel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
            port = serverChannel.localAddress?.port ?? 0
        } else {
            serverChannel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).wait()
        }
    }

    /// Switches a slow inspector to reading as fast as it can.
    func readFast() {
        for child in children.current {
            child.eventLoop.execute {
                child.setOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator())
                    .flatMap { child.setOption(.autoRead, value: true) }
                    .whenComplete { _ in child.read() }
            }
        }
    }

    /// The largest drop count any status message reported.
    var reportedDrops: Int {
        allMessages.compactMap { message -> Int? in
            if case .status(let status) = message { return status.droppedEvents }
            return nil
        }.max() ?? 0
    }

    /// Closes the listener and every connection, as if the inspector died.
    /// Writes `bytes` to connection `index` (0 is the first accepted), as
    /// an inspector's receipts would go.
    func write(_ bytes: Data, toConnection index: Int) {
        let channel = children.withLock { $0.indices.contains(index) ? $0[index] : nil }
        channel?.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// Closes every agent's connection and keeps listening: the viewer went
    /// away, and the agents connect again.
    func dropConnections() {
        for child in children.current { try? child.close().wait() }
    }

    func kill() {
        try? serverChannel.close().wait()
        for child in children.current { try? child.close().wait() }
        if !path.isEmpty { unlink(path) }
    }

    /// The index of the newest connection once its first message (the
    /// agent's hello) has arrived: an agent counts itself connected a moment
    /// before the inspector has read anything from it.
    func latestConnection(timeout: TimeInterval = 10) -> Int {
        _ = eventually(timeout: timeout) { !connections.current.isEmpty }
        return max(0, messagesByConnection.count - 1)
    }

    /// Messages per connection, in connection order.
    var messagesByConnection: [[Message]] {
        connections.current.sorted { $0.key < $1.key }.map(\.value)
    }

    var allMessages: [Message] { messagesByConnection.flatMap { $0 } }

    var decodingErrors: [String] { failures.current }

    /// The protocol version of every frame received, in order (a
    /// version-2 payload starts with 0x02, a version-1 payload is JSON).
    var frameVersions: [Int] { versions.current }

    /// Flows folded from their events, by id, as the inspector would store them.
    var flows: [FlowID: NetworkLog] {
        var flows: [FlowID: NetworkLog] = [:]
        for message in allMessages {
            switch message {
            case .flowStarted(let log): flows[log.id] = log
            case .flowResponse(let event): flows[event.id]?.apply(event)
            case .flowFinished(let event): flows[event.id]?.apply(event)
            case .grpcMessage(let event): flows[event.id]?.apply(event)
            case .bodyPart(let event): flows[event.id]?.apply(event)
            case .webSocketMessage(let event): flows[event.id]?.apply(event)
            case .hello, .status, .held, .released: break
            }
        }
        return flows
    }

    /// Finished flows whose request URL ends with `suffix`.
    func finishedFlows(urlSuffix suffix: String) -> [NetworkLog] {
        flows.values.filter { $0.state.isFinal && $0.request.url.hasSuffix(suffix) }.sorted { $0.timing.startedAt < $1.timing.startedAt }
    }
}

private final class DecodingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var decoder = MessageDecoder()
    private var frames = FrameDecoder()
    private let onMessage: @Sendable (Message) -> Void
    private let onError: @Sendable (Error) -> Void
    private let onPayload: @Sendable (Int) -> Void

    init(onMessage: @escaping @Sendable (Message) -> Void, onError: @escaping @Sendable (Error) -> Void,
         onPayload: @escaping @Sendable (Int) -> Void) {
        self.onMessage = onMessage
        self.onError = onError
        self.onPayload = onPayload
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        decoder.append(contentsOf: buffer.readableBytesView)
        frames.append(contentsOf: buffer.readableBytesView)
        while let payload = try? frames.nextFrame() { onPayload(payload.first == 0x02 ? 2 : 1) }
        do {
            while let message = try decoder.next() { onMessage(message) }
        } catch {
            onError(error)
            context.close(promise: nil)
        }
    }
}

/// A socket path under /tmp unique to this test run.
func temporarySocketPath(_ name: String) -> String {
    "/tmp/ni-\(getpid())-\(name).sock"
}
