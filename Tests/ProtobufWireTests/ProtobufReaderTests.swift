import ProtobufWire
import Testing

@Suite struct ProtobufReaderTests {
    @Test func readsWhatTheWriterWrote() throws {
        var inner = ProtobufWriter()
        inner.writeString("héllo", field: 1)
        var message = ProtobufWriter()
        message.writeVarint(300, field: 1)
        message.writeVarint(UInt64.max, field: 2)
        message.writeFixed64(0x0102_0304_0506_0708, field: 3)
        message.writeMessage(inner, field: 4)
        message.writeBytes([0, 255], field: 5)

        var reader = ProtobufReader(message.bytes)
        #expect(try reader.nextField() == .init(number: 1, wireType: .varint))
        #expect(try reader.readVarint() == 300)
        #expect(try reader.nextField() == .init(number: 2, wireType: .varint))
        #expect(try reader.readVarint() == UInt64.max)
        #expect(try reader.nextField() == .init(number: 3, wireType: .fixed64))
        #expect(try reader.readFixed64() == 0x0102_0304_0506_0708)
        #expect(try reader.nextField() == .init(number: 4, wireType: .lengthDelimited))
        var nested = try reader.readMessage()
        #expect(nested.depth == 1)
        #expect(try nested.nextField() == .init(number: 1, wireType: .lengthDelimited))
        #expect(try nested.readString() == "héllo")
        #expect(try nested.nextField() == nil)
        #expect(try reader.nextField() == .init(number: 5, wireType: .lengthDelimited))
        #expect(Array(try reader.readBytes()) == [0, 255])
        #expect(try reader.nextField() == nil)
    }

    @Test func varintOfThreeHundredIsTheSpecExample() {
        var writer = ProtobufWriter()
        writer.writeVarint(300, field: 1)
        // protobuf.dev's encoding guide: field 1 = 150 is 08 96 01; 300 is 08 ac 02.
        #expect(writer.bytes == [0x08, 0xAC, 0x02])
    }

    @Test func skipsUnknownFieldsOfEveryWireTypeGroupsIncluded() throws {
        // field 1 fixed32, field 2 group holding a varint and a nested group, field 3 varint
        let bytes: [UInt8] = [0x0D, 1, 2, 3, 4, 0x13, 0x08, 0x01, 0x1B, 0x1C, 0x14, 0x18, 0x07]
        var reader = ProtobufReader(bytes)
        try reader.skip(try #require(try reader.nextField()).wireType)
        try reader.skip(try #require(try reader.nextField()).wireType)
        #expect(try reader.nextField() == .init(number: 3, wireType: .varint))
        #expect(try reader.readVarint() == 7)
    }

    @Test func hugeDeclaredLengthIsRefusedWithoutAllocating() {
        // field 1, length 2^63: must not trap on overflow nor allocate.
        var reader = ProtobufReader([0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00])
        #expect(throws: ProtobufError.self) {
            _ = try reader.nextField()
            _ = try reader.readBytes()
        }
    }

    @Test(arguments: [
        ([0x08], ProtobufError.truncated(offset: 1)),
        ([0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], .malformedVarint(offset: 10)),
        ([0x00, 0x00], .invalidFieldNumber(offset: 1)),
        ([0x0E], .invalidWireType(6, offset: 1)),
        ([0x0A, 0x05, 0x01], .lengthBeyondEnd(declared: 5, available: 1, offset: 1)),
        ([0x0C], .unexpectedEndGroup(offset: 1)),
    ] as [([UInt8], ProtobufError)])
    func malformedInputThrowsTheRightError(bytes: [UInt8], expected: ProtobufError) {
        var reader = ProtobufReader(bytes)
        #expect(throws: expected) {
            while let field = try reader.nextField() { try reader.skip(field.wireType) }
        }
    }

    @Test func nestingDeeperThanTheLimitThrows() throws {
        var message = ProtobufWriter()
        for _ in 0..<40 {
            var outer = ProtobufWriter()
            outer.writeMessage(message, field: 1)
            message = outer
        }
        func descend(_ reader: inout ProtobufReader) throws {
            while let field = try reader.nextField() {
                var nested = try reader.readMessage()
                _ = field
                try descend(&nested)
            }
        }
        var reader = ProtobufReader(message.bytes)
        #expect(throws: ProtobufError.tooDeep(maximum: ProtobufReader.defaultMaximumDepth)) { try descend(&reader) }
        // A million open groups cost no stack: the limit stops the skip.
        var groups = ProtobufReader([UInt8](repeating: 0x0B, count: 1_000_000))
        #expect(throws: ProtobufError.tooDeep(maximum: ProtobufReader.defaultMaximumDepth)) {
            try groups.skip(try #require(try groups.nextField()).wireType)
        }
    }

    @Test func invalidUTF8StringIsAnError() {
        var reader = ProtobufReader([0x0A, 0x02, 0xC3, 0x28])
        #expect(throws: ProtobufError.invalidUTF8(offset: 2)) {
            _ = try reader.nextField()
            _ = try reader.readString()
        }
    }

    /// ASCII takes a shorter path than other text; both must read the same
    /// bytes, in the middle of a message as at its end.
    @Test func stringsAreReadExactlyWhetherASCIIOrNot() throws {
        var writer = ProtobufWriter()
        let texts = ["http.request.method", "", "café ☕️ 𝄞", "x", String(repeating: "ü", count: 300)]
        for (index, text) in texts.enumerated() { writer.writeString(text, field: index + 1) }
        var reader = ProtobufReader(writer.bytes)
        var read: [String] = []
        while try reader.nextField() != nil { read.append(try reader.readString()) }
        #expect(read == texts)
        // A bad byte after ASCII, and an overlong encoding of "/", are refused.
        for bad: [UInt8] in [[0x61, 0x62, 0xFF], [0xC0, 0xAF]] {
            var badReader = ProtobufReader([0x0A, UInt8(bad.count)] + bad)
            #expect(throws: ProtobufError.invalidUTF8(offset: 2)) {
                _ = try badReader.nextField()
                _ = try badReader.readString()
            }
        }
    }
}
