import Foundation
import WireProtocol

/// The groups of one dimension of the insights, found by name, or by an
/// ASCII name's UTF-8 bytes: a flow's name is put together as bytes, and a
/// known group is found from them without making a string. The bytes only
/// lead to a group the name found first, so groups stay one a name as
/// `String` compares them (`K` and the Kelvin sign are one name).
///
/// ```swift
/// var table = InsightsGroupTable()
/// table.add(log, name: "checkout") { "~app \"^checkout$\"" }
/// table.groups.first?.count   // 1
/// ```
struct InsightsGroupTable: Sendable {
    /// The groups, in the order they were first seen.
    private(set) var groups: [InsightsGroup] = []
    private var byName: [String: Int] = [:]
    private var byBytes: [Bytes: Int] = [:]

    /// UTF-8 bytes hashed as one run (an array's own hashing takes them one by one).
    private struct Bytes: Hashable, Sendable {
        let bytes: ArraySlice<UInt8>
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
        static func == (left: Bytes, right: Bytes) -> Bool {
            left.bytes.count == right.bytes.count && left.bytes.withUnsafeBytes { l in
                right.bytes.withUnsafeBytes { r in l.count == 0 || memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 }
            }
        }
    }

    /// Counts a flow into the group of ASCII name `bytes`; `name` makes the
    /// name (the bytes as a string) and `filter` its filter, when the bytes
    /// are new.
    mutating func add(_ log: NetworkLog, asciiName bytes: ArraySlice<UInt8>, name: () -> String, filter: (String) -> String) {
        if let index = byBytes[Bytes(bytes: bytes)] {
            groups[index].add(log)
            return
        }
        let index = add(log, name: name(), filter: filter)
        byBytes[Bytes(bytes: ArraySlice(Array(bytes)))] = index
    }

    /// Counts a flow into the group named `name`; `filter` makes its filter when new.
    @discardableResult
    mutating func add(_ log: NetworkLog, name: String, filter: (String) -> String) -> Int {
        if let index = byName[name] {
            groups[index].add(log)
            return index
        }
        groups.append(InsightsGroup(name: name, filter: filter(name)))
        groups[groups.count - 1].add(log)
        byName[name] = groups.count - 1
        return groups.count - 1
    }

    /// Merges the durations of the last batch into each group's sorted ones.
    mutating func settle() {
        for index in groups.indices where !groups[index].durations.isSettled {
            groups[index].durations.settle()
        }
    }
}
