@_spi(Reflection) import Swift

/// A stored property of a class, found once by name in the runtime's field
/// metadata and then read (or written) straight in an instance's memory.
///
/// `Mirror` boxes every stored property it walks past, and a
/// `URLSessionTask` has many (docs/BENCHMARKS.md, "Costs behind the code"); the agent reads a task's
/// internals on the work queue that every session shares. The field metadata
/// gives each property's offset and type without touching any value, so a
/// read is one load and one retain.
///
/// Lookups fail soft: a field that is missing, renamed or of an unexpected
/// type yields nil, never a wrong read.
struct StoredField: @unchecked Sendable {
    /// Byte offset of the property in an instance.
    let offset: Int
    /// The property's declared type.
    let type: Any.Type

    /// The stored property `name` declared by `owner` or one of its
    /// superclasses, or nil when the runtime has no such field.
    init?(_ name: String, in owner: AnyClass) {
        var found: (offset: Int, type: Any.Type)?
        // `.classType` (raw value 1), spelled out: the stdlib declares the
        // option as a mutable static, which Swift 6 refuses to read.
        _ = _forEachField(of: owner, options: _EachFieldOptions(rawValue: 1)) { fieldName, offset, type, _ in
            guard String(cString: fieldName) == name else { return true }
            found = (offset, type)
            return false
        }
        guard let found else { return nil }
        offset = found.offset
        type = found.type
    }

    /// The property's value in `object`, boxed. `object` must be an
    /// instance of the class the field was looked up in (or a subclass).
    func value(in object: AnyObject) -> Any {
        func load<Value>(_: Value.Type) -> Any { self.load(Value.self, from: object) }
        return _openExistential(type, do: load)
    }

    /// The property's value in `object` as `Value`, or nil when the field is
    /// not of exactly that type.
    func value<Value>(in object: AnyObject, as _: Value.Type) -> Value? {
        guard type == Value.self else { return nil }
        return load(Value.self, from: object)
    }

    /// The property's value in `object` when the property holds a class
    /// instance (not an optional or existential one), or nil.
    func object(in object: AnyObject) -> AnyObject? {
        guard type is AnyClass else { return nil }
        return load(AnyObject.self, from: object)
    }

    /// The property's value in `object` when the property holds an optional
    /// class instance (`Optional<SomeClass>`, implicitly unwrapped or not),
    /// or nil.
    func optionalObject(in object: AnyObject) -> AnyObject? {
        guard let optional = type as? any OptionalClassReference.Type, optional.wrapsClass else { return nil }
        return load(Optional<AnyObject>.self, from: object)
    }

    /// The property's value in `object` when it is a raw pointer, optional or not.
    func rawPointer(in object: AnyObject) -> UnsafeMutableRawPointer? {
        guard type == UnsafeMutableRawPointer.self || type == Optional<UnsafeMutableRawPointer>.self else { return nil }
        return load(Optional<UnsafeMutableRawPointer>.self, from: object)
    }

    /// Assigns `value` to the property in `object` when the property is of
    /// exactly type `Value` (the old value released, the new one retained,
    /// as an assignment does); returns whether it did. Property observers
    /// do not run: this is the raw stored field.
    @discardableResult
    func store<Value>(_ value: Value, in object: AnyObject) -> Bool {
        guard type == Value.self else { return false }
        withExtendedLifetime(object) {
            (UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + offset)
                .assumingMemoryBound(to: Value.self).pointee = value
        }
        return true
    }

    private func load<Value>(_: Value.Type, from object: AnyObject) -> Value {
        withExtendedLifetime(object) {
            UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
                .load(fromByteOffset: offset, as: Value.self)
        }
    }
}

/// `Optional<Wrapped>` seen as a type: whether it wraps a class reference
/// (then it is laid out as one nullable pointer, like `Optional<AnyObject>`).
protocol OptionalClassReference {
    static var wrapsClass: Bool { get }
    /// The wrapped class, when it is one.
    static var wrappedClass: AnyClass? { get }
}

extension Optional: OptionalClassReference {
    static var wrapsClass: Bool { Wrapped.self is AnyClass }
    static var wrappedClass: AnyClass? { Wrapped.self as? AnyClass }
}
