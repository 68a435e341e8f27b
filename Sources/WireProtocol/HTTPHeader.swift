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
        // On the strings' own bytes: zipping the two UTF8Views stepped each
        // through its generic iterator, and the agent compares names for
        // every header it redacts or splits (docs/BENCHMARKS.md, "Costs behind the code").
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for index in 0 ..< x.count {
                    let (p, q) = (x[index], y[index])
                    guard p == q || (p | 0x20 == q | 0x20 && (p | 0x20) >= 0x61 && (p | 0x20) <= 0x7A) else { return false }
                }
                return true
            }
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
