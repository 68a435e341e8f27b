import Foundation
import WireProtocol

/// A rule the rules view asks the program to check and load (reading its
/// map-local files, the one part that needs the disk), and what to do with
/// it then. See ``Effect/loadRule(_:)`` and ``Action/ruleLoaded(_:_:)``.
///
/// ```swift
/// let request = RuleLoad(kind: .mapRemote, spec: "|api.example.com|127.0.0.1:8080", target: .add)
/// let result = Result { () throws(RuleLoader.RuleError) in
///     try RuleLoader.load(request.kind, spec: request.spec, relativeTo: request.directory)
/// }
/// ```
package struct RuleLoad: Sendable, Equatable {
    /// What the loaded rule is for.
    package enum Target: Sendable, Equatable {
        /// A new rule, at the end of the list.
        case add
        /// The rule at this index, edited.
        case replace(Int)
        /// The rule at this index, switched on.
        case enable(Int)
    }

    /// The rule's kind.
    package var kind: TrafficRule.Kind
    /// The rule's text, as typed.
    package var spec: String
    /// What the rule is for.
    var target: Target
    /// Where relative map-local paths are read from (``RuleBook/directory``).
    package var directory: URL?

    /// Creates a request.
    init(kind: TrafficRule.Kind, spec: String, target: Target, directory: URL? = nil) {
        self.kind = kind
        self.spec = spec
        self.target = target
        self.directory = directory
    }

    /// `KIND SPEC`.
    var text: String { "\(kind.rawValue) \(spec)" }
}
