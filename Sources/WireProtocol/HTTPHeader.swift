/// One HTTP header field, as it appeared on the wire.
///
/// Headers are kept as an ordered list of these rather than a dictionary so
/// that duplicates (`Set-Cookie`, `Vary`) and their order survive capture,
/// transport and export.
public struct HTTPHeader: Codable, Sendable, Hashable {
    /// The field name, with the case it was sent with.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPHeader {
    /// The values of every field named `name`, compared case-insensitively, in order.
    public func values(for name: String) -> [String] {
        filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The first value of the field named `name` (case-insensitive), if any.
    public func first(_ name: String) -> String? {
        first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
