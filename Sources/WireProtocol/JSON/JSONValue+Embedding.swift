import Foundation

// Parts of a flow as trees, for the viewer's own documents that embed them
// in JSON of their own (HAR's `_netinspect`): WireJSON writes the part, so
// its members are the ones docs/PROTOCOL.md §4 gives it on the wire, and
// the document's encoder writes the tree (`Encodable`, below).

extension JSONValue {
    /// Which client captured a flow, as the flow's `source` member.
    package init(_ source: CaptureSource) { self.init(writing: source) }
    /// A header field, as an element of a flow's `headers`.
    package init(_ header: HTTPHeader) { self.init(writing: header) }
    /// The client's phase timings, as a flow's `timing.phases`.
    package init(_ phases: TransferPhases) { self.init(writing: phases) }
    /// What rules and edits changed, as a flow's `changes`.
    package init(_ changes: FlowChanges) { self.init(writing: changes) }
    /// A gRPC call, as a flow's `grpc`.
    package init(_ call: GRPCCall) { self.init(writing: call) }

    private init(writing part: some JSONWritable) {
        var writer = JSONWriter()
        part.write(to: &writer)
        // The writer's output is always one valid JSON value (it writes a
        // non-finite number as 0), so the parse cannot fail.
        self = writer.output.withBytes { try? JSONParser.parse($0) } ?? .null
    }
}

extension JSONValue: Encodable {
    /// Writes the tree through any `Encoder`. A whole number is written as an
    /// integer, as an `Int` member of the model was before the tree.
    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .number(let number):
            var container = encoder.singleValueContainer()
            if let integer = intValue { try container.encode(integer) } else { try container.encode(number) }
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for member in members { try container.encode(member.value, forKey: MemberKey(stringValue: member.key)) }
        }
    }

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
