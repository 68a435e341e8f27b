import Foundation
import XCTest

/// docs/AGENT.md and README name every trait Package.swift declares (the
/// adapters, the viewer and the tests' swift-otel), each with its product
/// (or test target), so a reader choosing `traits:` sees them all.
final class PackageTraitsDocumentationTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The traits of Package.swift, in the order declared (the default set aside).
    private func declaredTraits() throws -> [String] {
        let manifest = try text("Package.swift")
        let pattern = try NSRegularExpression(pattern: #"\.trait\(name: "([A-Za-z]+)""#)
        return pattern.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)).compactMap {
            Range($0.range(at: 1), in: manifest).map { String(manifest[$0]) }
        }
    }

    func testAgentDocsNameEveryTraitWithItsProduct() throws {
        let traits = try declaredTraits()
        XCTAssertEqual(traits, ["Viewer", "AsyncHTTPClient", "OpenAPI", "Hummingbird", "Vapor", "GRPC", "SwiftOTel"],
                       "the traits this test knows the products of")
        let products = ["Viewer": "netinspect", "AsyncHTTPClient": "CaptureAgentAsyncHTTPClient", "OpenAPI": "CaptureAgentOpenAPI",
                        "Hummingbird": "CaptureAgentHummingbird", "Vapor": "CaptureAgentVapor", "GRPC": "CaptureAgentGRPC",
                        "SwiftOTel": "OTelEndToEndTests"]
        let section = try text("docs/AGENT.md").components(separatedBy: "## A complete program")[0]
            .replacingOccurrences(of: "\n", with: " ")
        for trait in traits {
            XCTAssertTrue(section.contains("`\(trait)` (`\(products[trait] ?? "?")`") || section.contains("`\(trait)` (the `\(products[trait] ?? "?")`"),
                          "docs/AGENT.md's \"Add it\" names trait \(trait) with its product")
        }
    }

    func testReadmeNamesEveryTrait() throws {
        let readme = try text("README.md")
        for trait in try declaredTraits() {
            XCTAssertTrue(readme.contains("[\"\(trait)\"]"), "README's Package.swift snippet names trait \(trait)")
        }
    }
}
