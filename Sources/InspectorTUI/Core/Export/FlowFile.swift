import Foundation
import WireProtocol

/// Files of flows: what `--read` opens and `--save` writes.
///
/// Two formats are read: HAR (ours or another tool's) and JSON lines, one
/// ``WireProtocol/NetworkLog`` per line as `--save` and `--json` write them.
/// The format is recognised from the content, not the file name.
public enum FlowFile {
    /// Why a file could not be read.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the file and, for JSON lines, the line.
        public var description: String
    }

    /// Reads every flow in the file at `path`.
    public static func read(path: String) throws(ReadError) -> [NetworkLog] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ReadError(description: "\(path): \(error.localizedDescription)")
        }
        return try read(data, name: path)
    }

    /// Reads flows from file contents; `name` is used in error messages.
    public static func read(_ data: Data, name: String) throws(ReadError) -> [NetworkLog] {
        if looksLikeJSONLines(data) {
            var flows: [NetworkLog] = []
            for (index, line) in data.split(separator: UInt8(ascii: "\n")).enumerated()
            where line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                do {
                    flows.append(try NetworkLog(jsonLine: line))
                } catch {
                    throw ReadError(description: "\(name): line \(index + 1): \(error)")
                }
            }
            return flows
        }
        do {
            return try HARFile.decode(data)
        } catch {
            throw ReadError(description: "\(name): \(error)")
        }
    }

    /// JSON lines start with a flow object whose first line is complete; a
    /// HAR file is one object whose first member is "log".
    private static func looksLikeJSONLines(_ data: Data) -> Bool {
        guard let firstLine = data.split(separator: UInt8(ascii: "\n"), maxSplits: 1).first else { return false }
        return (try? NetworkLog(jsonLine: firstLine)) != nil
    }
}

/// Appends finished flows to a file as JSON lines, one write per line, so
/// nothing already written is lost if the terminal or the program dies.
///
/// A write error is reported once (disk full, file removed, permissions)
/// and the writer stops; the caller keeps running. A file that cannot be
/// opened at all is either an error (``init(path:)``, for headless runs) or,
/// with ``opening(path:)``, a writer that has failed from the start.
public final class FlowLineWriter {
    private let handle: FileHandle?
    /// The path being written.
    public let path: String
    /// Flows written so far.
    public private(set) var writtenFlows = 0
    /// The first error (opening or writing), after which nothing more is written.
    public private(set) var failure: String?

    /// Opens `path` for appending, creating it with mode 0600 (captured
    /// traffic may hold secrets).
    public convenience init(path: String) throws(FlowFile.ReadError) {
        switch Self.open(path) {
        case .success(let handle): self.init(path: path, handle: handle, failure: nil)
        case .failure(let error): throw error
        }
    }

    /// Opens `path` as ``init(path:)`` does, but never fails: when the file
    /// cannot be opened the writer holds the reason in ``failure`` and
    /// writes nothing, so an interactive session can show the error and
    /// keep running.
    public static func opening(path: String) -> FlowLineWriter {
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
    public func write(_ log: NetworkLog) -> String? {
        guard failure == nil, let handle else { return nil }
        var line = log.jsonLine()
        line.append(UInt8(ascii: "\n"))
        do {
            // One write(2) per line: once it returns, the line survives the
            // process dying (fsync would only add power-loss safety, at a cost per flow).
            try handle.write(contentsOf: line)
            writtenFlows += 1
            return nil
        } catch {
            let text = "--save \(path): \(error.localizedDescription); no longer saving"
            failure = text
            return text
        }
    }
}
