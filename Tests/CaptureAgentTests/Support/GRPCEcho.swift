// Built with the GRPC trait (on by default; Package.swift).
#if GRPC
@testable import CaptureAgent
import Foundation
import GRPCCore
import ProtobufWire
import TestSupport

// The service of Tests/Protos/echo.proto, written by hand: its messages are
// real protobuf bytes (encoded and read with ProtobufWire), so the viewer's
// raw decoder and descriptor set see what protoc-generated code would send.

/// `netinspect.test.EchoRequest`: `text = 1`, `count = 2`.
struct EchoRequest: Sendable, Equatable, ProtobufMessage {
    var text = ""
    var count: Int32 = 0

    var protobuf: [UInt8] {
        var writer = ProtobufWriter()
        if !text.isEmpty { writer.writeString(text, field: 1) }
        if count != 0 { writer.writeVarint(UInt64(bitPattern: Int64(count)), field: 2) }
        return writer.bytes
    }

    init(text: String = "", count: Int32 = 0) {
        self.text = text
        self.count = count
    }

    init(protobuf bytes: [UInt8]) throws {
        var reader = ProtobufReader(bytes)
        while let field = try reader.nextField() {
            switch field.number {
            case 1: text = try reader.readString()
            case 2: count = Int32(truncatingIfNeeded: try reader.readVarint())
            default: try reader.skip(field.wireType)
            }
        }
    }
}

/// `netinspect.test.EchoResponse`: `text = 1`, `index = 2`.
struct EchoResponse: Sendable, Equatable, ProtobufMessage {
    var text = ""
    var index: Int32 = 0

    var protobuf: [UInt8] {
        var writer = ProtobufWriter()
        if !text.isEmpty { writer.writeString(text, field: 1) }
        if index != 0 { writer.writeVarint(UInt64(bitPattern: Int64(index)), field: 2) }
        return writer.bytes
    }

    init(text: String = "", index: Int32 = 0) {
        self.text = text
        self.index = index
    }

    init(protobuf bytes: [UInt8]) throws {
        var reader = ProtobufReader(bytes)
        while let field = try reader.nextField() {
            switch field.number {
            case 1: text = try reader.readString()
            case 2: index = Int32(truncatingIfNeeded: try reader.readVarint())
            default: try reader.skip(field.wireType)
            }
        }
    }
}

protocol ProtobufMessage: Sendable {
    var protobuf: [UInt8] { get }
    init(protobuf bytes: [UInt8]) throws
}

/// Serializes and reads a message as its protobuf bytes.
struct ProtobufCoder<Message: ProtobufMessage>: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        Bytes(message.protobuf)
    }

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        try serializedMessageBytes.withUnsafeBytes { try Message(protobuf: Array($0)) }
    }
}

enum Echo {
    static let service = "netinspect.test.Echo"
    static let get = MethodDescriptor(fullyQualifiedService: service, method: "Get", type: .unary)
    static let collect = MethodDescriptor(fullyQualifiedService: service, method: "Collect", type: .clientStreaming)
    static let expand = MethodDescriptor(fullyQualifiedService: service, method: "Expand", type: .serverStreaming)
    static let chat = MethodDescriptor(fullyQualifiedService: service, method: "Chat", type: .bidirectionalStreaming)
    static let requests = ProtobufCoder<EchoRequest>()
    static let responses = ProtobufCoder<EchoResponse>()
}

/// What the service saw of one call: compared with and without capture.
struct ServedCall: Equatable, Sendable {
    var method: String
    /// The request metadata, except `grpc-timeout` (it says how much of the
    /// deadline was left) and `:authority` (the server's port): they differ
    /// from run to run.
    var metadata: [String]
    var messages: [EchoRequest]
}

/// The test service. `Get` answers `fail` with NOT_FOUND, and takes a
/// second over `slow` (for deadlines and cancellations); `relay` makes a
/// call of its own through `relay` first.
final class EchoService: RegistrableRPCService, Sendable {
    private let served = Locked<[ServedCall]>([])
    let relay: (@Sendable () async throws -> Void)?

    init(relay: (@Sendable () async throws -> Void)? = nil) {
        self.relay = relay
    }

    var calls: [ServedCall] { served.withLock { $0 } }

    private func record(_ method: MethodDescriptor, _ metadata: Metadata, _ messages: [EchoRequest]) {
        let fields = metadata.filter { $0.key != "grpc-timeout" && $0.key != ":authority" }.map { "\($0.key): \($0.value.encoded())" }
        served.withLock { $0.append(ServedCall(method: method.method, metadata: fields, messages: messages)) }
    }

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: Echo.get, deserializer: Echo.requests, serializer: Echo.responses) { request, context in
            var messages: [EchoRequest] = []
            for try await message in request.messages { messages.append(message) }
            self.record(Echo.get, request.metadata, messages)
            let text = messages.first?.text ?? ""
            switch text {
            case "fail":
                throw RPCError(code: .notFound, message: "no such echo", metadata: ["x-reason": "test"])
            case "slow":
                for _ in 0..<50 where !context.cancellation.isCancelled { try? await pace(.milliseconds(20)) }
            case "relay":
                try await self.relay?()
            default: break
            }
            var answer: Metadata = ["x-served": "1"]
            for value in request.metadata[stringValues: "x-echo"] { answer.addString(value, forKey: "x-echo") }
            return StreamingServerResponse(metadata: answer) { writer in
                try await writer.write(EchoResponse(text: "echo: \(text)", index: 1))
                return ["x-trailer": "done"]
            }
        }
        router.registerHandler(forMethod: Echo.collect, deserializer: Echo.requests, serializer: Echo.responses) { request, _ in
            var received: [EchoRequest] = []
            for try await message in request.messages { received.append(message) }
            self.record(Echo.collect, request.metadata, received)
            let messages = received
            return StreamingServerResponse { writer in
                try await writer.write(EchoResponse(text: messages.map(\.text).joined(separator: "+"), index: Int32(messages.count)))
                return [:]
            }
        }
        router.registerHandler(forMethod: Echo.expand, deserializer: Echo.requests, serializer: Echo.responses) { request, _ in
            var messages: [EchoRequest] = []
            for try await message in request.messages { messages.append(message) }
            self.record(Echo.expand, request.metadata, messages)
            let first = messages.first ?? EchoRequest()
            return StreamingServerResponse { writer in
                for index in 0..<first.count { try await writer.write(EchoResponse(text: "\(first.text)#\(index)", index: index)) }
                return [:]
            }
        }
        router.registerHandler(forMethod: Echo.chat, deserializer: Echo.requests, serializer: Echo.responses) { request, _ in
            StreamingServerResponse { writer in
                var messages: [EchoRequest] = []
                for try await message in request.messages {
                    messages.append(message)
                    try await writer.write(EchoResponse(text: message.text.uppercased(), index: Int32(messages.count)))
                }
                self.record(Echo.chat, request.metadata, messages)
                return [:]
            }
        }
    }
}
#endif
