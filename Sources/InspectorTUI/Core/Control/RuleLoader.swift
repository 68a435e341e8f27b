import FlowFilter
import Foundation
import WireProtocol

/// Turns what a person typed (`--map-remote`, `--map-local`,
/// `--modify-headers`, a `--rules` file) into rules an agent can apply,
/// checking everything an agent would otherwise have to drop: the flow
/// filter, the regular expression, and the files of a map-local rule, which
/// are read here and travel with the rule.
public enum RuleLoader {
    /// Why a rule cannot be used, in words a person can act on.
    public struct RuleError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The most a map-local rule may carry: files of an agent's control
    /// frame, which is bounded at 16 MiB.
    public static let maximumLocalBytes = 8 * 1024 * 1024
    /// The most files one map-local directory may hold.
    public static let maximumLocalFiles = 1000

    /// Reads one rule, e.g. `load(.mapRemote, "|api.example.com|127.0.0.1:8080")`.
    ///
    /// ```swift
    /// let rule = try RuleLoader.load(.mapLocal, spec: "|example.com/items|./fixtures/items.json")
    /// // rule.files holds the file's bytes and its content type
    /// ```
    public static func load(_ kind: TrafficRule.Kind, spec: String, relativeTo directory: URL? = nil) throws(RuleError) -> TrafficRule {
        var rule: TrafficRule
        do {
            rule = try TrafficRule(kind, spec: spec)
        } catch {
            throw RuleError(description: error.description)
        }
        if let filter = rule.filter {
            do {
                _ = try FilterExpression.parse(filter)
            } catch {
                throw RuleError(description: "\(kind.rawValue) '\(spec)': filter '\(filter)': \(error.description)")
            }
        }
        if kind != .modifyHeaders {
            do {
                _ = try NSRegularExpression(pattern: rule.pattern)
            } catch {
                throw RuleError(description: "\(kind.rawValue) '\(spec)': '\(rule.pattern)' is not a valid regular expression")
            }
        }
        if kind == .modifyHeaders, !isToken(rule.pattern) {
            throw RuleError(description: "\(kind.rawValue) '\(spec)': '\(rule.pattern)' is not a header name")
        }
        if kind == .mapLocal {
            rule.files = try localFiles(at: rule.replacement, relativeTo: directory, spec: spec)
        }
        return rule
    }

    /// Reads a rules file: one rule a line, `KIND SPEC` (`map-remote |a|b`),
    /// blank lines and `#` comments ignored. Relative map-local paths are
    /// taken from the file's directory.
    public static func loadFile(at path: String) throws(RuleError) -> [TrafficRule] {
        let url = URL(fileURLWithPath: path)
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw RuleError(description: "--rules \(path): cannot read it (\(error.localizedDescription))")
        }
        var rules: [TrafficRule] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let kind = TrafficRule.Kind(rawValue: String(parts[0])) else {
                let kinds = TrafficRule.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw RuleError(description: "--rules \(path):\(index + 1): expected 'KIND SPEC' with KIND one of \(kinds)")
            }
            do {
                rules.append(try load(kind, spec: String(parts[1]).trimmingCharacters(in: .whitespaces),
                                      relativeTo: url.deletingLastPathComponent()))
            } catch {
                throw RuleError(description: "--rules \(path):\(index + 1): \(error.description)")
            }
        }
        return rules
    }

    /// Writes rules back in the format ``loadFile(at:)`` reads.
    public static func fileText(_ rules: [TrafficRule]) -> String {
        rules.map { "\($0.kind.rawValue) \($0.spec)\n" }.joined()
    }

    private static func localFiles(at path: String, relativeTo directory: URL?, spec: String) throws(RuleError) -> [TrafficRule.LocalFile] {
        let url = path.hasPrefix("/") || directory == nil
            ? URL(fileURLWithPath: path) : directory!.appendingPathComponent(path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw RuleError(description: "map-local '\(spec)': no file or directory at \(url.path)")
        }
        if !isDirectory.boolValue {
            return [TrafficRule.LocalFile(path: "", contentType: contentType(of: url), data: try read(url, spec: spec))]
        }
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey]) else {
            throw RuleError(description: "map-local '\(spec)': cannot list \(url.path)")
        }
        var files: [TrafficRule.LocalFile] = []
        var total = 0
        let base = url.standardizedFileURL.path
        for case let file as URL in walker {
            guard (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let data = try read(file, spec: spec)
            total += data.count
            guard files.count < maximumLocalFiles, total <= maximumLocalBytes else {
                throw RuleError(description: "map-local '\(spec)': \(url.path) holds more than \(maximumLocalFiles) files or \(maximumLocalBytes / 1_048_576) MiB; map a smaller directory")
            }
            let relative = String(file.standardizedFileURL.path.dropFirst(base.count).drop { $0 == "/" })
            files.append(TrafficRule.LocalFile(path: relative, contentType: contentType(of: file), data: data))
        }
        return files.sorted { $0.path < $1.path }
    }

    private static func read(_ url: URL, spec: String) throws(RuleError) -> Data {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw RuleError(description: "map-local '\(spec)': cannot read \(url.path) (\(error.localizedDescription))")
        }
        guard data.count <= maximumLocalBytes else {
            throw RuleError(description: "map-local '\(spec)': \(url.path) is larger than \(maximumLocalBytes / 1_048_576) MiB")
        }
        return data
    }

    /// The content type an answer from `url` gets, from its extension.
    public static func contentType(of url: URL) -> String {
        switch url.pathExtension.lowercased() {
        case "json": "application/json"
        case "html", "htm": "text/html; charset=utf-8"
        case "txt", "text", "log": "text/plain; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "xml": "application/xml"
        case "csv": "text/csv; charset=utf-8"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "svg": "image/svg+xml"
        case "pdf": "application/pdf"
        case "yaml", "yml": "application/yaml"
        default: "application/octet-stream"
        }
    }

    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }
}
