import ProtobufWire

extension TraceExport {
    /// The export as an `ExportTraceServiceRequest` in protobuf, with the
    /// fields netinspect reads: for the benchmark, the fuzz seeds and tests
    /// that need a sender without Python.
    ///
    /// ```swift
    /// let body = TraceExport(resourceSpans: [ResourceSpans(spans: [span])]).protobufBytes()
    /// ```
    package func protobufBytes() -> [UInt8] {
        var request = ProtobufWriter()
        for group in resourceSpans {
            var resource = ProtobufWriter()
            group.resource.write(into: &resource, field: 1)
            var scope = ProtobufWriter()
            for span in group.spans { scope.writeMessage(span.protobuf, field: 2) }
            var message = ProtobufWriter()
            message.writeMessage(resource, field: 1)
            message.writeMessage(scope, field: 2)
            request.writeMessage(message, field: 1)
        }
        return request.bytes
    }
}

extension OTLPSpan {
    fileprivate var protobuf: ProtobufWriter {
        var message = ProtobufWriter()
        message.writeBytes(traceID, field: 1)
        message.writeBytes(spanID, field: 2)
        if !parentSpanID.isEmpty { message.writeBytes(parentSpanID, field: 4) }
        message.writeString(name, field: 5)
        message.writeVarint(UInt64(kind.rawValue), field: 6)
        message.writeFixed64(startTimeUnixNano, field: 7)
        message.writeFixed64(endTimeUnixNano, field: 8)
        attributes.write(into: &message, field: 9)
        if statusCode != 0 || !statusMessage.isEmpty {
            var status = ProtobufWriter()
            status.writeString(statusMessage, field: 2)
            status.writeVarint(UInt64(bitPattern: Int64(statusCode)), field: 3)
            message.writeMessage(status, field: 15)
        }
        return message
    }
}

extension Attributes {
    fileprivate func write(into message: inout ProtobufWriter, field: Int) {
        for pair in pairs {
            var keyValue = ProtobufWriter()
            keyValue.writeString(pair.key, field: 1)
            keyValue.writeMessage(pair.value.protobuf, field: 2)
            message.writeMessage(keyValue, field: field)
        }
    }
}

extension AttributeValue {
    fileprivate var protobuf: ProtobufWriter {
        var any = ProtobufWriter()
        switch self {
        case .string(let string): any.writeString(string, field: 1)
        case .bool(let bool): any.writeVarint(bool ? 1 : 0, field: 2)
        case .int(let int): any.writeVarint(UInt64(bitPattern: int), field: 3)
        case .double(let double): any.writeFixed64(double.bitPattern, field: 4)
        case .array(let values):
            var array = ProtobufWriter()
            for value in values { array.writeMessage(value.protobuf, field: 1) }
            any.writeMessage(array, field: 5)
        case .bytes(let bytes): any.writeBytes(bytes, field: 7)
        case .other: break
        }
        return any
    }
}
