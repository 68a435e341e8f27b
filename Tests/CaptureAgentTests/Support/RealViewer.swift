import Foundation
@testable import InspectorCore
import InspectorIngest
import NIOConcurrencyHelpers
import WireProtocol
@testable import CaptureAgent

/// netinspect's own viewer side, without a terminal: the real listener
/// (which asks an agent for protocol version 2, as netinspect does), its
/// inbox, and a `Session` that folds what arrives into the store the list
/// shows, on a thread of its own as netinspect's UI thread does, with
/// receipts sent back once a batch is in the store.
final class RealViewer: @unchecked Sendable {
    let path: String
    private let listener: InspectorListener
    private let inbox = Inbox()
    private let session = NIOLockedValueBox(Session())
    private let running = NIOLockedValueBox(true)
    private let folding = DispatchGroup()

    init(path: String) throws {
        self.path = path
        unlink(path)
        listener = InspectorListener(configuration: ListenerConfiguration(endpoints: [.unix(path: path)]), inbox: inbox)
        _ = try listener.start()
        let (inbox, session, running) = (inbox, session, running)
        folding.enter()
        Thread { [folding] in
            defer { folding.leave() }
            while running.withLockedValue({ $0 }) {
                let events = inbox.wait(timeout: .milliseconds(20))
                guard !events.isEmpty else { continue }
                _ = session.withLockedValue { $0.apply(events, at: Date()) }
                inbox.acknowledge(Inbox.takenEvents(in: events))
            }
        }.start()
    }

    /// The flow whose request URL ends with `suffix`, as the store holds it now.
    func flow(urlSuffix suffix: String) -> NetworkLog? {
        session.withLockedValue { session in
            session.store.allRecords.first { $0.log.request.url.hasSuffix(suffix) }?.log
        }
    }

    func stop() {
        running.withLockedValue { $0 = false }
        folding.wait()
        listener.shutdown()
        unlink(path)
    }
}
