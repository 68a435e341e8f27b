/// Why a byte stream was rejected. Every case ends the connection it came
/// from: the stream can no longer be trusted to be in step.
public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A length prefix announced a payload larger than the decoder's limit.
    /// Detected from the four length bytes alone; the payload is never buffered.
    case frameTooLarge(length: Int, limit: Int)
    /// The payload is not UTF-8 JSON, or not a JSON object with a string
    /// `type`, or a known kind whose required fields are missing or mistyped.
    case malformedPayload(String)
    /// A `hello` named a protocol version this decoder does not speak.
    case unsupportedProtocolVersion(Int, supported: ClosedRange<Int>)
    /// The first message on a connection was not a `hello`.
    case helloExpected(got: String)
    /// The stream ended in the middle of a frame.
    case truncatedStream(bufferedBytes: Int)
    /// An encoder was asked to write a frame above the limit it was given.
    case frameTooLargeToEncode(length: Int, limit: Int)

    public var description: String {
        switch self {
        case let .frameTooLarge(length, limit):
            "frame too large: length prefix says \(length) bytes, limit is \(limit)"
        case let .malformedPayload(reason):
            "malformed payload: \(reason)"
        case let .unsupportedProtocolVersion(version, supported):
            "unsupported protocol version \(version) (this side speaks \(supported.lowerBound)...\(supported.upperBound))"
        case let .helloExpected(got):
            "protocol violation: first message must be 'hello', got '\(got)'"
        case let .truncatedStream(bufferedBytes):
            "stream ended inside a frame (\(bufferedBytes) bytes of an incomplete frame)"
        case let .frameTooLargeToEncode(length, limit):
            "refusing to encode a \(length)-byte frame: limit is \(limit)"
        }
    }
}
