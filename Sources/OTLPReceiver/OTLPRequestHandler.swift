import InspectorIngest
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import WireProtocol

/// One OTLP/HTTP connection: `POST /v1/traces` requests in, replies out.
///
/// The body (already inflated by NIO's request decompressor, which stops at
/// the same size limit) is collected up to ``OTLPReceiverConfiguration/maximumBodySize``;
/// a larger declared or actual body gets 413 and the connection closes
/// without reading the rest. Anything the decoder refuses gets 400 with the
/// reason. Either way only this request fails: the listener serves on.
final class OTLPRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case idle
        case collecting(HTTPRequestHead, OTLPReply.Encoding, ByteBuffer)
        /// The reply is decided; the rest of the request is ignored.
        case refusing(OTLPReply, HTTPRequestHead, closing: Bool)
        /// A reply that closes the connection has been sent.
        case done
    }

    private let ingest: SpanIngest
    private let configuration: OTLPReceiverConfiguration
    private var state = State.idle
    private var peer = "unknown peer"

    init(ingest: SpanIngest, configuration: OTLPReceiverConfiguration) {
        self.ingest = ingest
        self.configuration = configuration
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = PeerAddress.of(remote: context.remoteAddress, local: context.localAddress)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else { return }
        switch (unwrapInboundIn(data), state) {
        case (.head(let head), _):
            state = start(head)
            if case .refusing(let reply, let head, closing: true) = state {
                // A body too large to read: answer now, read no further.
                refuse(reply, head, context: context)
            }
        case (.body(var part), .collecting(let head, let encoding, var body)):
            if body.readableBytes + part.readableBytes > configuration.maximumBodySize {
                refuse(.failure(.payloadTooLarge, tooLarge, as: encoding), head, context: context)
            } else {
                state = .idle  // drops the buffer's second reference, so the write does not copy
                body.writeBuffer(&part)
                state = .collecting(head, encoding, body)
            }
        case (.end, .collecting(let head, let encoding, let body)):
            state = .idle
            send(reply(to: Array(body.readableBytesView), as: encoding), to: head, closing: !head.isKeepAlive, context: context)
        case (.end, .refusing(let reply, let head, let closing)):
            state = .idle
            send(reply, to: head, closing: closing || !head.isKeepAlive, context: context)
        case (.body, _), (.end, _):
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let head: HTTPRequestHead?
        let encoding: OTLPReply.Encoding
        switch state {
        case let .collecting(collectingHead, collectingEncoding, _):
            (head, encoding) = (collectingHead, collectingEncoding)
        case let .refusing(reply, refusingHead, _):
            (head, encoding) = (refusingHead, reply.encoding)
        case .idle, .done:
            (head, encoding) = (nil, .json)
        }
        guard let head else {
            context.close(promise: nil)
            return
        }
        // The inflater's state is lost after an error: answer, then close.
        if case NIOHTTPDecompression.DecompressionError.limit = error {
            refuse(.failure(.payloadTooLarge, tooLarge + " once decompressed", as: encoding), head, context: context)
        } else {
            refuse(.failure(.badRequest, "cannot decompress the body: \(error)", as: encoding), head, context: context)
        }
    }

    private var tooLarge: String { "the body is larger than \(configuration.maximumBodySize) bytes" }

    private func start(_ head: HTTPRequestHead) -> State {
        let encoding: OTLPReply.Encoding? = switch MediaType.essence(of: head.headers["content-type"].first) {
        case "application/x-protobuf": .protobuf
        case "application/json": .json
        default: nil
        }
        let replyEncoding = encoding ?? .json
        func refuse(_ status: HTTPResponseStatus, _ message: String, closing: Bool = false) -> State {
            .refusing(.failure(status, message, as: replyEncoding), head, closing: closing)
        }
        if let token = configuration.token, !Self.carries(token, head.headers) {
            return refuse(.unauthorized, "missing or wrong Authorization: Bearer token")
        }
        guard head.uri.split(separator: "?", maxSplits: 1).first == "/v1/traces" else {
            return refuse(.notFound, "only /v1/traces is served here (traces over OTLP/HTTP)")
        }
        guard head.method == .POST else { return refuse(.methodNotAllowed, "use POST") }
        guard let encoding else {
            return refuse(.unsupportedMediaType, "Content-Type must be application/x-protobuf or application/json")
        }
        if let length = head.headers["content-length"].first.flatMap({ Int($0) }), length > configuration.maximumBodySize {
            return refuse(.payloadTooLarge, tooLarge, closing: true)
        }
        return .collecting(head, encoding, ByteBuffer())
    }

    private func reply(to body: [UInt8], as encoding: OTLPReply.Encoding) -> OTLPReply {
        guard ingest.hasRoom else {
            return .failure(.serviceUnavailable, "netinspect is behind; retry shortly", as: encoding)
        }
        do {
            let export = switch encoding {
            case .protobuf: try TraceExport(protobuf: body)
            case .json: try TraceExport(json: body)
            }
            let outcome = ingest.ingest(export, peer: peer)
            return .accepted(rejectedSpans: outcome.rejectedSpans,
                             message: "\(outcome.rejectedSpans) spans have a trace id that is not 16 bytes or a span id that is not 8",
                             as: encoding)
        } catch {
            return .failure(.badRequest, error.description, as: encoding)
        }
    }

    /// Answers with an error and closes: the rest of the body is not read.
    private func refuse(_ reply: OTLPReply, _ head: HTTPRequestHead, context: ChannelHandlerContext) {
        send(reply, to: head, closing: true, context: context)
    }

    private func send(_ reply: OTLPReply, to head: HTTPRequestHead, closing: Bool, context: ChannelHandlerContext) {
        guard !isDone else { return }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: reply.encoding.contentType)
        headers.add(name: "content-length", value: String(reply.body.count))
        if let retryAfter = reply.retryAfter { headers.add(name: "retry-after", value: String(retryAfter)) }
        if closing { headers.add(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: reply.status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: reply.body)))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if closing {
            state = .done
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Compares the whole header in constant time for equal lengths.
    private static func carries(_ token: String, _ headers: HTTPHeaders) -> Bool {
        guard let value = headers["authorization"].first else { return false }
        let expected = Array("Bearer \(token)".utf8)
        let given = Array(value.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
