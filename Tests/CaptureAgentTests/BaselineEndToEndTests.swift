// Built with the Hummingbird and AsyncHTTPClient traits (on by default; Package.swift).
#if Hummingbird && AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import TestSupport
import WireProtocol
import XCTest
@testable import CaptureAgent

/// `--baseline` as CI runs it: a captured Hummingbird service, recorded by
/// the real `netinspect --save` on a good run, then run again with one
/// handler made slower, an N+1 brought into another (each checkout asks
/// for its items one by one) and a field renamed in a third; `netinspect
/// --read … --baseline …` names those three changes and nothing else, and
/// `--fail-on-change` turns them into exit status 3. Each run's service
/// listens on a port of its own, as test servers do.
final class BaselineEndToEndTests: XCTestCase, @unchecked Sendable {
    private let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("baseline-\(getpid())-\(UUID().uuidString.prefix(8))")

    override func setUpWithError() throws {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// What the second run changes.
    private struct Regressions {
        var slowSearch = false
        var itemsOneByOne = false
        var renamedField = false
    }

    /// Runs the service once, driven by an uncaptured client (so only the
    /// service's own flows are recorded), and returns the `--save` file.
    private func record(_ name: String, _ regressions: Regressions) async throws -> String {
        let saved = scratch.appendingPathComponent("\(name).jsonl").path
        let socket = temporarySocketPath("baseline-\(name)")
        let inspector = try InspectorProcess(listen: "unix:\(socket)", arguments: ["--save", saved])
        defer { inspector.killAndWait() }
        let agent = try CaptureAgent.start(.init(destination: .unix(path: socket)) { $0.initialConnectionWait = 5 })
        defer { agent.stop() }
        var configuration = HTTPClient.Configuration()
        agent.capture(&configuration)
        let calls = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let port = NIOLockedValueBox(0)
        let service = try await HummingbirdScenarioService.start(captureInto: agent) { router in
            router.get("orders/:id") { _, context in
                let id = context.parameters.get("id") ?? "?"
                let who = regressions.renamedField ? "buyer" : "customer"
                return Response(status: .ok, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: #"{"id":"\#(id)","\#(who)":"Ada","total":12.5}"#)))
            }
            router.get("search") { _, _ -> String in
                try await pace(.milliseconds(regressions.slowSearch ? 300 : 5))
                return "[]"
            }
            router.get("items/:id") { _, context -> String in "item \(context.parameters.get("id") ?? "?")" }
            router.get("checkout") { _, _ -> String in
                let base = "http://127.0.0.1:\(port.withLockedValue { $0 })"
                if regressions.itemsOneByOne {
                    for item in 1...6 { _ = try await calls.execute(HTTPClientRequest(url: "\(base)/items/\(item)"), timeout: .seconds(10)) }
                } else {
                    _ = try await calls.execute(HTTPClientRequest(url: "\(base)/items/1"), timeout: .seconds(10))
                }
                return "ok"
            }
        }
        port.withLockedValue { $0 = service.port }
        let driver = HTTPClient(eventLoopGroupProvider: .singleton)
        for _ in 0..<6 {
            for path in ["/orders/7", "/search", "/checkout"] {
                let response = try await driver.execute(HTTPClientRequest(url: "http://127.0.0.1:\(service.port)\(path)"), timeout: .seconds(10))
                XCTAssertEqual(response.status, .ok, path)
                _ = try await response.body.collect(upTo: 1 << 20)
            }
        }
        try await driver.shutdown()
        // The driver's 18 requests, and the checkouts' calls, each a call and the request it made.
        let expected = 18 + 2 * (regressions.itemsOneByOne ? 36 : 6)
        XCTAssertTrue(eventually(timeout: 20) { inspector.lineCount >= expected }, "\(inspector.lineCount) of \(expected) flows: \(inspector.errorOutput)")
        await service.stop()
        try await calls.shutdown()
        return saved
    }

    func testTheBaselineNamesTheSlowerRouteTheNPlusOneAndTheRenamedFieldAndNothingElse() async throws {
        let baseline = try await record("good", Regressions())
        let unchanged = try await record("same", Regressions())
        let regressed = try await record("regressed", Regressions(slowSearch: true, itemsOneByOne: true, renamedField: true))
        let binary = NetinspectBinary.url.path
        // A loopback test server's port is left out of the match; the floor
        // keeps a checkout's five extra loopback calls (a few ms) from
        // reading as its own latency change.
        let options = ["--dump", "--baseline", baseline, "--baseline-latency-floor", "100", "--changes", "-", "--fail-on-change", "all"]

        let same = try ProgramRun.collect([binary, "--read", unchanged] + options)
        XCTAssertEqual(same.status, 0, same.errorOutput)
        XCTAssertTrue(same.errorOutput.contains("no change against the baseline"), same.errorOutput)

        let run = try ProgramRun.collect([binary, "--read", regressed] + options)
        XCTAssertEqual(run.status, 3, "a change --fail-on-change names ends the run with 3: \(run.errorOutput)")
        let changes = run.output.split(separator: "\n").compactMap { line -> RunChangeLine? in
            try? JSONDecoder().decode(RunChangeLine.self, from: Data(line.utf8))
        }
        XCTAssertEqual(changes.map { "\($0.kind) \($0.route)" }, [
            "fan-out ← GET localhost/checkout",
            "shape ← GET localhost/orders/{id}",
            "latency ← GET localhost/search",
        ], "sorted by route:\n\(run.errorOutput)")
        guard changes.count == 3 else { return }
        XCTAssertEqual(changes[0].detail, "6 calls a request to GET localhost/items/{id}, 1 before")
        XCTAssertEqual(changes[1].detail, "response body: removed /customer (string); added /buyer (string)")
        XCTAssertTrue(changes[2].detail.hasPrefix("p50 "), changes[2].detail)
        XCTAssertNotNil(changes[2].filter, "a filter that shows the flows behind it")
        XCTAssertTrue(run.errorOutput.contains("3 changes against the baseline"), run.errorOutput)
    }

    /// Bad input gets a clear error before anything runs.
    func testBadBaselineOptionsAreRefusedWithWhy() throws {
        let binary = NetinspectBinary.url.path
        let file = scratch.appendingPathComponent("one.jsonl").path
        let flow = NetworkLog(request: WireProtocol.Request(method: "GET", url: "http://127.0.0.1:1/"), timing: Timing(startedAt: Date()), state: .completed)
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: flow.jsonLine() + Data("\n".utf8)))
        for (arguments, why) in [
            (["--dump", "--read", file, "--baseline", file, "--fail-on-change", "slow"], "'slow' is not a change kind"),
            (["--dump", "--read", file, "--changes", "-"], "add --baseline FILE"),
            (["--dump", "--read", file, "--baseline", file + ".missing"], "--baseline \(file).missing"),
        ] {
            let run = try ProgramRun.collect([binary] + arguments)
            XCTAssertNotEqual(run.status, 0, "\(arguments)")
            XCTAssertTrue(run.errorOutput.contains(why), "\(arguments): \(run.errorOutput)")
        }
    }

    /// One line of `--changes`, as a script reads it.
    private struct RunChangeLine: Decodable {
        var kind: String
        var route: String
        var detail: String
        var filter: String?
    }
}
#endif
