import Foundation
import XCTest

/// An app that captures only URLSession depends on this package with
/// `traits: []` and must resolve none of the server-side adapters' packages
/// (Package.swift's traits; README, "Capture your own program").
final class DependencyRuleTests: XCTestCase {
    func testAURLSessionOnlyAppResolvesNoAdapterPackage() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let app = FileManager.default.temporaryDirectory.appendingPathComponent("netinspect-urlsession-app-\(getpid())")
        try? FileManager.default.removeItem(at: app)
        try FileManager.default.createDirectory(at: app.appendingPathComponent("Sources/App"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: app) }
        try """
        // swift-tools-version:6.1
        import PackageDescription
        let package = Package(
            name: "app",
            dependencies: [.package(path: "\(root.path)", traits: [])],
            targets: [.executableTarget(name: "App", dependencies: [.product(name: "CaptureAgent", package: "\(root.lastPathComponent)")])]
        )
        """.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "import CaptureAgent\n".write(to: app.appendingPathComponent("Sources/App/main.swift"), atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", app.path, "resolve"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)

        let checkouts = try FileManager.default.contentsOfDirectory(atPath: app.appendingPathComponent(".build/checkouts").path)
        XCTAssertTrue(checkouts.contains("swift-distributed-tracing"), "the agent's one dependency is resolved: \(checkouts)")
        for adapter in ["async-http-client", "hummingbird", "vapor", "swift-openapi-runtime", "swift-openapi-async-http-client",
                        "grpc-swift-2", "grpc-swift-nio-transport"] {
            XCTAssertFalse(checkouts.contains(adapter), "\(adapter) was resolved for a URLSession-only app: \(checkouts)")
        }
    }
}
