/// The value inside an `Optional` (of any depth) held in an `Any`, nil for
/// none: what reflection on corelibs' private fields hands back. The one
/// unwrap helper of the agent; it casts instead of reflecting (`Mirror` of
/// an optional costs a type lookup per call).
func unwrappingOptionals(_ value: Any) -> Any? {
    guard let optional = value as? any AnyOptional else { return value }
    return optional.wrappedAny.flatMap(unwrappingOptionals)
}

/// An `Optional` of any wrapped type.
private protocol AnyOptional {
    var wrappedAny: Any? { get }
}

extension Optional: AnyOptional {
    fileprivate var wrappedAny: Any? { self.map { $0 as Any } }
}
