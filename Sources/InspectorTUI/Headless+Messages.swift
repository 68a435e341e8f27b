import Foundation
import InspectorCore
import InspectorIngest
import WireProtocol

/// `--messages`: a line per server-sent event and WebSocket message as it
/// arrives, before the flow's own line (``MessageTap``).
extension Headless {
    /// Prints the messages `event` brings, of flows that pass the filter
    /// as known so far. Called before the assembler applies the event.
    mutating func printMessages(of event: InboxEvent, assembler: FlowAssembler) {
        guard var tap = messageTap else { return }
        let arrivals = tap.apply(event, flowSoFar: assembler.inProgress)
        messageTap = tap
        for arrival in arrivals where filter?.matches(arrival.flow) ?? true {
            switch output {
            case .dump: pendingOutput.append(contentsOf: Array(arrival.dumpLine(in: timeZone).utf8))
            case .json: pendingOutput.append(contentsOf: arrival.jsonLine())
            }
            pendingOutput.append(UInt8(ascii: "\n"))
        }
    }
}
