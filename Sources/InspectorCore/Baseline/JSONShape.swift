import Foundation
import WireProtocol

/// The shape of a route's JSON bodies, inferred over every sample: each key
/// path (a JSON pointer, an array's elements as `*`: `/users/*/name`), the
/// types seen there, and in how many samples it appeared. A path seen in
/// every sample is required; one seen in some is optional, so a field that
/// is sometimes absent does not read as removed, nor as added.
///
/// ```swift
/// var shape = JSONShape()
/// shape.add(Data(#"{"id":1,"name":"Ada"}"#.utf8))
/// shape.add(Data(#"{"id":2}"#.utf8))
/// shape.isRequired("/id")     // true
/// shape.isRequired("/name")   // false: optional
/// ```
package struct JSONShape: Sendable, Equatable {
    /// A JSON type, as a schema names it.
    package enum Kind: String, Sendable, Comparable, CaseIterable {
        case null, boolean, number, string, array, object

        package static func < (left: Kind, right: Kind) -> Bool { left.rawValue < right.rawValue }
    }

    /// What one key path held across the samples.
    package struct Path: Sendable, Equatable {
        /// Every type seen there.
        var kinds: Set<Kind> = []
        /// The samples it appeared in.
        var samples = 0
    }

    /// Key paths by JSON pointer (`""` is the document itself).
    private(set) var paths: [String: Path] = [:]
    /// JSON bodies taken in.
    private(set) var samples = 0

    /// Bodies larger than this are not read: a shape is in the first few
    /// kilobytes of a body, and a comparison of 100,000 flows must stay quick.
    static let maximumBody = 256 * 1024

    init() {}

    /// Takes in a body; false (and nothing counted) when it is not a JSON
    /// object or array, or too large to read.
    @discardableResult
    mutating func add(_ data: Data) -> Bool {
        guard !data.isEmpty, data.count <= Self.maximumBody,
              let first = data.first(where: { $0 > 0x20 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
              let value = data.withUnsafeBytes({ raw in try? JSONParser.parse(raw.bindMemory(to: UInt8.self)) }) else { return false }
        var seen: [String: Set<Kind>] = [:]
        Self.walk(value, at: "", into: &seen)
        samples += 1
        for (pointer, kinds) in seen {
            paths[pointer, default: Path()].kinds.formUnion(kinds)
            paths[pointer, default: Path()].samples += 1
        }
        return true
    }

    /// Whether `pointer` appeared in every sample.
    func isRequired(_ pointer: String) -> Bool { samples > 0 && paths[pointer]?.samples == samples }

    /// The types of `pointer` but null (a nullable field is not of another type for being null).
    func types(at pointer: String) -> Set<Kind> { (paths[pointer]?.kinds ?? []).subtracting([.null]) }

    private static func walk(_ value: JSONValue, at pointer: String, into seen: inout [String: Set<Kind>]) {
        seen[pointer, default: []].insert(kind(of: value))
        switch value {
        case .object(let members):
            for member in members { walk(member.value, at: pointer + "/" + escaped(member.key), into: &seen) }
        case .array(let elements):
            for element in elements { walk(element, at: pointer + "/*", into: &seen) }
        case .null, .bool, .number, .string:
            break
        }
    }

    private static func kind(of value: JSONValue) -> Kind {
        switch value {
        case .null: .null
        case .bool: .boolean
        case .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }

    /// A key as a JSON pointer token (RFC 6901): `~` and `/` escaped.
    private static func escaped(_ key: String) -> String {
        guard key.contains(where: { $0 == "~" || $0 == "/" }) else { return key }
        return key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
