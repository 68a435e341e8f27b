import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
import XCTest
@testable import CaptureAgent

/// A URLSession task answered by server replay against the same task
/// answered by the live server with no agent: everything the app observes
/// of its own task (result, headers, task.error, currentRequest, the byte
/// counters, the task's state) must read the same, in every client style.
final class ServerReplaySameBehaviourTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
    }

    /// What the app observes, a line each; `Date` left out (the server stamps each response).
    private func transcript(_ request: URLRequest, style: ClientStyle, session: URLSession) async -> [String] {
        let task = Locked<URLSessionTask?>(nil)
        var outcome = await performExchange(request, on: session, style: style) { seen in task.withLock { $0 = seen } }
        outcome.headers["Date"] = nil
        var lines = ["outcome: \(outcome.description)"]
        if let task = task.current {
            lines.append(Self.settledState(task))
            lines.append(Self.counters(task))
            lines.append("currentRequest: \(task.currentRequest?.url?.absoluteString ?? "nil")")
            lines.append(Self.describe(task.error))
        }
        return lines
    }

    func testAReplayedTaskReadsAsTheLiveOneInEveryStyle() async throws {
        var post = URLRequest(url: server.url("/echo?replayed"))
        post.httpMethod = "POST"
        post.httpBody = Data("order=7".utf8)
        let requests = [URLRequest(url: server.url("/binary/5000?replayed")), post, URLRequest(url: server.url("/status/503?replayed"))]
        for style in ClientStyle.allCases {
            // Recorded through the agent, as --save would.
            let recording = URLSession(configuration: sessionConfiguration(captured: true), delegate: style == .delegate ? RecordingDelegate() : nil,
                                       delegateQueue: nil)
            var recorded: [NetworkLog] = []
            for request in requests {
                _ = await performExchange(request, on: recording, style: style)
                let known = Set(recorded.map(\.id))
                var flow: NetworkLog?
                XCTAssertTrue(eventually {
                    flow = inspector.flows.values.first { $0.state.isFinal && $0.request.url == request.url?.absoluteString && !known.contains($0.id) }
                    return flow != nil
                })
                recorded += flow.map { [$0] } ?? []
            }
            recording.finishTasksAndInvalidate()

            let plain = URLSession(configuration: sessionConfiguration(captured: false), delegate: style == .delegate ? RecordingDelegate() : nil,
                                   delegateQueue: nil)
            var live: [String] = []
            for request in requests { live += await transcript(request, style: style, session: plain) }
            plain.finishTasksAndInvalidate()

            let options = ServerReplayOptions()
            sendAsViewer(.serverReplay(ServerReplayBook(options: options, entries: recorded.compactMap { flow in
                ServerReplayKey(method: flow.request.method, url: flow.request.url, headers: flow.request.headers,
                                body: flow.request.body?.data, options: options)
                    .map { ServerReplayEntry(key: $0, recordedID: flow.id, response: flow.response!) }
            })))
            XCTAssertTrue(eventually { agent.serverReplay.isActive })
            _ = server.takeRequests()
            let captured = URLSession(configuration: sessionConfiguration(captured: true), delegate: style == .delegate ? RecordingDelegate() : nil,
                                      delegateQueue: nil)
            var replayed: [String] = []
            for request in requests { replayed += await transcript(request, style: style, session: captured) }
            captured.finishTasksAndInvalidate()
            XCTAssertEqual(server.takeRequests().count, 0, "\(style): nothing reached the server")
            for index in 0 ..< max(live.count, replayed.count) {
                XCTAssertEqual(index < replayed.count ? replayed[index] : "<missing>", index < live.count ? live[index] : "<missing>",
                               "\(style), line \(index + 1): replayed / live")
            }
            sendAsViewer(.serverReplay(nil))
            XCTAssertTrue(eventually { !agent.serverReplay.isActive })
        }
    }
}
