import WireProtocol

/// The server replay in force, as the status bar shows it: what was
/// loaded, and how the agents have answered from it.
///
/// ```swift
/// session.serverReplay = ServerReplayProgress(summary: replay.summary, responses: replay.entries.count)
/// session.serverReplay?.statusText   // "replay: 12 left"
/// ```
package struct ServerReplayProgress: Sendable, Equatable {
    /// What was loaded, e.g. `run.har: 40 responses`.
    var summary: String
    /// The recorded responses loaded.
    var responses: Int
    /// Flows answered with a recorded response.
    var answered = 0
    /// The responses left by the agent that answered last (each agent
    /// keeps its own account), nil before any answer.
    var left: Int?

    package init(summary: String, responses: Int) {
        self.summary = summary
        self.responses = responses
    }

    /// A finished flow's mark, if it has one, counted.
    mutating func count(_ mark: ServerReplayMark) {
        if mark.extra == nil { answered += 1 }
        left = mark.left
    }

    /// For the status bar.
    var statusText: String { "replay: \(left ?? responses) left" }
}
