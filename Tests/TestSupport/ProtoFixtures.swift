import Foundation

/// The protobuf files the tests share, in `Tests/Protos`: the gRPC capture
/// tests' service (`echo.proto`, its descriptor set `echo.pb`) and, in
/// `decoder/`, the schema and message bytes protoc made for the viewer's
/// decoder (how: `decoder/echo.proto`'s header).
///
/// ```swift
/// let set = ProtoFixtures.directory.appendingPathComponent("echo.pb").path
/// let request = try ProtoFixtures.decoderBytes("request.bin")
/// ```
public enum ProtoFixtures {
    /// `Tests/Protos`.
    public static var directory: URL {
        // This file is Tests/TestSupport/ProtoFixtures.swift.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Protos")
    }

    /// `Tests/Protos/decoder`.
    public static var decoder: URL { directory.appendingPathComponent("decoder") }

    /// The bytes of `decoder/<name>`.
    public static func decoderBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: decoder.appendingPathComponent(name)))
    }
}
