import Foundation

// The JSON mapping of the rules and what they changed (Message+WireJSON.swift
// says why it is the model's one codec).

extension FlowChanges: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("rules", rules.map(JSONString.init)); $0.field("originalURL", originalURL)
            if let originalHeaders { $0.field("originalHeaders", originalHeaders) }
            $0.field("mockedFrom", mockedFrom); $0.field("replayOf", replayOf)
            if let edited { $0.field("edited", edited) }
            $0.field("originalResponse", originalResponse)
            $0.field("originalMethod", originalMethod); $0.field("originalBody", originalBody)
            $0.field("serverReplay", serverReplay)
            if composed == true { $0.field("composed", true) }
            $0.field("condition", condition)
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        self.init(rules: try json.array("rules", of: JSONString.self).map(\.text),
                  originalURL: try json.optionalString("originalURL"),
                  originalHeaders: try json.optionalArray("originalHeaders"),
                  mockedFrom: try json.optionalString("mockedFrom"), replayOf: try json.decodeIfPresent("replayOf"),
                  edited: try json.optionalArray("edited"), originalResponse: try json.decodeIfPresent("originalResponse"),
                  originalMethod: try json.optionalString("originalMethod"), originalBody: try json.decodeIfPresent("originalBody"),
                  serverReplay: try json.decodeIfPresent("serverReplay"),
                  composed: try json.optionalBool("composed") == true ? true : nil,
                  condition: try json.decodeIfPresent("condition"))
    }
}

extension TrafficRule: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object {
            $0.field("kind", kind.rawValue); $0.field("filter", filter); $0.field("pattern", pattern)
            $0.field("replacement", replacement)
            if !files.isEmpty { $0.field("files", files) }
        }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        let name = try json.string("kind")
        guard let kind = Kind(rawValue: name) else { throw JSONFieldError(problem: .invalid("unknown rule kind '\(name)'")) }
        self.init(kind: kind, filter: try json.optionalString("filter"), pattern: try json.string("pattern"),
                  replacement: try json.string("replacement"), files: try json.optionalArray("files") ?? [])
    }
}

extension TrafficRule.LocalFile: JSONWritable, JSONReadable {
    func write(to writer: inout JSONWriter) {
        writer.object { $0.field("path", path); $0.field("contentType", contentType); $0.field("base64", base64: data) }
    }
    init(json: JSONReader) throws(JSONFieldError) {
        let encoded = try json.required("base64")
        guard let data = Data(base64Encoded: try encoded.string) else { throw encoded.mismatch("base64") }
        self.init(path: try json.string("path"), contentType: try json.string("contentType"), data: data)
    }
}
