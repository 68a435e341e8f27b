#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A closed set's names on the wire, kept as bytes, so that a string value
/// is matched against them where it lies in the payload: no String is made
/// for it, and no `switch` over strings runs (on Linux, `init(rawValue:)`
/// of a String enum does both, for every message (docs/BENCHMARKS.md, "Costs behind the code")).
///
/// ```swift
/// static let wireNames = WireNames<FlowState>()
/// let state = try json.withStringBytes { FlowState.wireNames.value(named: $0) }
/// ```
struct WireNames<Value: CaseIterable & RawRepresentable & Sendable>: Sendable where Value.RawValue == String {
    private let names: [(bytes: [UInt8], value: Value)]

    init() {
        names = Value.allCases.map { (Array($0.rawValue.utf8), $0) }
    }

    /// The value whose name is exactly `text`; nil for any other text.
    func value(named text: UnsafeBufferPointer<UInt8>) -> Value? {
        for (bytes, value) in names where bytes.count == text.count {
            let equal = bytes.withUnsafeBufferPointer { name in
                guard let name = name.baseAddress, let text = text.baseAddress else { return true }
                return memcmp(name, text, bytes.count) == 0
            }
            if equal { return value }
        }
        return nil
    }
}
