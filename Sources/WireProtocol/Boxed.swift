import Foundation

/// An optional kept behind one pointer, for the rarely present parts of a
/// flow (its gRPC call, what rules changed, its error).
///
/// A ``NetworkLog`` is moved whole at every hand-over (decoder, inbox,
/// store, writer) and the store keeps one a flow. Inline, a gRPC call took
/// 88 bytes of every flow and the rules' changes 144 whether or not the flow
/// had any; behind a pointer each takes 8, and nothing is allocated while
/// they are nil. Reading gives the value; writing stores a new box; a change
/// in place (`log.grpc?.messages.append(m)`) takes the value out first, so
/// an array in it stays uniquely referenced and grows in place.
///
/// It codes as the optional it holds: the key is left out when nil.
///
/// ```swift
/// struct Flow: Codable {
///     @Boxed var grpc: GRPCCall?
/// }
/// ```
@propertyWrapper
public enum Boxed<Wrapped: Sendable>: Sendable {
    case none
    indirect case some(Wrapped)

    /// Boxes `wrappedValue`; nil allocates nothing.
    public init(wrappedValue: Wrapped?) {
        self = wrappedValue.map { .some($0) } ?? .none
    }

    /// The value in the box, or nil.
    public var wrappedValue: Wrapped? {
        get {
            if case .some(let value) = self { value } else { nil }
        }
        set {
            self = Boxed(wrappedValue: newValue)
        }
        _modify {
            var value = wrappedValue
            self = .none
            defer { self = Boxed(wrappedValue: value) }
            yield &value
        }
    }
}

extension Boxed: Equatable where Wrapped: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.wrappedValue == rhs.wrappedValue }
}

extension Boxed: Codable where Wrapped: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(wrappedValue: container.decodeNil() ? nil : try container.decode(Wrapped.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value = wrappedValue { try container.encode(value) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// A missing key is a nil ``Boxed``, as it is a nil optional.
    public func decode<Wrapped: Decodable & Sendable>(_ type: Boxed<Wrapped>.Type, forKey key: Key) throws -> Boxed<Wrapped> {
        Boxed(wrappedValue: try decodeIfPresent(Wrapped.self, forKey: key))
    }
}

extension KeyedEncodingContainer {
    /// A nil ``Boxed`` leaves its key out, as a nil optional does.
    public mutating func encode<Wrapped: Encodable & Sendable>(_ value: Boxed<Wrapped>, forKey key: Key) throws {
        try encodeIfPresent(value.wrappedValue, forKey: key)
    }
}
