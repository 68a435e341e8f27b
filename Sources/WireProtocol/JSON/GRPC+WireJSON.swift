import Foundation

// The JSON mapping of a gRPC call (docs/PROTOCOL.md §4 names its members;
// the golden files pin them).

extension GRPCCallKind: WireNameSet {
    static let wireName = "gRPC call kind"
    static let wireNames = WireNames<Self>()
}

extension StreamDirection: WireNameSet {
    static let wireName = "message direction"
    static let wireNames = WireNames<Self>()
}

extension GRPCStatus: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("code", code); $0.field("message", message) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(code: try json.int("code"), message: try json.optionalString("message"))
    }
}

extension GRPCMessage: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("direction", direction); $0.field("at", at); $0.field("body", body) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(direction: try json.decode("direction"), at: try json.double("at"), body: try json.decode("body"))
    }
}

extension GRPCCall: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("service", service); $0.field("method", method); $0.field("kind", kind)
            if !messages.isEmpty { $0.field("messages", messages) }
            if droppedMessages != 0 { $0.field("droppedMessages", droppedMessages) }
            $0.field("status", status)
            if !trailers.isEmpty { $0.field("trailers", trailers) }
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(service: try json.string("service"), method: try json.string("method"),
                  kind: try json.decodeIfPresent("kind"), messages: try json.optionalArray("messages") ?? [],
                  droppedMessages: try json.optionalInt("droppedMessages") ?? 0,
                  status: try json.decodeIfPresent("status"), trailers: try json.optionalArray("trailers") ?? [])
    }
}

extension GRPCOutcome: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("status", status)
            if !trailers.isEmpty { $0.field("trailers", trailers) }
            if droppedMessages != 0 { $0.field("droppedMessages", droppedMessages) }
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(status: try json.decode("status"), trailers: try json.optionalArray("trailers") ?? [],
                  droppedMessages: try json.optionalInt("droppedMessages") ?? 0)
    }
}
