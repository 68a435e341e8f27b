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
/// On the wire it is the optional it holds: WireJSON leaves the member out
/// when nil.
///
/// ```swift
/// struct Flow {
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
