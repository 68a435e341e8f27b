/// One HTTP header field, as it appeared on the wire.
///
/// Headers are kept as an ordered list of these rather than a dictionary so
/// that duplicates (`Set-Cookie`, `Vary`) and their order survive capture,
/// transport and export.
public struct HTTPHeader: Sendable, Hashable {
    /// The field name, with the case it was sent with.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether two field names are equal ignoring ASCII case: field names
    /// are ASCII tokens, so this is the whole comparison, made on the bytes
    /// without a lowercased copy (Foundation's `caseInsensitiveCompare`
    /// went through NSString and cost the agent thousands of instructions
    /// a request; docs/BENCHMARKS.md, "Costs behind the code").
    ///
    /// ```swift
    /// HTTPHeader.namesMatch("content-length", "Content-Length")   // true
    /// ```
    package static func namesMatch(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
        }
    }
}

extension Array where Element == HTTPHeader {
    /// The values of every field named `name`, compared case-insensitively, in order.
    public func values(for name: String) -> [String] {
        filter { HTTPHeader.namesMatch($0.name, name) }.map(\.value)
    }

    /// The first value of the field named `name` (case-insensitive), if any.
    public func first(_ name: String) -> String? {
        first { HTTPHeader.namesMatch($0.name, name) }?.value
    }
}
