// swift-tools-version:6.2
// The swift-otel end-to-end test (docs/FLEET.md, "From a Swift service"):
// an app with CaptureAgent and swift-otel's OTLP/HTTP exporter, both
// reporting to the real netinspect. A package of its own so that swift-otel
// (tools 6.2, its exporter behind a trait, ~7 minutes of cold build) stays
// out of the root package's resolution and test build. CI runs it after the
// main `swift test` (.ci/run); the netinspect binary comes from that build.
import Foundation
import PackageDescription

/// A path dependency's identity is its folder's name, which is whatever the
/// clone is called; the root package is two levels up.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "OTelEndToEnd",
    dependencies: [
        // No traits: the agent as a URLSession-only app gets it, with only
        // swift-distributed-tracing besides (DependencyRuleTests).
        .package(path: "../..", traits: []),
        // The OTLP/HTTP exporter only; the gRPC one is the other default trait.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Already in swift-otel's graph: named to run its service and a loopback server.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .testTarget(
            name: "OTelEndToEndTests",
            dependencies: [
                .product(name: "CaptureAgent", package: root),
                .product(name: "WireProtocol", package: root),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
