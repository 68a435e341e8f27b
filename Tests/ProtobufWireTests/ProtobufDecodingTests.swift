import Foundation
import ProtobufWire
import TestSupport
import XCTest

/// The protobuf decoder and the descriptor-set reader, on bytes protoc made
/// (`Tests/Protos/decoder`, see echo.proto there for how).
final class ProtobufDecodingTests: XCTestCase {
    private func lines(_ bytes: [UInt8], type: String? = nil, schema: ProtoSchema? = nil) throws -> [String] {
        try DecodedMessage(bytes: bytes, typeName: type, schema: schema).lines(schema: schema).map {
            String(repeating: "  ", count: $0.depth) + ($0.label.isEmpty ? "" : $0.label + ": ") + $0.value + ($0.note.isEmpty ? "" : "  # " + $0.note)
        }
    }

    private func schema() throws -> ProtoSchema {
        var schema = ProtoSchema()
        try schema.add(descriptorSet: try ProtoFixtures.decoderBytes("echo.pb"))
        return schema
    }

    func testRawDecodingShowsNumbersWireReadingsNestedMessagesTextAndHex() throws {
        XCTAssertEqual(try lines(try ProtoFixtures.decoderBytes("request.bin")), [
            #"1: "hello, gRPC"  # string"#,
            "2: 18446744073709551614  # varint · int64 -2 · sint 9223372036854775807",
            "3: 2  # varint · sint 1",
            "4: {  # message",
            "  1: 5  # varint · sint -3",
            "  2: 300  # varint · sint 150",
            "}",
            "5: 01 02 ac 02  # bytes, 4",
            "6: 00 ff 10  # bytes, 3",
            "7: 4602678819172646912  # fixed64 · double 0.5 · int 4602678819172646912",
            "8: 1  # varint · sint -1",
        ])
    }

    func testTheSchemaNamesFieldsTypesEnumValuesAndPackedRepeats() throws {
        let schema = try schema()
        XCTAssertEqual(try lines(try ProtoFixtures.decoderBytes("request.bin"), type: "echo.EchoRequest", schema: schema), [
            #"text (1): "hello, gRPC"  # string"#,
            "count (2): -2  # int32",
            "mood (3): GRUMPY (2)  # echo.Mood",
            "origin (4): {  # echo.Point",
            "  x (1): -3  # sint32",
            "  y (2): 150  # sint64",
            "}",
            "ids (5): [1, 2, 300]  # packed repeated int32",
            "blob (6): 00 ff 10  # bytes",
            "ratio (7): 0.5  # double",
            "loud (8): true  # bool",
        ])
        XCTAssertEqual(try lines(try ProtoFixtures.decoderBytes("response.bin"), type: "echo.EchoResponse", schema: schema), [
            #"text (1): "hello, gRPC"  # string"#,
            "path (2): {  # echo.Point",
            "  x (1): 1  # sint32",
            "  y (2): -1  # sint64",
            "}",
            "path (2): {  # echo.Point",
            "  x (1): 2  # sint32",
            "  y (2): -2  # sint64",
            "}",
            "checksum (3): 3735928559  # fixed32",
            "mood (4): HAPPY (1)  # echo.Mood",
        ])
    }

    func testTheDescriptorSetGivesEachMethodItsTypesAndShape() throws {
        let schema = try schema()
        XCTAssertEqual(schema.files, ["echo.proto"])
        XCTAssertEqual(Set(schema.methods.keys), ["/echo.Echo/Get", "/echo.Echo/Collect", "/echo.Echo/Expand", "/echo.Echo/Update"])
        let update = try XCTUnwrap(schema.method("/echo.Echo/Update"))
        XCTAssertEqual(update.inputType, "echo.EchoRequest")
        XCTAssertEqual(update.outputType, "echo.EchoResponse")
        XCTAssertTrue(update.clientStreaming && update.serverStreaming)
        XCTAssertEqual(schema.method("/echo.Echo/Expand").map { [$0.clientStreaming, $0.serverStreaming] }, [false, true])
        XCTAssertEqual(schema.enumerations["echo.Mood"]?.values, [0: "MOOD_UNSPECIFIED", 1: "HAPPY", 2: "GRUMPY"])
        XCTAssertEqual(schema.messages["echo.EchoRequest"]?.fields[5]?.isRepeated, true)
    }

    func testAddingTheSameSetTwiceKeepsOneCopyOfEachFile() throws {
        var schema = try schema()
        try schema.add(descriptorSet: try ProtoFixtures.decoderBytes("echo.pb"))
        XCTAssertEqual(schema.files, ["echo.proto"])
    }

    func testAnEmptySetAndATruncatedSetAreRefused() throws {
        var schema = ProtoSchema()
        XCTAssertThrowsError(try schema.add(descriptorSet: [])) { XCTAssertEqual($0 as? ProtoSchemaError, .noFiles) }
        let set = try ProtoFixtures.decoderBytes("echo.pb")
        XCTAssertThrowsError(try schema.add(descriptorSet: Array(set.dropLast(7)))) { error in
            guard case .notADescriptorSet? = error as? ProtoSchemaError else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(schema.isEmpty, "a failed add leaves the schema as it was")
    }

    func testASetWrittenWithoutItsImportsIsRefusedNamingTheMissingType() {
        var field = ProtobufWriter()
        field.writeString("when", field: 1)
        field.writeVarint(1, field: 3)
        field.writeVarint(1, field: 4)
        field.writeVarint(11, field: 5)
        field.writeString(".google.protobuf.Timestamp", field: 6)
        var message = ProtobufWriter()
        message.writeString("Event", field: 1)
        message.writeMessage(field, field: 2)
        var file = ProtobufWriter()
        file.writeString("event.proto", field: 1)
        file.writeString("app", field: 2)
        file.writeMessage(message, field: 4)
        var set = ProtobufWriter()
        set.writeMessage(file, field: 1)
        var schema = ProtoSchema()
        XCTAssertThrowsError(try schema.add(descriptorSet: set.bytes)) { error in
            XCTAssertEqual(error as? ProtoSchemaError, .undefinedType("google.protobuf.Timestamp", usedBy: "app.Event.when"))
            XCTAssertTrue("\(error)".contains("--include_imports"))
        }
    }

    func testBytesThatAreNotProtobufThrowWithWhere() {
        // Field 1, length-delimited, declaring 100 bytes where 2 remain.
        XCTAssertThrowsError(try DecodedMessage(bytes: [0x0A, 0x64, 0x01, 0x02])) { error in
            XCTAssertEqual(error as? ProtobufError, .lengthBeyondEnd(declared: 100, available: 2, offset: 1))
        }
        XCTAssertThrowsError(try DecodedMessage(bytes: [0x0F])) { error in
            XCTAssertEqual(error as? ProtobufError, .invalidWireType(7, offset: 1))
        }
    }

    func testNestingPastTheDepthLimitIsShownAsBytesNotRecursedInto() throws {
        // 10,000 messages each holding the next as field 1.
        var bytes: [UInt8] = [0x08, 0x01]
        for _ in 0..<10_000 {
            var writer = ProtobufWriter()
            writer.writeBytes(bytes, field: 1)
            bytes = writer.bytes
        }
        let message = try DecodedMessage(bytes: bytes)
        var depth = 0
        var value = message.fields.first?.value
        while case .message(let inner)? = value {
            depth += 1
            value = inner.fields.first?.value
        }
        XCTAssertEqual(depth, ProtobufReader.defaultMaximumDepth)
        guard case .bytes? = value else { return XCTFail("the level past the limit is bytes, got \(String(describing: value))") }
    }

    func testGroupsAreDecodedAndAnUnclosedGroupIsAnError() throws {
        // Field 2 group { field 1 varint 7 }, then field 3 varint 1.
        XCTAssertEqual(try lines([0x13, 0x08, 0x07, 0x14, 0x18, 0x01]), ["2: {  # group", "  1: 7  # varint · sint -4", "}", "3: 1  # varint · sint -1"])
        XCTAssertThrowsError(try DecodedMessage(bytes: [0x13, 0x08, 0x07]))
    }

    func testTextIsPreferredToAMessageOnlyWhenItIsPrintable() throws {
        // "hi" parses as field 13 varint 105 too; printable text wins.
        XCTAssertEqual(try lines([0x0A, 0x02, 0x68, 0x69]), [#"1: "hi"  # string"#])
        // A control character makes it a message when it parses as one.
        XCTAssertEqual(try lines([0x0A, 0x02, 0x08, 0x01]), ["1: {  # message", "  1: 1  # varint · sint -1", "}"])
        XCTAssertEqual(try lines([0x0A, 0x03, 0x61, 0x0A, 0x62]), [#"1: "a\nb"  # string"#])
    }

    func testZigzag() {
        XCTAssertEqual([0, 1, 2, 3, 4294967294, UInt64.max].map(DecodedMessage.zigzag), [0, -1, 1, -2, 2147483647, Int64.min])
    }
}
