import Foundation

// The JSON mapping of body parts and WebSocket messages (docs/PROTOCOL.md
// names their members; the golden files pin them).

extension WebSocketOpcode: WireNameSet {
    static let wireName = "WebSocket opcode"
    static let wireNames = WireNames<Self>()
}

extension BodyPart: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("direction", direction); $0.field("at", at); $0.field("offset", offset); $0.field("body", body)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(direction: try json.decode("direction"), at: try json.double("at"), offset: try json.int("offset"),
                  body: try json.decode("body"))
    }
}

extension BodyPartMark: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("direction", direction); $0.field("at", at); $0.field("offset", offset); $0.field("size", size)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(direction: try json.decode("direction"), at: try json.double("at"), offset: try json.int("offset"),
                  size: try json.int("size"))
    }
}

extension BodyParts: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("marks", marks) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(marks: try json.array("marks"))
    }
}

extension WebSocketMessage: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("direction", direction); $0.field("at", at); $0.field("opcode", opcode); $0.field("body", body)
            $0.field("closeCode", closeCode)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(direction: try json.decode("direction"), at: try json.double("at"), opcode: try json.decode("opcode"),
                  body: try json.decode("body"), closeCode: try json.optionalInt("closeCode"))
    }
}

extension WebSocketSession: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            if !messages.isEmpty { $0.field("messages", messages) }
            if droppedMessages != 0 { $0.field("droppedMessages", droppedMessages) }
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(messages: try json.optionalArray("messages") ?? [], droppedMessages: try json.optionalInt("droppedMessages") ?? 0)
    }
}

extension WebSocketOutcome: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("droppedMessages", droppedMessages) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(droppedMessages: try json.optionalInt("droppedMessages") ?? 0)
    }
}
