import Foundation
import TestSupport
import XCTest

/// An app that captures only URLSession depends on this package with
/// `traits: []` and resolves the agent's one dependency, swift-distributed-tracing, and
/// nothing else (Package.swift's traits; README, "Capture your own program").
final class DependencyRuleTests: XCTestCase {
    func testAURLSessionOnlyAppResolvesTracingAndNothingElse() throws {
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

        let (status, text) = try ProgramRun.run(["/usr/bin/env", "swift", "package", "--package-path", app.path, "resolve"])
        XCTAssertEqual(status, 0, text)

        // The whole resolved set, not only the absence of the adapters: a
        // package the viewer or an adapter needs must not reach the app either.
        let resolved = try String(contentsOf: app.appendingPathComponent("Package.resolved"), encoding: .utf8)
        let identities = resolved.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "\"identity\" : \"") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }
        XCTAssertEqual(Set(identities), ["swift-distributed-tracing"], resolved)
    }

    /// netinspect (InspectorTUI and every target it is built from) uses
    /// SwiftNIO, swift-nio-extras' HTTP compression, swift-argument-parser
    /// and the agent's tracing API, and none of the adapters' packages: no
    /// AsyncHTTPClient, no swift-nio-ssl (whose BoringSSL was more than half
    /// of its first build), no swift-nio-http2.
    func testNetinspectIsBuiltFromNoAdaptersPackages() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // A scratch path of its own: under `swift test`, the package's own
        // .build is locked by the run itself, and dump-package would wait
        // for that lock for ever.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-package-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let dump = try ProgramRun.collect(["/usr/bin/env", "swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"],
                                          timeout: 120)
        XCTAssertEqual(dump.status, 0, dump.errorOutput)
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any], dump.output)
        let targets = try XCTUnwrap(manifest["targets"] as? [[String: Any]])
        let dependencies = Dictionary(uniqueKeysWithValues: targets.map { target in
            (target["name"] as? String ?? "", target["dependencies"] as? [[String: [Any]]] ?? [])
        })
        var packages: Set<String> = []
        var seen: Set<String> = []
        var next = ["InspectorTUI"]
        while let name = next.popLast() {
            guard seen.insert(name).inserted else { continue }
            for dependency in dependencies[name] ?? [] {
                if let product = dependency["product"], product.count > 1, let package = product[1] as? String {
                    packages.insert(package)
                } else if let target = (dependency["byName"] ?? dependency["target"])?.first as? String, dependencies[target] != nil {
                    next.append(target)
                }
            }
        }
        XCTAssertTrue(seen.isSuperset(of: ["InspectorCore", "OTLPReceiver", "COpenSSL"]), "\(seen)")
        XCTAssertEqual(packages, ["swift-nio", "swift-nio-extras", "swift-argument-parser", "swift-distributed-tracing"])
    }
}
