import Foundation
import ProtobufWire

extension ProtoSchema {
    /// Reads the descriptor sets `--proto` names, in order, into one schema.
    ///
    /// ```swift
    /// let schema = try ProtoSchema.load(paths: ["echo.pb"])   // throws ProtoFileError
    /// ```
    /// - Throws: ``ProtoFileError`` naming the first file that cannot be
    ///   read or is not a descriptor set, and what is wrong with it.
    package static func load(paths: [String]) throws(ProtoFileError) -> ProtoSchema {
        var schema = ProtoSchema()
        for path in paths {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ProtoFileError(path: path, reason: "cannot be read (\((error as NSError).localizedDescription))")
            }
            do {
                try schema.add(descriptorSet: [UInt8](data))
            } catch {
                throw ProtoFileError(path: path, reason: error.description)
            }
        }
        return schema
    }
}

/// A `--proto` file that could not be used: which, and why.
package struct ProtoFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file as given.
    var path: String
    /// What is wrong with it.
    var reason: String

    package var description: String { "\(path): \(reason)" }
}
