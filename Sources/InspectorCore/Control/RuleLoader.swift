import FlowFilter
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import WireProtocol

/// Turns what a person typed (`--map-remote`, `--map-local`,
/// `--modify-headers`, a `--rules` file) into rules an agent can apply,
/// checking everything an agent would otherwise have to drop: the flow
/// filter, the regular expression, and the files of a map-local rule, which
/// are read here and travel with the rule.
package enum RuleLoader {
    /// Why a rule cannot be used, in words a person can act on.
    package struct RuleError: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The most a map-local rule may carry: files of an agent's control
    /// frame, which is bounded at 16 MiB.
    static let maximumLocalBytes = 8 * 1024 * 1024
    /// The most files one map-local directory may hold.
    static let maximumLocalFiles = 1000

    /// Reads one rule, e.g. `load(.mapRemote, "|api.example.com|127.0.0.1:8080")`.
    ///
    /// ```swift
    /// let rule = try RuleLoader.load(.mapLocal, spec: "|example.com/items|./fixtures/items.json")
    /// // rule.files holds the file's bytes and its content type
    /// ```
    package static func load(_ kind: TrafficRule.Kind, spec: String, relativeTo directory: URL? = nil) throws(RuleError) -> TrafficRule {
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
        if kind == .mapRemote || kind == .mapLocal {
            do {
                _ = try NSRegularExpression(pattern: rule.pattern)
                _ = try FilterPattern(regularExpression: rule.pattern)
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
    /// blank lines and `#` comments ignored, so are rules that are off
    /// (`# off: KIND SPEC`, see ``RuleBook``). Relative map-local paths are
    /// taken from the file's directory.
    static func loadFile(at path: String) throws(RuleError) -> [TrafficRule] {
        try readBook(at: path).inForce
    }

    /// Reads a rules file with everything the rules view shows and saves
    /// back: the rules that are on (checked and loaded as ``load(_:spec:relativeTo:)``
    /// does), those that are off (`# off: KIND SPEC`: their syntax is
    /// checked, their files are read only when they are switched on), and
    /// the comments between them. An `# off:` line that is not a rule is an
    /// ordinary comment.
    ///
    /// ```swift
    /// let book = try RuleLoader.readBook(at: "rules.txt")
    /// book.entries.map(\.isEnabled)   // [true, false]
    /// ```
    package static func readBook(at path: String) throws(RuleError) -> RuleBook {
        let url = URL(fileURLWithPath: path)
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw RuleError(description: "--rules \(path): cannot read it (\(error.localizedDescription))")
        }
        var book = RuleBook(path: path)
        book.writesHeader = false
        var comments: [String] = []
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix(RuleBook.disabledPrefix),
               let (kind, spec) = try? parseLine(String(line.dropFirst(RuleBook.disabledPrefix.count))),
               (try? TrafficRule(kind, spec: spec)) != nil {
                var entry = RuleBook.Entry(kind: kind, spec: spec, rule: nil)
                entry.leadingLines = comments
                comments = []
                book.entries.append(entry)
                continue
            }
            guard !line.isEmpty, !line.hasPrefix("#") else {
                comments.append(rawLine)
                continue
            }
            do {
                let (kind, spec) = try parseLine(line)
                var entry = RuleBook.Entry(try load(kind, spec: spec, relativeTo: url.deletingLastPathComponent()))
                entry.spec = spec
                entry.leadingLines = comments
                comments = []
                book.entries.append(entry)
            } catch {
                throw RuleError(description: "--rules \(path):\(index + 1): \(error.description)")
            }
        }
        book.trailingLines = comments
        return book
    }

    /// Splits `KIND SPEC`, the form of a rules file's lines and of the
    /// rules view's prompt, e.g. `map-remote |api.example.com|127.0.0.1:8080`.
    /// Only the kind is checked here; ``load(_:spec:relativeTo:)`` checks the rest.
    ///
    /// ```swift
    /// let (kind, spec) = try RuleLoader.parseLine("modify-headers /X-Env/staging")
    /// // kind == .modifyHeaders, spec == "/X-Env/staging"
    /// ```
    static func parseLine(_ line: String) throws(RuleError) -> (kind: TrafficRule.Kind, spec: String) {
        let parts = line.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let kind = TrafficRule.Kind(rawValue: String(parts[0])) else {
            let kinds = TrafficRule.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw RuleError(description: "expected 'KIND SPEC' with KIND one of \(kinds), e.g. 'map-remote |api.example.com|127.0.0.1:8080'")
        }
        return (kind, String(parts[1]).trimmingCharacters(in: .whitespaces))
    }

    /// Writes rules back in the format ``loadFile(at:)`` reads.
    static func fileText(_ rules: [TrafficRule]) -> String {
        rules.map { "\($0.kind.rawValue) \($0.spec)\n" }.joined()
    }

    /// Saves a book's ``RuleBook/fileText`` to `path` atomically: written to
    /// a new file beside it, flushed, then renamed over it, so a reader (or
    /// a crash) never sees half a file. The file keeps its permissions; a
    /// symbolic link is followed, not replaced.
    ///
    /// ```swift
    /// try RuleLoader.save(book, to: "rules.txt")
    /// ```
    package static func save(_ book: RuleBook, to path: String) throws(RuleError) {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        var status = stat()
        let mode = stat(target.path, &status) == 0 ? status.st_mode & 0o7777 : 0o644
        let temporary = target.deletingLastPathComponent()
            .appendingPathComponent(".\(target.lastPathComponent).netinspect-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        func failure(_ what: String) -> RuleError {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            return RuleError(description: "cannot save the rules to \(path): \(what) (\(reason))")
        }
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(mode))
        guard descriptor >= 0 else { throw failure("cannot create a file beside it") }
        let bytes = Array(book.fileText.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                close(descriptor)
                throw failure("write failed")
            }
            written += count
        }
        // The umask may have narrowed the mode given to open().
        _ = fchmod(descriptor, mode_t(mode))
        guard fsync(descriptor) == 0 else {
            close(descriptor)
            throw failure("fsync failed")
        }
        close(descriptor)
        guard rename(temporary.path, target.path) == 0 else { throw failure("rename failed") }
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
    static func contentType(of url: URL) -> String {
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
