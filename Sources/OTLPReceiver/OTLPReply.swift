import Foundation
import NIOHTTP1
import ProtobufWire

/// The bodies OTLP/HTTP answers with, in the request's encoding: an
/// `ExportTraceServiceResponse` (with `partial_success` when spans were
/// rejected) for 200, a `google.rpc.Status` for every error.
struct OTLPReply {
    enum Encoding {
        case protobuf, json

        var contentType: String {
            switch self {
            case .protobuf: "application/x-protobuf"
            case .json: "application/json"
            }
        }
    }

    var status: HTTPResponseStatus
    var body: [UInt8]
    var encoding: Encoding
    /// Seconds before a retry, for 503.
    var retryAfter: Int?

    /// 200, with the count of rejected spans and why, when there are any.
    static func accepted(rejectedSpans: Int, message: String, as encoding: Encoding) -> OTLPReply {
        guard rejectedSpans > 0 else {
            return OTLPReply(status: .ok, body: encoding == .json ? Array("{}".utf8) : [], encoding: encoding)
        }
        switch encoding {
        case .protobuf:
            var partial = ProtobufWriter()
            partial.writeVarint(UInt64(rejectedSpans), field: 1)
            partial.writeString(message, field: 2)
            var response = ProtobufWriter()
            response.writeMessage(partial, field: 1)
            return OTLPReply(status: .ok, body: response.bytes, encoding: encoding)
        case .json:
            // OTLP/JSON writes 64-bit integers as strings.
            let json = ["partialSuccess": ["rejectedSpans": String(rejectedSpans), "errorMessage": message]]
            return OTLPReply(status: .ok, body: jsonBytes(json), encoding: encoding)
        }
    }

    /// An error status with a `google.rpc.Status` saying why.
    static func failure(_ status: HTTPResponseStatus, _ message: String, as encoding: Encoding) -> OTLPReply {
        let code = grpcCode(for: status)
        switch encoding {
        case .protobuf:
            var body = ProtobufWriter()
            body.writeVarint(UInt64(code), field: 1)
            body.writeString(message, field: 2)
            return OTLPReply(status: status, body: body.bytes, encoding: encoding, retryAfter: status == .serviceUnavailable ? 1 : nil)
        case .json:
            return OTLPReply(status: status, body: jsonBytes(["code": code, "message": message]), encoding: encoding,
                             retryAfter: status == .serviceUnavailable ? 1 : nil)
        }
    }

    /// The gRPC status code OTLP pairs with each HTTP status.
    private static func grpcCode(for status: HTTPResponseStatus) -> Int {
        switch status {
        case .badRequest, .unsupportedMediaType: 3  // INVALID_ARGUMENT
        case .unauthorized: 16  // UNAUTHENTICATED
        case .notFound: 5  // NOT_FOUND
        case .methodNotAllowed: 12  // UNIMPLEMENTED
        case .payloadTooLarge: 8  // RESOURCE_EXHAUSTED
        case .serviceUnavailable: 14  // UNAVAILABLE
        default: 2  // UNKNOWN
        }
    }

    private static func jsonBytes(_ object: [String: Any]) -> [UInt8] {
        // Strings and integers only: serialization cannot fail.
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}
