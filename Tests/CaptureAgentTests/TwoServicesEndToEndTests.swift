// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import XCTest
@testable import CaptureAgent

/// Two instances of the `ServiceDemo` executable, each in its own process
/// with its own agent, on loopback: the shop's checkout calls the stock
/// service's inventory with AsyncHTTPClient. One real netinspect sees both
/// apps, tells them apart, and nests the stock service's request under the
/// shop's call, with no header added to the traffic.
final class TwoServicesEndToEndTests: XCTestCase {
    private struct Services {
        var stock: ExampleProgram.Running
        var shop: ExampleProgram.Running
    }

    /// Starts the stock service, then the shop asking it for inventory,
    /// both reporting to `endpoint`, and sends the shop one checkout.
    private func startServicesAndCheckOut(inspector endpoint: String) async throws -> Services {
        let demo = ExampleProgram(name: "ServiceDemo")
        let stock = try demo.launch(arguments: ["--port", "0"], inspector: endpoint)
        let stockPort = try stock.listeningPort()
        let shop = try demo.launch(arguments: ["--port", "0", "--inventory", "127.0.0.1:\(stockPort)"], inspector: endpoint)
        let shopPort = try shop.listeningPort()
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(shopPort)/checkout")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: "{\"cart\":[42]}"))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        XCTAssertEqual(response.status.code, 200, "\(String(buffer: body))\nshop: \(shop.output)\nstock: \(stock.output)")
        return Services(stock: stock, shop: shop)
    }

    private func rows(of texts: [String], in screen: String) -> [Int?] {
        let lines = screen.components(separatedBy: "\n")
        return texts.map { text in lines.firstIndex { $0.contains(text) } }
    }

    func testTheCalleesRequestNestsUnderTheCallersCallAndEachInstanceIsNamedByItsProcess() async throws {
        let ui = try TmuxSession(name: "twoservices")
        try ui.waitUntilListening()
        defer { ui.kill() }
        let services = try await startServicesAndCheckOut(inspector: "unix:\(ui.socketPath)")
        let (stock, shop) = (services.stock.pid, services.shop.pid)
        var screen = try ui.waitFor("←GET")
        screen = try ui.waitFor("/checkout")
        // Both are `ServiceDemo`: the app column says which process.
        let lines = screen.components(separatedBy: "\n")
        let received = try XCTUnwrap(lines.first { $0.contains("←GET") && $0.contains("/inventory/42") }, screen)
        let call = try XCTUnwrap(lines.first { $0.contains(" GET ") && !$0.contains("←") && $0.contains("/inventory/42") }, screen)
        XCTAssertTrue(received.contains("[\(stock)]"), "the stock service's request names its process:\n\(screen)")
        XCTAssertTrue(call.contains("[\(shop)]"), "the shop's call names its process:\n\(screen)")

        ui.send("T")
        screen = try ui.waitFor("└ /inventory/42")
        let nested = rows(of: ["▾ /checkout", "▾ /inventory/42", "  └ /inventory/42"], in: screen)
        XCTAssertEqual(nested.compactMap { $0 }.count, 3, "checkout, its call, and the stock service's request under the call:\n\(screen)")
        if let checkout = nested[0], let caller = nested[1], let callee = nested[2] {
            XCTAssertEqual([caller - checkout, callee - caller], [1, 1], screen)
            XCTAssertTrue(screen.components(separatedBy: "\n")[callee].contains("←GET"), screen)
        }

        // `~pid` keeps one instance; `~parent` follows the link across processes.
        ui.send("f")
        ui.type("~pid \(stock)")
        ui.send("Enter")
        screen = try ui.waitFor("~pid \(stock)")
        _ = try ui.waitFor("←GET")
        screen = ui.capture()
        XCTAssertFalse(screen.contains("/checkout"), "only the stock service's flows:\n\(screen)")
        XCTAssertTrue(screen.contains("/inventory/42"), screen)

        ui.send("f")
        ui.send("C-u")
        ui.type("~parent (~pid \(shop) & ~outbound)")
        ui.send("Enter")
        screen = try ui.waitFor("~parent (~pid \(shop)")
        let shown = screen.components(separatedBy: "\n").filter { $0.contains("/inventory/42") || $0.contains("/checkout") }
        XCTAssertEqual(shown.count, 1, "only the request the shop's call made:\n\(screen)")
        XCTAssertTrue(shown.first?.contains("←GET") == true, screen)
    }

    func testDumpPairsTheCallWithTheRequestItMadeAndNamesEachInstance() async throws {
        let inspector = try InspectorProcess(listen: "unix:\(temporarySocketPath("dumplink"))", output: "--dump")
        defer { inspector.killAndWait() }
        let services = try await startServicesAndCheckOut(inspector: "unix:\(inspector.path)")
        XCTAssertTrue(eventually(timeout: 30) { inspector.lineCount >= 3 }, inspector.output + inspector.errorOutput)
        let lines = inspector.output.split(separator: "\n").map(String.init)
        let received = try XCTUnwrap(lines.first { $0.contains("←GET") }, inspector.output)
        let call = try XCTUnwrap(lines.first { !$0.contains("←") && $0.contains("/inventory/42") }, inspector.output)
        XCTAssertTrue(received.contains("ServiceDemo[\(services.stock.pid)] "), received)
        XCTAssertTrue(call.contains("ServiceDemo[\(services.shop.pid)] "), call)
        // Whichever line came second names the other's id.
        func id(after mark: String, in line: String) -> String? {
            line.range(of: mark + #"[0-9A-F]{8}"#, options: .regularExpression).map { String(line[$0].dropFirst()) }
        }
        if let callID = id(after: "↑", in: received) {
            XCTAssertEqual(id(after: "#", in: call), callID, "the call's line carries the id its request names:\n\(call)\n\(received)")
        } else {
            let receivedID = try XCTUnwrap(id(after: "#", in: received), received)
            XCTAssertEqual(id(after: "↓", in: call), receivedID, "the call names the request's id:\n\(call)\n\(received)")
        }
    }

    func testJSONLinesNameTheAppAndProcessOfEachFlow() async throws {
        let inspector = try InspectorProcess(listen: "unix:\(temporarySocketPath("jsonapp"))")
        defer { inspector.killAndWait() }
        let services = try await startServicesAndCheckOut(inspector: "unix:\(inspector.path)")
        XCTAssertTrue(eventually(timeout: 30) { inspector.lineCount >= 3 }, inspector.output + inspector.errorOutput)
        let flows = inspector.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let apps = flows.compactMap { $0["app"] as? [String: Any] }
        XCTAssertEqual(apps.count, flows.count, inspector.output)
        XCTAssertTrue(apps.allSatisfy { $0["name"] as? String == "ServiceDemo" && $0["host"] as? String == ProcessInfo.processInfo.hostName })
        let received = try XCTUnwrap(flows.first { $0["direction"] as? String == "inbound" && "\($0["request"] ?? "")".contains("/inventory/42") })
        XCTAssertEqual((received["app"] as? [String: Any])?["pid"] as? Int, services.stock.pid)
        let checkout = try XCTUnwrap(flows.first { "\($0["request"] ?? "")".contains("/checkout") })
        XCTAssertEqual((checkout["app"] as? [String: Any])?["pid"] as? Int, services.shop.pid)
    }
}
#endif
