import Foundation

// Digests travel as 16 hex digits: JSON numbers are doubles to many
// readers, which cannot hold 64 bits.

extension ServerReplayOptions: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("ignoreParams", ignoreParams.map(JSONString.init)); $0.field("ignoreHost", ignoreHost)
            $0.field("ignoreContent", ignoreContent); $0.field("useHeaders", useHeaders.map(JSONString.init))
            $0.field("extra", extra.rawValue); $0.field("reuse", reuse); $0.field("timing", timing)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init()
        ignoreParams = try json.optionalArray("ignoreParams", of: JSONString.self)?.map(\.text) ?? []
        ignoreHost = try json.optionalBool("ignoreHost") ?? false
        ignoreContent = try json.optionalBool("ignoreContent") ?? false
        useHeaders = try json.optionalArray("useHeaders", of: JSONString.self)?.map(\.text) ?? []
        let extraName = try json.optionalString("extra") ?? Extra.forward.rawValue
        guard let extra = Extra(rawValue: extraName) else { throw JSONFieldError(problem: .invalid("unknown extra '\(extraName)'")) }
        self.extra = extra
        reuse = try json.optionalBool("reuse") ?? false
        timing = try json.optionalBool("timing") ?? false
    }
}

extension ServerReplayEntry: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("key", Self.hex(key.withBody)); $0.field("keyWithoutBody", Self.hex(key.withoutBody))
            $0.field("recordedID", recordedID); $0.field("response", response); $0.field("wait", wait)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        guard let withBody = UInt64(try json.string("key"), radix: 16),
              let withoutBody = UInt64(try json.string("keyWithoutBody"), radix: 16)
        else { throw JSONFieldError(problem: .invalid("a server replay key is 16 hex digits")) }
        self.init(key: ServerReplayKey(withBody: withBody, withoutBody: withoutBody),
                  recordedID: try json.decodeIfPresent("recordedID"),
                  response: try json.decode("response"), wait: try json.optionalDouble("wait"))
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension ServerReplayBook: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("options", options); $0.field("entries", entries); $0.field("continues", continues)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(options: try json.decode("options"), entries: try json.array("entries"),
                  continues: try json.optionalBool("continues") ?? false)
    }
}

extension ServerReplayMark: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("recordedID", recordedID); $0.field("left", left); $0.field("extra", extra); $0.field("waited", waited)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(recordedID: try json.decodeIfPresent("recordedID"), left: try json.int("left"),
                  extra: try json.optionalString("extra"), waited: try json.optionalDouble("waited"))
    }
}
