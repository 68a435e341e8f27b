import WireProtocol
import XCTest
@testable import CaptureAgent

extension TestInspector {
    /// Waits until `agent` has read every frame written to `connection` so
    /// far, for the tests whose point is that a frame changes nothing: a
    /// wait that only hopes the agent got to it passes just as well when
    /// the agent never read it. The agent reads a connection's frames in
    /// order and takes up a switch of protocol version as it reads it
    /// (`streamsBodyParts` says which it writes), so a switch written after
    /// them, to the version it is not on, shows once they are read. Agents
    /// with control and without it read it alike; the switch changes only
    /// how later events are framed, which this inspector reads either way.
    func waitUntilRead(by agent: CaptureAgent, connection: Int = 0, file: StaticString = #filePath, line: UInt = #line) {
        let wasOnVersion2 = agent.streamsBodyParts
        write(ViewerMessage.useProtocolVersion(wasOnVersion2 ? 1 : 2).frame(), toConnection: connection)
        XCTAssertTrue(eventually { agent.streamsBodyParts != wasOnVersion2 }, "the agent never read the switch of version",
                      file: file, line: line)
    }
}
