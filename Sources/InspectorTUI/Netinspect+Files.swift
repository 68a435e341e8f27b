import ArgumentParser
import Foundation
import InspectorCore
import ProtobufWire
import WireProtocol

/// What the files named by netinspect's options hold, read once when it
/// runs: the `--proto` descriptor sets, the rules of `--rules` and the
/// flags (with their map-local files), and the keys file. A file that
/// cannot be read or makes no sense is a usage error naming the option.
///
/// ```swift
/// let files = try OptionFiles(try Netinspect.parse(["--rules", "rules.txt"]))
/// files.ruleBook.inForce   // what goes to the agents
/// ```
struct OptionFiles {
    /// The `--proto` descriptor sets.
    let protoSchema: ProtoSchema
    /// The rules as the rules view shows them: the file's (with those that
    /// are off and its comments), then the flags'.
    let ruleBook: RuleBook
    /// The default keys with the keys file's (`--keys`, else the default
    /// file when it exists) in force.
    let keymap: Keymap
    /// The `--server-replay` recordings, nil for none.
    let serverReplay: ServerReplaySet?

    init(_ options: Netinspect) throws {
        protoSchema = try Self.protoSchema(options.protoFiles)
        serverReplay = try options.serverReplay.load()
        ruleBook = try Self.ruleBook(options)
        keymap = try Self.keymap(options.keys)
    }

    private static func protoSchema(_ paths: [String]) throws -> ProtoSchema {
        do {
            return try ProtoSchema.load(paths: paths)
        } catch {
            throw ValidationError("--proto \(error.description)")
        }
    }

    private static func ruleBook(_ options: Netinspect) throws -> RuleBook {
        do {
            var book = try options.rulesFile.map { path throws(RuleLoader.RuleError) in try RuleLoader.readBook(at: path) } ?? RuleBook()
            let flags: [(TrafficRule.Kind, [String])] = [(.mapRemote, options.mapRemote), (.mapLocal, options.mapLocal),
                                                         (.modifyHeaders, options.modifyHeaders), (.condition, options.conditions)]
            for (kind, specs) in flags {
                for spec in specs {
                    var entry = RuleBook.Entry(try RuleLoader.load(kind, spec: spec), origin: .flag)
                    entry.spec = spec
                    book.entries.append(entry)
                }
            }
            return book
        } catch {
            throw ValidationError(error.description)
        }
    }

    private static func keymap(_ keys: String?) throws -> Keymap {
        let path = keys ?? Keymap.defaultFilePath().flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
        guard let path else { return .standard }
        do {
            return try Keymap.standard.rebinding(String(contentsOfFile: path, encoding: .utf8))
        } catch let error as Keymap.FileError {
            throw ValidationError("--keys \(path), \(error)")
        } catch {
            throw ValidationError("--keys \(path): \(error.localizedDescription)")
        }
    }
}
