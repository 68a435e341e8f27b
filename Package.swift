// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "netinspect",
    products: [
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "CaptureAgent", targets: ["CaptureAgent"]),
        .executable(name: "netinspect", targets: ["InspectorTUI"]),
        .executable(name: "netinspect-bench", targets: ["NetinspectBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The model and the framing: Foundation only, no I/O.
        .target(name: "WireProtocol"),

        // The mitmproxy-style flow filter language: the inspector filters its
        // list with it, the agent matches traffic rules with it. Foundation only.
        .target(name: "FlowFilter", dependencies: ["WireProtocol"]),

        // Embedded in other people's programs, so it depends on nothing but
        // Foundation (and FoundationNetworking on Linux), WireProtocol and FlowFilter.
        .target(name: "CaptureAgent", dependencies: ["WireProtocol", "FlowFilter"]),
        .executableTarget(name: "AgentDemo", dependencies: ["CaptureAgent"], path: "Examples/AgentDemo"),

        // ncursesw; the shim turns on the wide-char API. No pkgConfig: its
        // cflags carry -D flags SwiftPM refuses with a warning, and the
        // headers sit in the default include path anyway.
        .systemLibrary(name: "CNCursesW", providers: [.apt(["libncursesw5-dev"])]),

        // Everything of the inspector that is plain Swift or SwiftNIO: store,
        // filter language, state, reducer, keymap, rendering to a cell grid,
        // and the listener. No ncurses here, so tests and benchmarks link it.
        .target(
            name: "InspectorCore",
            dependencies: [
                "WireProtocol",
                "FlowFilter",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Sources/InspectorTUI/Core"
        ),

        // The `netinspect` executable: argument parsing and the terminal layer.
        .executableTarget(
            name: "InspectorTUI",
            dependencies: [
                "InspectorCore",
                "CNCursesW",
                "CaptureAgent",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Sources/InspectorTUI",
            exclude: ["Core"]
        ),

        // Every speed and memory figure of docs/BENCHMARKS.md, printed side by side.
        .executableTarget(
            name: "NetinspectBench",
            dependencies: [
                "WireProtocol", "InspectorCore", "CaptureAgent",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/NetinspectBench"
        ),

        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol"], exclude: ["Golden"]),
        .testTarget(
            name: "CaptureAgentTests",
            dependencies: [
                "CaptureAgent",
                // Only so the real `netinspect` binary is built before the
                // fault-injection tests run it as the inspector process.
                "InspectorTUI",
                "WireProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "InspectorTUITests",
            dependencies: [
                "InspectorCore",
                "FlowFilter",
                "InspectorTUI",
                "WireProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            // Snapshot screens and fixture files are read through #filePath,
            // not as resources.
            exclude: ["Fixtures", "Snapshots"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
