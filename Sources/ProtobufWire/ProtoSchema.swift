/// The message types, enums and gRPC methods of one or more descriptor sets
/// (`protoc --descriptor_set_out=FILE.pb --include_imports`), read with
/// ``ProtobufReader`` alone: a `FileDescriptorSet` is itself protobuf.
///
/// Only what naming a message's fields needs is kept: each message's fields
/// (number, name, type, the message or enum type they refer to), each enum's
/// values, and each method's input and output types. Names are fully
/// qualified without the leading dot (`echo.EchoRequest`).
///
/// ```swift
/// var schema = ProtoSchema()
/// try schema.add(descriptorSet: bytes)          // throws ProtoSchemaError
/// schema.method("/echo.Echo/Get")?.inputType     // "echo.EchoRequest"
/// ```
package struct ProtoSchema: Sendable, Equatable {
    /// A message type: its fields by number.
    package struct Message: Sendable, Equatable {
        /// The fully qualified name.
        package var name: String
        /// The fields, by field number.
        package var fields: [Int: Field]
    }

    /// A field of a message type.
    package struct Field: Sendable, Equatable {
        /// The field's name in the `.proto` file.
        package var name: String
        /// The field number.
        package var number: Int
        /// Its declared type.
        package var type: FieldType
        /// The message or enum type it refers to, for ``FieldType/message``,
        /// ``FieldType/group`` and ``FieldType/enumeration``.
        package var typeName: String?
        /// Whether it is `repeated` (so a length-delimited value of a scalar type is packed).
        package var isRepeated: Bool
    }

    /// `FieldDescriptorProto.Type`, by its numbers.
    package enum FieldType: Int, Sendable, Equatable {
        case double = 1, float, int64, uint64, int32, fixed64, fixed32, bool, string, group, message, bytes, uint32
        case enumeration = 14, sfixed32, sfixed64, sint32, sint64
    }

    /// An enum type: its value names by number.
    package struct Enumeration: Sendable, Equatable {
        /// The fully qualified name.
        package var name: String
        /// Value names by number (the first name wins for aliases).
        package var values: [Int64: String]
    }

    /// A gRPC method of a service.
    package struct Method: Sendable, Equatable {
        /// `/package.Service/Method`, as in the call's HTTP/2 path.
        package var path: String
        /// The request message type.
        package var inputType: String
        /// The response message type.
        package var outputType: String
        /// Whether the client sends a stream of requests.
        package var clientStreaming: Bool
        /// Whether the server sends a stream of responses.
        package var serverStreaming: Bool
    }

    /// Message types by fully qualified name.
    package private(set) var messages: [String: Message] = [:]
    /// Enum types by fully qualified name.
    package private(set) var enumerations: [String: Enumeration] = [:]
    /// Methods by ``Method/path``.
    package private(set) var methods: [String: Method] = [:]
    /// The `.proto` files read, by name, in order.
    package private(set) var files: [String] = []

    /// An empty schema: every message is decoded raw.
    package init() {}

    /// Whether no descriptor set was added.
    package var isEmpty: Bool { files.isEmpty }

    /// The method a call's path names (`/echo.Echo/Get`), if the schema has it.
    package func method(_ path: String) -> Method? { methods[path] }

    /// Reads a serialized `FileDescriptorSet` and adds its files. A file
    /// already added (same name) is skipped, so sets that share imports can
    /// be given together.
    /// - Throws: ``ProtoSchemaError`` when the bytes are not a descriptor
    ///   set, hold no file, or refer to a type no file defines.
    package mutating func add(descriptorSet bytes: [UInt8]) throws(ProtoSchemaError) {
        var added = self
        var fileCount = 0
        do {
            var reader = ProtobufReader(bytes)
            while let field = try reader.nextField() {
                guard field == .init(number: 1, wireType: .lengthDelimited) else {
                    try reader.skip(field.wireType)
                    continue
                }
                var file = try reader.readMessage()
                try added.readFile(&file)
                fileCount += 1
            }
        } catch {
            throw .notADescriptorSet(error)
        }
        guard fileCount > 0 else { throw .noFiles }
        try added.checkReferences()
        self = added
    }

    // MARK: Reading

    private mutating func readFile(_ reader: inout ProtobufReader) throws(ProtobufError) {
        var name = "", package = ""
        var messageReaders: [ProtobufReader] = [], enumReaders: [ProtobufReader] = [], serviceReaders: [ProtobufReader] = []
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try reader.readString()
            case (2, .lengthDelimited): package = try reader.readString()
            case (4, .lengthDelimited): messageReaders.append(try reader.readMessage())
            case (5, .lengthDelimited): enumReaders.append(try reader.readMessage())
            case (6, .lengthDelimited): serviceReaders.append(try reader.readMessage())
            default: try reader.skip(field.wireType)
            }
        }
        guard !files.contains(name) else { return }
        files.append(name)
        let scope = package.isEmpty ? "" : package + "."
        for var message in messageReaders { try readMessage(&message, scope: scope) }
        for var enumeration in enumReaders { try readEnum(&enumeration, scope: scope) }
        for var service in serviceReaders { try readService(&service, package: package) }
    }

    private mutating func readMessage(_ reader: inout ProtobufReader, scope: String) throws(ProtobufError) {
        var name = ""
        var fields: [Int: Field] = [:]
        var nested: [ProtobufReader] = [], enums: [ProtobufReader] = []
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try reader.readString()
            case (2, .lengthDelimited):
                var fieldReader = try reader.readMessage()
                if let read = try Self.readField(&fieldReader) { fields[read.number] = read }
            case (3, .lengthDelimited): nested.append(try reader.readMessage())
            case (4, .lengthDelimited): enums.append(try reader.readMessage())
            default: try reader.skip(field.wireType)
            }
        }
        let fullName = scope + name
        messages[fullName] = Message(name: fullName, fields: fields)
        for var message in nested { try readMessage(&message, scope: fullName + ".") }
        for var enumeration in enums { try readEnum(&enumeration, scope: fullName + ".") }
    }

    private static func readField(_ reader: inout ProtobufReader) throws(ProtobufError) -> Field? {
        var name = "", number = 0, label: UInt64 = 1, type: FieldType?, typeName: String?
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try reader.readString()
            case (3, .varint): number = Int(truncatingIfNeeded: try reader.readVarint())
            case (4, .varint): label = try reader.readVarint()
            case (5, .varint): type = FieldType(rawValue: Int(truncatingIfNeeded: try reader.readVarint()))
            case (6, .lengthDelimited): typeName = String(try reader.readString().drop { $0 == "." })
            default: try reader.skip(field.wireType)
            }
        }
        // A type this reader does not know (a newer protoc's) leaves the field raw.
        guard let type, number > 0 else { return nil }
        return Field(name: name, number: number, type: type, typeName: typeName, isRepeated: label == 3)
    }

    private mutating func readEnum(_ reader: inout ProtobufReader, scope: String) throws(ProtobufError) {
        var name = ""
        var values: [Int64: String] = [:]
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try reader.readString()
            case (2, .lengthDelimited):
                var value = try reader.readMessage()
                var valueName = "", number: Int64 = 0
                while let valueField = try value.nextField() {
                    switch (valueField.number, valueField.wireType) {
                    case (1, .lengthDelimited): valueName = try value.readString()
                    case (2, .varint): number = Int64(Int32(truncatingIfNeeded: try value.readVarint()))
                    default: try value.skip(valueField.wireType)
                    }
                }
                if values[number] == nil { values[number] = valueName }
            default: try reader.skip(field.wireType)
            }
        }
        enumerations[scope + name] = Enumeration(name: scope + name, values: values)
    }

    private mutating func readService(_ reader: inout ProtobufReader, package: String) throws(ProtobufError) {
        var name = ""
        var methodReaders: [ProtobufReader] = []
        while let field = try reader.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try reader.readString()
            case (2, .lengthDelimited): methodReaders.append(try reader.readMessage())
            default: try reader.skip(field.wireType)
            }
        }
        let service = package.isEmpty ? name : package + "." + name
        for var method in methodReaders {
            var methodName = "", input = "", output = "", clientStreaming = false, serverStreaming = false
            while let field = try method.nextField() {
                switch (field.number, field.wireType) {
                case (1, .lengthDelimited): methodName = try method.readString()
                case (2, .lengthDelimited): input = String(try method.readString().drop { $0 == "." })
                case (3, .lengthDelimited): output = String(try method.readString().drop { $0 == "." })
                case (5, .varint): clientStreaming = try method.readVarint() != 0
                case (6, .varint): serverStreaming = try method.readVarint() != 0
                default: try method.skip(field.wireType)
                }
            }
            let path = "/\(service)/\(methodName)"
            methods[path] = Method(path: path, inputType: input, outputType: output,
                                   clientStreaming: clientStreaming, serverStreaming: serverStreaming)
        }
    }

    /// Every type a field or method names must be defined: a set written
    /// without `--include_imports` is caught here, not shown half-named.
    private func checkReferences() throws(ProtoSchemaError) {
        for message in messages.values.sorted(by: { $0.name < $1.name }) {
            for field in message.fields.values.sorted(by: { $0.number < $1.number }) {
                guard let typeName = field.typeName else { continue }
                let known = field.type == .enumeration ? enumerations[typeName] != nil : messages[typeName] != nil
                if !known { throw .undefinedType(typeName, usedBy: "\(message.name).\(field.name)") }
            }
        }
        for method in methods.values.sorted(by: { $0.path < $1.path }) {
            for type in [method.inputType, method.outputType] where messages[type] == nil {
                throw .undefinedType(type, usedBy: method.path)
            }
        }
    }
}

/// Why a descriptor set could not be read.
package enum ProtoSchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not protobuf, or not shaped as a `FileDescriptorSet`.
    case notADescriptorSet(ProtobufError)
    /// The set holds no file.
    case noFiles
    /// A field or method names a type that no file of the set defines.
    case undefinedType(String, usedBy: String)

    package var description: String {
        switch self {
        case .notADescriptorSet(let error):
            "not a descriptor set (\(error)); give the file protoc --descriptor_set_out writes, not a .proto"
        case .noFiles:
            "the descriptor set holds no file"
        case let .undefinedType(type, user):
            "\(user) uses \(type), which no file of the set defines; write the set with protoc --include_imports"
        }
    }
}
