// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import NIOHTTP1
import WireProtocol
import XCTest
@testable import CaptureAgent

/// The AsyncHTTPClient control handlers beyond the shared scenario table:
/// with control allowed and nothing to do they change nothing (HTTP/1,
/// TLS, HTTP/2, streamed bodies, redirects, decompression), and rules and
/// edits work on HTTP/2 streams and decompressed responses too.
final class AsyncHTTPClientControlTests: AgentTestCase, @unchecked Sendable {
    override func agentConfiguration(_ configuration: inout CaptureAgent.Configuration) {
        configuration.allowsControl = true
    }

    private func push(_ rules: [TrafficRule]) {
        inspector.write(ViewerMessage.rules(rules).frame(), toConnection: 0)
        XCTAssertTrue(eventually { agent.rules.rules.count == rules.count })
    }

    private func intercept(_ filter: String) {
        inspector.write(ViewerMessage.intercept(filter).frame(), toConnection: 0)
        XCTAssertTrue(eventually { agent.breakpoints.isActive })
    }

    /// Runs `request` without and with capture; asserts the app and the server
    /// saw the same. `takeRequests` waits for what is still arriving.
    private func assertUnchanged(_ request: AHCRequest, api: AHCAPI, configuration: HTTPClient.Configuration = ahcConfiguration(),
                                 takeRequests: @escaping () -> [ReceivedRequest], file: StaticString = #filePath, line: UInt = #line) async {
        _ = takeRequests()
        let plain = await performAHC(request, api: api, configuration: configuration)
        let plainRequests = takeRequests()
        var captured = configuration
        agent.capture(&captured)
        let outcome = await performAHC(request, api: api, configuration: captured)
        XCTAssertEqual(outcome, plain, "\(request.url) \(api)", file: file, line: line)
        XCTAssertEqual(takeRequests(), plainRequests, "\(request.url) \(api)", file: file, line: line)
    }

    func testWithRulesAndAFilterThatMatchNothingEveryExchangeIsUnchanged() async throws {
        push([try TrafficRule(.mapRemote, spec: "|never\\.example|127.0.0.1:9"), try TrafficRule(.modifyHeaders, spec: "/~d never.example/X-A/1")])
        intercept("~u /never-matches-anything")
        let take = { [server] in server!.takeRequestsOnceArrived() }
        let body = TestHTTPServer.pattern(count: 300_000)
        for api in AHCAPI.allCases {
            await assertUnchanged(AHCRequest(url: server.url("/text?\(api)").absoluteString), api: api, takeRequests: take)
            await assertUnchanged(AHCRequest(method: .POST, url: server.url("/echo?\(api)").absoluteString, body: Array("order=7".utf8)),
                                  api: api, takeRequests: take)
            await assertUnchanged(AHCRequest(method: .PUT, url: server.url("/echo?streamed=\(api)").absoluteString, body: body, streamChunk: 16 * 1024),
                                  api: api, takeRequests: take)
            await assertUnchanged(AHCRequest(url: server.url("/redirect/302?to=/text").absoluteString), api: api, takeRequests: take)
            await assertUnchanged(AHCRequest(url: server.url("/gzip?\(api)").absoluteString), api: api,
                                  configuration: ahcConfiguration(decompression: true), takeRequests: take)
            await assertUnchanged(AHCRequest(url: server.url("/status/404").absoluteString), api: api, takeRequests: take)
        }
        for http2 in [false, true] {
            let tls = try TLSTestServer(http2: http2)
            defer { tls.shutdown() }
            for api in AHCAPI.allCases {
                let configuration = ahcConfiguration(tls: true, http2: http2)
                await assertUnchanged(AHCRequest(url: tls.url("/text?h2=\(http2)&\(api)")), api: api, configuration: configuration,
                                      takeRequests: tls.takeRequestsOnceArrived)
                await assertUnchanged(AHCRequest(method: .POST, url: tls.url("/echo?h2=\(http2)&\(api)"), body: Array(body.prefix(70_000))),
                                      api: api, configuration: configuration, takeRequests: tls.takeRequestsOnceArrived)
            }
        }
        XCTAssertEqual(agent.breakpoints.heldCount, 0)
    }

    func testRulesAndEditsWorkOnHTTP2Streams() async throws {
        let tls = try TLSTestServer(http2: true)
        defer { tls.shutdown() }
        var local = try TrafficRule(.mapLocal, spec: "|/fixture|/srv/f.txt")
        local.files = [TrafficRule.LocalFile(path: "", contentType: "text/plain", data: Data("local over h2".utf8))]
        push([try TrafficRule(.modifyHeaders, spec: "/X-Rule/on"), local])
        for api in AHCAPI.allCases {
            var configuration = ahcConfiguration(tls: true, http2: true)
            agent.capture(&configuration)
            _ = tls.takeRequests()
            let ruled = await performAHC(AHCRequest(url: tls.url("/text?\(api)")), api: api, configuration: configuration)
            XCTAssertEqual(ruled.version, "HTTP/2.0")
            XCTAssertEqual(tls.takeRequests().first?.headers.first { $0.name.lowercased() == "x-rule" }?.value, "on", "\(api)")
            let answered = await performAHC(AHCRequest(url: tls.url("/fixture?\(api)")), api: api, configuration: configuration)
            XCTAssertEqual(answered.status, 200, "\(answered)")
            XCTAssertEqual(answered.body, Array("local over h2".utf8))
            XCTAssertEqual(tls.takeRequests().count, 0, "\(api): nothing reached the server")
        }
    }

    func testAHeldDecompressedResponseIsShownAndDeliveredDecoded() async throws {
        intercept("~u /gzip & ~s")
        for api in AHCAPI.allCases {
            let plain = await performAHC(AHCRequest(url: server.url("/gzip?\(api)").absoluteString), api: api,
                                         configuration: ahcConfiguration(decompression: true))
            var configuration = ahcConfiguration(decompression: true)
            agent.capture(&configuration)
            let running = Task.detached { await performAHC(AHCRequest(url: self.server.url("/gzip?held=\(api)").absoluteString), api: api,
                                                           configuration: configuration) }
            var hold: FlowHold?
            XCTAssertTrue(eventually {
                hold = inspector.allMessages.lazy.compactMap { message -> FlowHold? in
                    guard case .held(let hold) = message, hold.phase == .response,
                          self.inspector.flows[hold.id]?.request.url.contains("held=\(api)") == true else { return nil }
                    return hold
                }.first
                return hold != nil
            })
            XCTAssertEqual(hold?.response?.body?.data, Data(TestHTTPServer.gzipPlain), "the viewer sees the body as the app will")
            inspector.write(ViewerMessage.resume(FlowResume(id: try XCTUnwrap(hold?.id))).frame(), toConnection: 0)
            let outcome = await running.value
            XCTAssertEqual(outcome.body, plain.body)
            XCTAssertEqual(outcome.status, plain.status)
        }
    }
}
#endif
