// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgentVapor
import Foundation
import Logging
import Vapor
@testable import CaptureAgent

extension ControlAdapter {
    /// `request` through a Vapor application's `app.client`: the agent's
    /// client provider when captured, else Vapor's own (`.http`).
    func sendVapor(_ request: ScenarioRequest, agent: CaptureAgent?) async -> ScenarioOutcome {
        guard let app = try? await Application.make(.testing) else { return ScenarioOutcome(failed: true) }
        app.logger = Logger(label: "scenario-client", factory: { _ in SwiftLogNoOpLogHandler() })
        if let agent { app.clients.use(.captured(by: agent)) }
        var outgoing = ClientRequest(method: HTTPMethod(rawValue: request.method), url: URI(string: request.url.absoluteString),
                                     headers: HTTPHeaders(request.headers), body: request.body.map { ByteBuffer(bytes: $0) })
        outgoing.timeout = .seconds(60)
        let outcome: ScenarioOutcome
        do {
            let response = try await app.client.send(outgoing).get()
            outcome = ScenarioOutcome(status: Int(response.status.code), body: response.body.map { Array($0.readableBytesView) } ?? [],
                                      marked: Self.marked(response.headers.map { ($0.name, $0.value) }))
        } catch {
            outcome = ScenarioOutcome(failed: true, error: ScenarioOutcome.describing(error))
        }
        try? await app.asyncShutdown()
        return outcome
    }
}
#endif
