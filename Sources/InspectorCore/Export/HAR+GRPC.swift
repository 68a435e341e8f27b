import Foundation
import WireProtocol

// HAR has no gRPC. A gRPC call is written as the HTTP/2 exchange it is: the
// request's `postData` and the response's `content` hold that side's
// messages as gRPC frames (each a 0 flag byte, a 4-byte big-endian length,
// the message bytes kept), base64, with mimeType `application/grpc`, so
// another tool sees the bytes a gRPC client sent. `_netinspect.grpc` keeps
// the call whole, as in PROTOCOL.md §4 (service, method, kind, each message
// with its direction, time and true size, status, trailers), and `--read`
// restores the flow from it. docs/GUIDE.md, "gRPC calls", says the same.

extension HAR.Entry {
    /// Writes a gRPC call's messages as frames, and the call into `_netinspect`.
    mutating func addGRPC(_ call: GRPCCall) {
        netinspect?.grpc = JSONValue(call)
        request.httpVersion = "HTTP/2"
        let requestFrames = GRPCFrames.encode(call.messages.filter { $0.direction == .request })
        request.postData = HAR.PostData(mimeType: GRPCFrames.mimeType, params: [], text: requestFrames.base64EncodedString(), encoding: "base64")
        request.bodySize = requestFrames.count
        guard response.status > 0 else { return }
        response.httpVersion = "HTTP/2"
        let responseFrames = GRPCFrames.encode(call.messages.filter { $0.direction == .response })
        response.content = HAR.Content(size: responseFrames.count, mimeType: GRPCFrames.mimeType,
                                       text: responseFrames.base64EncodedString(), encoding: "base64")
        response.bodySize = responseFrames.count
    }
}

extension NetworkLog {
    /// Restores a gRPC call from `_netinspect.grpc`; the frames in the HAR
    /// bodies were written from its messages, so the bodies the flow had
    /// (none, for a call the agent captured) are taken from `_netinspect`.
    mutating func restoreGRPC(from ours: JSONValue?) {
        guard let value = ours?["grpc"], let call = GRPCCall(harValue: value) else { return }
        grpc = call
        if ours?["requestBody"] == nil { request.body = nil }
        if ours?["responseBody"] == nil { response?.body = nil }
    }
}

/// gRPC's length-prefixed message framing (gRPC over HTTP/2, "Length-Prefixed-Message").
enum GRPCFrames {
    static let mimeType = "application/grpc"

    /// Each message's kept bytes behind an uncompressed frame header.
    static func encode(_ messages: [GRPCMessage]) -> Data {
        var data = Data()
        for message in messages {
            let length = UInt32(truncatingIfNeeded: message.body.data.count)
            data.append(0)
            data.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) })
            data.append(message.body.data)
        }
        return data
    }
}

extension GRPCCall {
    /// Reads the call as `_netinspect.grpc` holds it (the wire's JSON form); nil when it is not one.
    init?(harValue value: JSONValue) {
        guard let service = value["service"]?.stringValue, let method = value["method"]?.stringValue else { return nil }
        let messages = (value["messages"]?.arrayValue ?? []).compactMap { message -> GRPCMessage? in
            guard let direction = message["direction"]?.stringValue.flatMap(GRPCMessage.Direction.init(rawValue:)),
                  let body = message["body"] else { return nil }
            let data = body["base64"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Data()
            return GRPCMessage(direction: direction, at: message["at"]?.doubleValue ?? 0,
                               body: CapturedBody(data: data, size: body["size"]?.intValue ?? data.count,
                                                  isTruncated: body["truncated"]?.boolValue ?? false))
        }
        let status = value["status"].flatMap { status in
            status["code"]?.intValue.map { GRPCStatus(code: $0, message: status["message"]?.stringValue) }
        }
        let trailers = (value["trailers"]?.arrayValue ?? []).compactMap { trailer -> HTTPHeader? in
            trailer["name"]?.stringValue.map { HTTPHeader(name: $0, value: trailer["value"]?.stringValue ?? "") }
        }
        self.init(service: service, method: method, kind: value["kind"]?.stringValue.flatMap(GRPCCallKind.init(rawValue:)),
                  messages: messages, droppedMessages: value["droppedMessages"]?.intValue ?? 0, status: status, trailers: trailers)
    }
}
