import Foundation
import ProtobufWire
import WireProtocol

/// What differs between two flows: request line and query, each header
/// (added, removed, changed), the bodies (JSON by structure, path by path;
/// text line by line; anything else by size and first differing byte),
/// status and error, and timing.
///
/// Pure and terminal-free; the diff view draws ``lines(width:)``.
///
/// ```swift
/// let diff = FlowDiff(base: working.log, other: failing.log)
/// for section in diff.sections where section.hasDifferences { print(section.title) }
/// ```
package struct FlowDiff: Sendable, Equatable {
    /// How one compared item differs.
    package enum Kind: Sendable, Equatable {
        /// Only in the base flow.
        case removed
        /// Only in the other flow.
        case added
        /// In both, with different values.
        case changed
        /// A remark, not a difference (e.g. "12 headers the same").
        case note
    }

    /// One compared item: a header, a JSON path, a line, a timing point.
    struct Row: Sendable, Equatable {
        /// How it differs.
        var kind: Kind
        /// What it is: the header name, the JSON path (`$.items[2].price`), `line 12`.
        var label: String
        /// The base flow's value, when it has one.
        var base: String?
        /// The other flow's value, when it has one.
        var other: String?
    }

    /// A part of the flows compared.
    struct Section: Sendable, Equatable {
        /// Its heading, e.g. `Response body (JSON)`.
        var title: String
        /// The rows, differences first in document order, notes where they belong.
        var rows: [Row]
        /// Whether any row is a difference.
        var hasDifferences: Bool { rows.contains { $0.kind != .note } }
    }

    /// The sections, in the order of an exchange.
    let sections: [Section]

    /// Rows listed per body before the rest is summed up in a note.
    static let maximumRows = 2_000

    /// Compares two flows; `base` is the one thought good, `other` the one examined.
    package init(base: NetworkLog, other: NetworkLog) {
        var sections: [Section] = []
        sections.append(Section(title: "Request", rows: Self.requestLine(base.request, other.request)))
        sections.append(Section(title: "Request headers", rows: Self.headers(base.request.headers, other.request.headers)))
        sections.append(Self.body("Request body", base.request.body, other.request.body,
                                  base.request.headers.first("Content-Type"), other.request.headers.first("Content-Type")))
        sections.append(Section(title: "Response", rows: Self.outcome(base, other)))
        sections.append(Section(title: "Response headers", rows: Self.headers(base.response?.headers ?? [], other.response?.headers ?? [])))
        sections.append(Self.body("Response body", base.response?.body, other.response?.body,
                                  base.response.flatMap { $0.mimeType ?? $0.headers.first("Content-Type") },
                                  other.response.flatMap { $0.mimeType ?? $0.headers.first("Content-Type") }))
        sections.append(Section(title: "Timing", rows: Self.timing(base.timing, other.timing)))
        self.sections = sections
    }

    /// Number of differences over all sections.
    var differenceCount: Int {
        sections.reduce(0) { $0 + $1.rows.filter { $0.kind != .note }.count }
    }

    // MARK: Request line

    private static func requestLine(_ base: Request, _ other: Request) -> [Row] {
        var rows: [Row] = []
        compare("method", base.method, other.method, into: &rows)
        let baseParts = URLParts(base.url)
        let otherParts = URLParts(other.url)
        compare("scheme://host:port", baseParts.origin, otherParts.origin, into: &rows)
        compare("path", baseParts.path, otherParts.path, into: &rows)
        let query = namedValues(baseParts.query, otherParts.query, label: { "?\($0)" })
        rows += query
        if rows.isEmpty { rows.append(Row(kind: .note, label: "the same", base: "\(base.method) \(base.url)", other: nil)) }
        return rows
    }

    private static func compare(_ label: String, _ base: String, _ other: String, into rows: inout [Row]) {
        if base != other { rows.append(Row(kind: .changed, label: label, base: base, other: other)) }
    }

    /// The parts of a URL compared one by one.
    private struct URLParts {
        var origin: String
        var path: String
        var query: [(String, String)]

        init(_ url: String) {
            let withoutFragment = url.prefix { $0 != "#" }
            let beforeQuery = withoutFragment.prefix { $0 != "?" }
            let queryText = withoutFragment.dropFirst(beforeQuery.count + 1)
            let pathAndQuery = Format.pathAndQuery(of: String(beforeQuery))
            origin = String(beforeQuery.dropLast(pathAndQuery == "/" && !beforeQuery.hasSuffix("/") ? 0 : pathAndQuery.count))
            path = pathAndQuery
            query = queryText.isEmpty ? [] : formFields(String(queryText))
        }
    }

    // MARK: Headers and query

    private static func headers(_ base: [HTTPHeader], _ other: [HTTPHeader]) -> [Row] {
        namedValues(base.map { ($0.name, $0.value) }, other.map { ($0.name, $0.value) }, label: { $0 }, caseInsensitive: true)
    }

    /// Compares name/value lists by name (repeated names joined with ", "),
    /// in the base's order, then the names only the other has.
    private static func namedValues(_ base: [(String, String)], _ other: [(String, String)], label: (String) -> String,
                                    caseInsensitive: Bool = false) -> [Row] {
        func grouped(_ pairs: [(String, String)]) -> (order: [String], names: [String: String], values: [String: String]) {
            var order: [String] = []
            var names: [String: String] = [:]
            var values: [String: String] = [:]
            for (name, value) in pairs {
                let key = caseInsensitive ? name.lowercased() : name
                if let existing = values[key] {
                    values[key] = existing + ", " + value
                } else {
                    order.append(key)
                    names[key] = name
                    values[key] = value
                }
            }
            return (order, names, values)
        }
        let left = grouped(base)
        let right = grouped(other)
        var rows: [Row] = []
        var same = 0
        for key in left.order {
            let name = label(left.names[key]!)
            switch right.values[key] {
            case nil: rows.append(Row(kind: .removed, label: name, base: left.values[key], other: nil))
            case left.values[key]: same += 1
            case let value: rows.append(Row(kind: .changed, label: name, base: left.values[key], other: value))
            }
        }
        for key in right.order where left.values[key] == nil {
            rows.append(Row(kind: .added, label: label(right.names[key]!), base: nil, other: right.values[key]))
        }
        if same > 0 {
            let label = rows.isEmpty ? "all the same (\(same))" : "\(same) more the same"
            rows.append(Row(kind: .note, label: label, base: nil, other: nil))
        }
        return rows
    }

    // MARK: Outcome and timing

    private static func outcome(_ base: NetworkLog, _ other: NetworkLog) -> [Row] {
        func status(_ log: NetworkLog) -> String {
            guard let response = log.response else { return "no response (\(log.state.rawValue))" }
            return "\(response.statusCode) \(Format.reason(response.statusCode))".trimmingSpaces()
        }
        var rows: [Row] = []
        compare("status", status(base), status(other), into: &rows)
        compare("state", base.state.rawValue, other.state.rawValue, into: &rows)
        let baseError = base.error.map { "\($0.domain) \($0.code): \($0.message)" }
        let otherError = other.error.map { "\($0.domain) \($0.code): \($0.message)" }
        if baseError != otherError {
            let kind: Kind = baseError == nil ? .added : otherError == nil ? .removed : .changed
            rows.append(Row(kind: kind, label: "error", base: baseError, other: otherError))
        }
        if base.redirects != other.redirects {
            let describe = { (hops: [RedirectHop]) in hops.map { "\($0.statusCode) → \($0.to)" }.joined(separator: ", ") }
            rows.append(Row(kind: .changed, label: "redirects", base: describe(base.redirects), other: describe(other.redirects)))
        }
        if rows.isEmpty { rows.append(Row(kind: .note, label: "the same", base: status(base), other: nil)) }
        return rows
    }

    private static func timing(_ base: Timing, _ other: Timing) -> [Row] {
        let points: [(String, Double?, Double?)] = [
            ("duration", base.duration, other.duration),
            ("request sent", base.requestSent, other.requestSent),
            ("first byte", base.firstResponseByte, other.firstResponseByte),
            ("finished", base.finished, other.finished),
        ]
        return points.map { name, left, right in
            let text = { (value: Double?) in value.map(Format.milliseconds) ?? "—" }
            var otherText = text(right)
            if let left, let right {
                let delta = right - left
                otherText += "  (\(delta >= 0 ? "+" : "−")\(Format.milliseconds(abs(delta))))"
            }
            return Row(kind: left == right ? .note : .changed, label: name, base: text(left), other: otherText)
        }
    }

    // MARK: Bodies

    private static func body(_ title: String, _ base: CapturedBody?, _ other: CapturedBody?, _ baseType: String?, _ otherType: String?) -> Section {
        let left = base?.data ?? Data()
        let right = other?.data ?? Data()
        var rows: [Row] = []
        for (name, body) in [("base", base), ("other", other)] {
            if let body, body.isTruncated {
                rows.append(Row(kind: .note, label: "\(name) body truncated: \(body.data.count) of \(body.size) bytes captured", base: nil, other: nil))
            }
        }
        if left.isEmpty, right.isEmpty {
            return Section(title: title, rows: rows + [Row(kind: .note, label: "no body in either", base: nil, other: nil)])
        }
        if left == right {
            return Section(title: title, rows: rows + [Row(kind: .note, label: "the same \(Format.size(left.count))", base: nil, other: nil)])
        }
        let leftKind = BodyFormatter.kind(of: left, contentType: baseType)
        let rightKind = BodyFormatter.kind(of: right, contentType: otherType)
        if leftKind == .json || rightKind == .json, let leftJSON = parseJSON(left), let rightJSON = parseJSON(right) {
            var walker = JSONDiffWalker()
            walker.compare(leftJSON, rightJSON)
            rows += walker.rows
            if walker.omitted > 0 { rows.append(Row(kind: .note, label: "… \(walker.omitted) more differences not listed", base: nil, other: nil)) }
            return Section(title: title + " (JSON, by path)", rows: rows)
        }
        let isText = { (kind: BodyFormatter.Kind, data: Data) in (kind != .binary && kind != .image) || data.isEmpty }
        if isText(leftKind, left), isText(rightKind, right) {
            rows += TextDiff.rows(String(decoding: left, as: UTF8.self), String(decoding: right, as: UTF8.self))
            return Section(title: title + " (text, by line)", rows: rows)
        }
        rows += binary(left, right)
        return Section(title: title + " (bytes)", rows: rows)
    }

    private static func parseJSON(_ data: Data) -> JSONValue? {
        data.withUnsafeBytes { raw in try? JSONParser.parse(raw.bindMemory(to: UInt8.self)) }
    }

    private static func binary(_ left: Data, _ right: Data) -> [Row] {
        var rows = [Row(kind: left.count == right.count ? .note : .changed, label: "size",
                        base: "\(left.count) bytes", other: "\(right.count) bytes")]
        let offset = zip(left, right).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(left.count, right.count)
        func hex(_ data: Data) -> String {
            let slice = data.dropFirst(offset).prefix(16)
            return slice.isEmpty ? "(ends)" : slice.map { String(format: "%02x", $0) }.joined(separator: " ")
        }
        rows.append(Row(kind: .changed, label: String(format: "first difference at 0x%x (%d)", offset, offset), base: hex(left), other: hex(right)))
        return rows
    }
}

/// Walks two JSON documents side by side and records the paths whose
/// values differ. Objects are matched by key, arrays by index; a path is
/// built as text only when it is reported.
struct JSONDiffWalker {
    var rows: [FlowDiff.Row] = []
    var omitted = 0
    private var path: [PathComponent] = []

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    mutating func compare(_ left: JSONValue, _ right: JSONValue) {
        switch (left, right) {
        case let (.object(leftMembers), .object(rightMembers)):
            // Same keys in the same order is the common case: pair them directly.
            if leftMembers.count == rightMembers.count, zip(leftMembers, rightMembers).allSatisfy({ $0.key == $1.key }) {
                for (leftMember, rightMember) in zip(leftMembers, rightMembers) {
                    path.append(.key(leftMember.key))
                    compare(leftMember.value, rightMember.value)
                    path.removeLast()
                }
                return
            }
            var rightByKey: [String: JSONValue] = [:]
            for member in rightMembers { rightByKey[member.key] = member.value }
            var leftKeys = Set<String>()
            for member in leftMembers {
                leftKeys.insert(member.key)
                path.append(.key(member.key))
                if let value = rightByKey[member.key] {
                    compare(member.value, value)
                } else {
                    report(.removed, base: member.value, other: nil)
                }
                path.removeLast()
            }
            for member in rightMembers where !leftKeys.contains(member.key) {
                path.append(.key(member.key))
                report(.added, base: nil, other: member.value)
                path.removeLast()
            }
        case let (.array(leftElements), .array(rightElements)):
            for index in 0..<max(leftElements.count, rightElements.count) {
                path.append(.index(index))
                switch (index < leftElements.count, index < rightElements.count) {
                case (true, true): compare(leftElements[index], rightElements[index])
                case (true, false): report(.removed, base: leftElements[index], other: nil)
                default: report(.added, base: nil, other: rightElements[index])
                }
                path.removeLast()
            }
        case let (.string(a), .string(b)): if a != b { report(.changed, base: left, other: right) }
        case let (.number(a), .number(b)): if a != b { report(.changed, base: left, other: right) }
        case let (.bool(a), .bool(b)): if a != b { report(.changed, base: left, other: right) }
        case (.null, .null): break
        default: report(.changed, base: left, other: right)
        }
    }

    private mutating func report(_ kind: FlowDiff.Kind, base: JSONValue?, other: JSONValue?) {
        guard rows.count < FlowDiff.maximumRows else {
            omitted += 1
            return
        }
        rows.append(FlowDiff.Row(kind: kind, label: pathText, base: base.map(Self.describe), other: other.map(Self.describe)))
    }

    private var pathText: String {
        var text = "$"
        for component in path {
            switch component {
            case .key(let key):
                let plain = !key.isEmpty && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } && !(key.first?.isNumber ?? true)
                text += plain ? "." + key : "[" + Self.quoted(key) + "]"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// A value in one line: scalars as JSON, containers summarised.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
            return "\(number)"
        case .string(let text): return quoted(text)
        case .array(let elements): return elements.isEmpty ? "[]" : "[… \(elements.count) items]"
        case .object(let members): return members.isEmpty ? "{}" : "{… \(members.count) keys}"
        }
    }

    /// A JSON string literal.
    private static func quoted(_ text: String) -> String {
        QuotedText.quoted(text) { $0.value < 0x20 ? String(format: "\\u%04x", $0.value) : nil }
    }
}
