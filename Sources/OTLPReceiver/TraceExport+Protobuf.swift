import ProtobufWire

// Field numbers of opentelemetry-proto's collector/trace/v1, trace/v1,
// resource/v1 and common/v1 messages. A field with an unexpected wire type
// is skipped like an unknown one.
extension TraceExport {
    /// Decodes an `ExportTraceServiceRequest` in the protobuf encoding.
    /// - Throws: ``TraceExportError`` naming what is malformed.
    package init(protobuf bytes: [UInt8]) throws(TraceExportError) {
        self.init()
        do {
            var reader = ProtobufReader(bytes)
            while let field = try reader.nextField() {
                if field == .init(number: 1, wireType: .lengthDelimited) {
                    var message = try reader.readMessage()
                    resourceSpans.append(try ResourceSpans(&message))
                } else {
                    try reader.skip(field.wireType)
                }
            }
        } catch {
            throw TraceExportError("malformed protobuf: \(error)")
        }
    }
}

extension ResourceSpans {
    fileprivate init(_ reader: inout ProtobufReader) throws(ProtobufError) {
        self.init()
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited):
                var resourceReader = try reader.readMessage()
                while let resourceField = try resourceReader.nextField() {
                    if resourceField == .init(number: 1, wireType: .lengthDelimited) {
                        var pair = try resourceReader.readMessage()
                        resource.pairs.append(try Attributes.keyValue(&pair))
                    } else {
                        try resourceReader.skip(resourceField.wireType)
                    }
                }
            case (2, .lengthDelimited):
                var scope = try reader.readMessage()
                while let scopeField = try scope.nextField() {
                    if scopeField == .init(number: 2, wireType: .lengthDelimited) {
                        var span = try scope.readMessage()
                        spans.append(try OTLPSpan(&span))
                    } else {
                        try scope.skip(scopeField.wireType)
                    }
                }
            default:
                try reader.skip(field.wireType)
            }
        }
    }
}

extension OTLPSpan {
    fileprivate init(_ reader: inout ProtobufReader) throws(ProtobufError) {
        self.init()
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): traceID = Array(try reader.readBytes())
            case (2, .lengthDelimited): spanID = Array(try reader.readBytes())
            case (4, .lengthDelimited): parentSpanID = Array(try reader.readBytes())
            case (5, .lengthDelimited): name = try reader.readString()
            case (6, .varint): kind = Kind(rawValue: Int(truncatingIfNeeded: try reader.readVarint())) ?? .unspecified
            case (7, .fixed64): startTimeUnixNano = try reader.readFixed64()
            case (8, .fixed64): endTimeUnixNano = try reader.readFixed64()
            case (9, .lengthDelimited):
                var pair = try reader.readMessage()
                attributes.pairs.append(try Attributes.keyValue(&pair))
            case (15, .lengthDelimited):
                var status = try reader.readMessage()
                while let statusField = try status.nextField() {
                    switch (statusField.number, statusField.wireType) {
                    case (2, .lengthDelimited): statusMessage = try status.readString()
                    case (3, .varint): statusCode = Int(truncatingIfNeeded: try status.readVarint())
                    default: try status.skip(statusField.wireType)
                    }
                }
            default:
                try reader.skip(field.wireType)
            }
        }
    }
}

extension Attributes {
    /// A `KeyValue` message.
    fileprivate static func keyValue(_ reader: inout ProtobufReader) throws(ProtobufError) -> (key: String, value: AttributeValue) {
        var key = ""
        var value = AttributeValue.other
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): key = try reader.readString()
            case (2, .lengthDelimited):
                var any = try reader.readMessage()
                value = try AttributeValue(&any)
            default: try reader.skip(field.wireType)
            }
        }
        return (key, value)
    }
}

extension AttributeValue {
    /// An `AnyValue` message; the last member of its oneof wins, as in protobuf.
    fileprivate init(_ reader: inout ProtobufReader) throws(ProtobufError) {
        self = .other
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): self = .string(try reader.readString())
            case (2, .varint): self = .bool(try reader.readVarint() != 0)
            case (3, .varint): self = .int(Int64(bitPattern: try reader.readVarint()))
            case (4, .fixed64): self = .double(try reader.readDouble())
            case (5, .lengthDelimited):
                var array = try reader.readMessage()
                var values: [AttributeValue] = []
                while let element = try array.nextField() {
                    if element == .init(number: 1, wireType: .lengthDelimited) {
                        var any = try array.readMessage()
                        values.append(try AttributeValue(&any))
                    } else {
                        try array.skip(element.wireType)
                    }
                }
                self = .array(values)
            case (7, .lengthDelimited): self = .bytes(Array(try reader.readBytes()))
            default:
                // A kvlist (6) is skipped whole, as are fields a later proto adds.
                try reader.skip(field.wireType)
                if field.number == 6 { self = .other }
            }
        }
    }
}
