import Foundation
import WireProtocol

/// Files of flows: what `--read` opens and `--save` writes.
///
/// Two formats are read: HAR (ours or another tool's) and JSON lines, one
/// ``WireProtocol/NetworkLog`` per line as `--save` and `--json` write them.
/// The format is recognised from the content, not the file name.
///
/// A JSON-lines file may also hold annotation lines, the marks and comments
/// the person added, written when they change; the last one for a flow wins:
///
/// ```
/// {"annotation":{"id":"6C1D…","marked":true,"comment":"fails with the staging token"}}
/// ```
package enum FlowFile {
    /// What a file holds: the flows, and the marks and comments on them.
    package struct Contents: Sendable, Equatable {
        /// The flows, in file order.
        package var flows: [NetworkLog]
        /// Marks and comments, by flow id.
        package var annotations: [FlowID: FlowAnnotation]

        /// Creates contents.
        init(flows: [NetworkLog], annotations: [FlowID: FlowAnnotation] = [:]) {
            self.flows = flows
            self.annotations = annotations
        }
    }

    /// One annotation line of a JSON-lines file.
    struct AnnotationLine: Codable {
        struct Body: Codable {
            var id: String
            var marked: Bool?
            var comment: String?
        }

        var annotation: Body

        init(id: FlowID, _ annotation: FlowAnnotation) {
            self.annotation = Body(id: id.description, marked: annotation.isMarked, comment: annotation.comment)
        }

        init?(line: some Collection<UInt8>) {
            // Cheap test first: flow lines are far more common.
            guard line.starts(with: Array(#"{"annotation""#.utf8)),
                  let decoded = try? JSONDecoder().decode(Self.self, from: Data(line)) else { return nil }
            self = decoded
        }

        func jsonLine() -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // Encoding two strings and a flag cannot fail.
            return (try? encoder.encode(self)) ?? Data()
        }
    }

    /// Why a file could not be read.
    package struct ReadError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the file and, for JSON lines, the line.
        package var description: String
    }

    /// Reads every flow in the file at `path`.
    package static func read(path: String) throws(ReadError) -> [NetworkLog] {
        try readContents(path: path).flows
    }

    /// Reads every flow in the file at `path`, with its marks and comments.
    package static func readContents(path: String) throws(ReadError) -> Contents {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ReadError(description: "\(path): \(error.localizedDescription)")
        }
        return try readContents(data, name: path)
    }

    /// Reads flows from file contents; `name` is used in error messages.
    static func read(_ data: Data, name: String) throws(ReadError) -> [NetworkLog] {
        try readContents(data, name: name).flows
    }

    /// Reads flows, marks and comments from file contents; `name` is used in error messages.
    static func readContents(_ data: Data, name: String) throws(ReadError) -> Contents {
        if looksLikeJSONLines(data) {
            var contents = Contents(flows: [])
            for (index, line) in data.split(separator: UInt8(ascii: "\n")).enumerated()
            where line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                if let annotation = AnnotationLine(line: line) {
                    guard let id = FlowID(annotation.annotation.id) else {
                        throw ReadError(description: "\(name): line \(index + 1): annotation names no valid flow id")
                    }
                    contents.annotations[id] = FlowAnnotation(isMarked: annotation.annotation.marked ?? false,
                                                              comment: annotation.annotation.comment)
                    continue
                }
                do {
                    contents.flows.append(try NetworkLog(jsonLine: line))
                } catch {
                    throw ReadError(description: "\(name): line \(index + 1): \(error)")
                }
            }
            contents.annotations = contents.annotations.filter { !$0.value.isEmpty }
            return contents
        }
        do {
            return try HARFile.decodeSession(data)
        } catch {
            throw ReadError(description: "\(name): \(error)")
        }
    }

    /// JSON lines start with a flow object whose first line is complete; a
    /// HAR file is one object whose first member is "log".
    private static func looksLikeJSONLines(_ data: Data) -> Bool {
        guard let firstLine = data.split(separator: UInt8(ascii: "\n"), maxSplits: 1).first else { return false }
        return AnnotationLine(line: firstLine) != nil || (try? NetworkLog(jsonLine: firstLine)) != nil
    }
}

/// Appends finished flows to a file as JSON lines, one write per line, so
/// nothing already written is lost if the terminal or the program dies.
///
/// A write error is reported once (disk full, file removed, permissions)
/// and the writer stops; the caller keeps running. A file that cannot be
/// opened at all is either an error (``init(path:)``, for headless runs) or,
/// with ``opening(path:)``, a writer that has failed from the start.
package final class FlowLineWriter {
    private let handle: FileHandle?
    /// The path being written.
    let path: String
    /// Flows written so far.
    private(set) var writtenFlows = 0
    /// The first error (opening or writing), after which nothing more is written.
    package private(set) var failure: String?

    /// Opens `path` for appending, creating it with mode 0600 (captured
    /// traffic may hold secrets).
    package convenience init(path: String) throws(FlowFile.ReadError) {
        switch Self.open(path) {
        case .success(let handle): self.init(path: path, handle: handle, failure: nil)
        case .failure(let error): throw error
        }
    }

    /// Opens `path` as ``init(path:)`` does, but never fails: when the file
    /// cannot be opened the writer holds the reason in ``failure`` and
    /// writes nothing, so an interactive session can show the error and
    /// keep running.
    package static func opening(path: String) -> FlowLineWriter {
        switch open(path) {
        case .success(let handle):
            return FlowLineWriter(path: path, handle: handle, failure: nil)
        case .failure(let error):
            return FlowLineWriter(path: path, handle: nil, failure: "--save \(error.description); not saving")
        }
    }

    private init(path: String, handle: FileHandle?, failure: String?) {
        self.path = path
        self.handle = handle
        self.failure = failure
        _ = try? handle?.seekToEnd()
    }

    private static func open(_ path: String) -> Result<FileHandle, FlowFile.ReadError> {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                return .failure(FlowFile.ReadError(description: "\(path): cannot create the file (\(String(cString: strerror(errno))))"))
            }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            return .failure(FlowFile.ReadError(description: "\(path): cannot open the file for writing (\(String(cString: strerror(errno))))"))
        }
        return .success(handle)
    }

    deinit { try? handle?.close() }

    /// Writes one flow; returns the error text the first time a write fails.
    @discardableResult
    package func write(_ log: NetworkLog) -> String? {
        append(log.jsonLine(), counts: true)
    }

    /// Writes the mark and comment of a flow as they are now (an annotation
    /// line); returns the error text the first time a write fails.
    @discardableResult
    package func write(_ annotation: FlowAnnotation, for id: FlowID) -> String? {
        append(FlowFile.AnnotationLine(id: id, annotation).jsonLine(), counts: false)
    }

    /// Writes flows and their annotations to a new file at `path` (`:save`),
    /// created with mode 0600 and replacing what was there.
    package static func writeSession(_ contents: FlowFile.Contents, to path: String) throws {
        var data = Data()
        for flow in contents.flows {
            data.append(flow.jsonLine())
            data.append(UInt8(ascii: "\n"))
            if let annotation = contents.annotations[flow.id], !annotation.isEmpty {
                data.append(FlowFile.AnnotationLine(id: flow.id, annotation).jsonLine())
                data.append(UInt8(ascii: "\n"))
            }
        }
        let url = URL(fileURLWithPath: path)
        try data.write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    private func append(_ json: Data, counts: Bool) -> String? {
        guard failure == nil, let handle else { return nil }
        var line = json
        line.append(UInt8(ascii: "\n"))
        do {
            // One write(2) per line: once it returns, the line survives the
            // process dying (fsync would only add power-loss safety, at a cost per flow).
            try handle.write(contentsOf: line)
            if counts { writtenFlows += 1 }
            return nil
        } catch {
            let text = "--save \(path): \(error.localizedDescription); no longer saving"
            failure = text
            return text
        }
    }
}
