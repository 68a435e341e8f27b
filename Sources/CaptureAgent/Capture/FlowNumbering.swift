/// How a captured client or server numbers its flows: its own number among
/// the agent's clients and servers (every flow's `sessionID`, so "session 3"
/// names one whichever kind it is) and each exchange's number within it
/// (its `taskID`), counted from 1.
///
/// ```swift
/// let numbering = FlowNumbering(agent: agent)
/// let taskID = numbering.nextTaskID()   // 1, then 2, …
/// ```
package struct FlowNumbering: Sendable {
    /// The agent the flows go to.
    package let agent: CaptureAgent
    /// The client's or server's number.
    package let sessionID: Int
    private let exchanges = Counter()

    package init(agent: CaptureAgent) {
        self.agent = agent
        sessionID = agent.nextSessionID()
    }

    /// The next exchange's number.
    package func nextTaskID() -> Int { exchanges.next() }
}
