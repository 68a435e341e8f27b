import Foundation

/// Turns a connection's byte stream into ``Message`` values: framing by
/// ``FrameDecoder``, JSON decoding, and the connection rules.
///
/// The rules it enforces:
/// - the first message must be a ``Message/hello(_:)`` whose protocol version
///   is in ``Wire/supportedVersions``;
/// - a message of an unknown kind is skipped (and counted), so newer agents
///   work with older viewers; unknown fields are ignored likewise;
/// - any other fault is a ``WireError``, after which the decoder throws the
///   same error again: the connection should be closed with its description.
///
/// ```swift
/// var decoder = MessageDecoder()
/// decoder.append(contentsOf: bytes)
/// while let message = try decoder.next() { inbox.post(message) }
/// ```
public struct MessageDecoder {
    private var frames: FrameDecoder
    private var failure: WireError?
    /// Reused for every payload: decoding allocates no index per message.
    private let tape = JSONTape()

    /// The connection's hello, once received.
    public private(set) var hello: Hello?
    /// How many messages of unknown kinds were skipped.
    public private(set) var skippedMessageCount = 0

    /// Creates a decoder with the given frame size limit.
    public init(maximumFrameSize: Int = Wire.defaultMaximumFrameSize) {
        frames = FrameDecoder(maximumFrameSize: maximumFrameSize)
    }

    /// Bytes held for messages not yet decoded.
    public var bufferedByteCount: Int { frames.bufferedByteCount }

    /// Adds bytes from the stream; after a fault they are dropped, as the
    /// stream can no longer be read.
    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        guard failure == nil else { return }
        frames.append(contentsOf: bytes)
    }

    /// The next message, `nil` when more bytes are needed.
    public mutating func next() throws(WireError) -> Message? {
        if let failure { throw failure }
        do {
            while let payload = try frames.nextFrame() {
                guard let message = try Message.decode(payload: payload, tape: tape) else {
                    skippedMessageCount += 1
                    continue
                }
                try check(message)
                return message
            }
            return nil
        } catch {
            failure = error
            throw error
        }
    }

    /// Declares the end of the stream; throws when it ended inside a frame.
    public func finish() throws(WireError) {
        if let failure { throw failure }
        try frames.finish()
    }

    private mutating func check(_ message: Message) throws(WireError) {
        if case .hello(let hello) = message {
            guard Wire.supportedVersions.contains(hello.protocolVersion) else {
                throw .unsupportedProtocolVersion(hello.protocolVersion, supported: Wire.supportedVersions)
            }
            if self.hello == nil { self.hello = hello }
        } else if case .none = hello {
            throw .helloExpected(got: message.kind)
        }
    }
}
