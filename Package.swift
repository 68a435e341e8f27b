// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "netinspect",
    products: [
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "CaptureAgent", targets: ["CaptureAgent"]),
        .library(name: "CaptureAgentAsyncHTTPClient", targets: ["CaptureAgentAsyncHTTPClient"]),
        .library(name: "CaptureAgentOpenAPI", targets: ["CaptureAgentOpenAPI"]),
        .library(name: "CaptureAgentHummingbird", targets: ["CaptureAgentHummingbird"]),
        .library(name: "CaptureAgentVapor", targets: ["CaptureAgentVapor"]),
        .library(name: "CaptureAgentGRPC", targets: ["CaptureAgentGRPC"]),
        .executable(name: "netinspect", targets: ["InspectorTUI"]),
        .executable(name: "netinspect-bench", targets: ["NetinspectBench"]),
    ],
    // Each server-side adapter is a trait, and so is the viewer, all on by
    // default. An app that captures only URLSession depends with `traits: []`
    // and resolves swift-distributed-tracing alone: SwiftPM leaves out a
    // package that only disabled traits' conditions name, even for targets the
    // app never builds, so every other product dependency of a library or
    // executable target carries a condition (test targets do not count).
    // The tests need the defaults; netinspect itself needs only `Viewer`. With
    // `Viewer` alone the tests build too, without the adapters' (CI's
    // ThreadSanitizer subset, which needs none of their packages).
    traits: [
        .trait(name: "Viewer", description: "netinspect itself: the terminal viewer, its OTLP receiver and netinspect-bench (SwiftNIO, swift-argument-parser)"),
        .trait(name: "AsyncHTTPClient", description: "CaptureAgentAsyncHTTPClient: AsyncHTTPClient and Vapor's client"),
        .trait(name: "OpenAPI", description: "CaptureAgentOpenAPI: swift-openapi-generator clients"),
        .trait(name: "Hummingbird", description: "CaptureAgentHummingbird: a Hummingbird 2 service's inbound requests"),
        .trait(name: "Vapor", description: "CaptureAgentVapor: a Vapor 4 service's inbound requests, and req.client through the agent"),
        .trait(name: "GRPC", description: "CaptureAgentGRPC: grpc-swift 2 clients and services, any transport"),
        .trait(name: "SwiftOTel", description: "Tests only: the swift-otel end-to-end test (swift-otel's OTLP/HTTP exporter reporting to netinspect); no library or executable uses it"),
        .default(enabledTraits: ["Viewer", "AsyncHTTPClient", "OpenAPI", "Hummingbird", "Vapor", "GRPC", "SwiftOTel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Only behind the adapters' traits: the server-side client products
        // and their tests. netinspect builds none of these: its own client is
        // URLSession and its TLS the system's OpenSSL, so its first build
        // compiles no BoringSSL.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        // Only for inbound capture in Hummingbird services, and its tests.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Only for WebSocket capture in Hummingbird services, and its tests.
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // Only for capture in Vapor services, and its tests.
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        // Only for gRPC capture (grpc-swift 2), its tests and its benchmark.
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        // Only so the tests can quiet the services they run.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only for the swift-otel end-to-end test (OTelEndToEndTests): its
        // OTLP/HTTP exporter alone (the gRPC one is its other default trait),
        // and the service group that runs it. A test target's dependencies
        // never reach an app that depends on this package (DependencyRuleTests).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The model and the framing: Foundation only, no I/O.
        .target(name: "WireProtocol"),

        // The mitmproxy-style flow filter language: the inspector filters its
        // list with it, the agent matches traffic rules with it. Foundation only.
        .target(name: "FlowFilter", dependencies: ["WireProtocol"]),

        // Embedded in other people's programs, so it depends on nothing but
        // Foundation (and FoundationNetworking on Linux), WireProtocol and
        // FlowFilter, and swift-distributed-tracing's API: the task-local
        // ServiceContext an inbound handler runs in, and the opt-in spans.
        .target(
            name: "CaptureAgent",
            dependencies: [
                "WireProtocol", "FlowFilter",
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(name: "AgentDemo", dependencies: ["CaptureAgent"], path: "Examples/AgentDemo"),

        // Capture for AsyncHTTPClient (and so Vapor's client): a pass-through
        // channel handler on each connection AsyncHTTPClient builds, plus a
        // tracer for what never reaches a connection.
        .target(
            name: "CaptureAgentAsyncHTTPClient",
            dependencies: [
                "CaptureAgent", "WireProtocol",
                // Conditioned on Vapor too: Vapor's client is AsyncHTTPClient,
                // and CaptureAgentVapor reports its failures as this adapter does.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                // The control tunnel's sockets (ControlTunnel.swift).
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras", condition: .when(traits: ["AsyncHTTPClient", "Vapor"])),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Capture for swift-openapi clients: a ClientMiddleware, any transport.
        .target(
            name: "CaptureAgentOpenAPI",
            dependencies: [
                "CaptureAgent", "WireProtocol",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI"])),
            ]
        ),
        // Inbound capture for Hummingbird 2 services: a router middleware, and
        // a server builder for WebSocket routes.
        .target(
            name: "CaptureAgentHummingbird",
            dependencies: [
                "CaptureAgent", "WireProtocol",
                .target(name: "CaptureAgentWebSocket", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
            ]
        ),
        // WebSocket capture on a SwiftNIO channel, whichever framework built
        // it: a pass-through handler after the frame decoder. Not a product;
        // the Hummingbird and Vapor adapters use it.
        .target(
            name: "CaptureAgentWebSocket",
            dependencies: [
                "CaptureAgent", "WireProtocol",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Hummingbird", "Vapor"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["Hummingbird", "Vapor"])),
            ]
        ),
        // Inbound capture for Vapor 4 services (a middleware) and `req.client`
        // through the agent (a client provider).
        .target(
            name: "CaptureAgentVapor",
            dependencies: [
                "CaptureAgent", "WireProtocol",
                .target(name: "CaptureAgentWebSocket", condition: .when(traits: ["Vapor"])),
                .target(name: "CaptureAgentAsyncHTTPClient", condition: .when(traits: ["Vapor"])),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Vapor"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Vapor"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["Vapor"])),
            ]
        ),
        // Capture for grpc-swift 2, client and server: a wrapper around the
        // transport, which sees every message as bytes whatever the serializer.
        .target(
            name: "CaptureAgentGRPC",
            dependencies: [
                "CaptureAgent", "WireProtocol",
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
            ]
        ),
        .executableTarget(
            name: "ServiceDemo",
            dependencies: [
                "CaptureAgent", "CaptureAgentAsyncHTTPClient", "CaptureAgentHummingbird",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
            ],
            path: "Examples/ServiceDemo"
        ),
        .executableTarget(
            name: "ServerClientDemo",
            dependencies: [
                "CaptureAgent", "CaptureAgentAsyncHTTPClient", "CaptureAgentOpenAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI"])),
            ],
            path: "Examples/ServerClientDemo"
        ),

        // The system's OpenSSL (libssl-dev), for the OTLP receiver's TLS; the
        // shim wraps what OpenSSL defines as macros. libssl.so.3 is on every
        // machine that runs FoundationNetworking (its libcurl links it); only
        // the headers are extra.
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),

        // ncursesw; the shim turns on the wide-char API. No pkgConfig: its
        // cflags carry -D flags SwiftPM refuses with a warning, and the
        // headers sit in the default include path anyway.
        .systemLibrary(name: "CNCursesW", providers: [.apt(["libncursesw5-dev"])]),

        // The receiving side of netinspect: the agents' listener (SwiftNIO),
        // the bounded `Inbox` it and the OTLP receiver post to, and the names
        // of where flows come from (`ConnectionID`, `PeerAddress.of`).
        .target(
            name: "InspectorIngest",
            dependencies: [
                "WireProtocol",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["Viewer"])),
            ]
        ),

        // Everything of the inspector that is plain Swift: store, state,
        // reducer, keymap, rendering to a cell grid, export, the headless
        // formats; it folds what the inbox hands it. No ncurses and no
        // sockets here, so tests and benchmarks link it.
        .target(
            name: "InspectorCore",
            dependencies: [
                "WireProtocol",
                "FlowFilter",
                // `InboxEvent` and `ConnectionID`: what the session folds.
                "InspectorIngest",
                // gRPC messages decoded raw or by `--proto` descriptor sets.
                "ProtobufWire",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["Viewer"])),
            ],
        ),

        // The protobuf wire format without a schema: for OTLP spans, and any
        // raw protobuf a viewer shows. No dependencies, so it fuzzes alone.
        .target(name: "ProtobufWire"),

        // OpenTelemetry traces in over OTLP/HTTP (or HTTPS, through the
        // system's OpenSSL), out as flows in the inspector's inbox: the fleet
        // view (docs/FLEET.md).
        .target(
            name: "OTLPReceiver",
            dependencies: [
                "InspectorIngest", "ProtobufWire", "WireProtocol", "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras", condition: .when(traits: ["Viewer"])),
            ]
        ),

        // The `netinspect` executable: argument parsing and the terminal layer.
        .executableTarget(
            name: "InspectorTUI",
            dependencies: [
                "InspectorCore",
                "InspectorIngest",
                "FlowFilter",
                "OTLPReceiver",
                "ProtobufWire",
                "CNCursesW",
                "CaptureAgent",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Viewer"])),
            ]
        ),

        // Every speed and memory figure of docs/BENCHMARKS.md, printed side by side.
        .executableTarget(
            name: "NetinspectBench",
            dependencies: [
                "WireProtocol", "InspectorCore", "InspectorIngest", "CaptureAgent", "CaptureAgentAsyncHTTPClient", "OTLPReceiver",
                .target(name: "CaptureAgentHummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
                .target(name: "CaptureAgentGRPC", condition: .when(traits: ["GRPC"])),
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport", condition: .when(traits: ["GRPC"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Viewer"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Viewer"])),
            ],
            path: "Benchmarks/NetinspectBench"
        ),

        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol"], exclude: ["Golden"]),
        .testTarget(name: "FlowFilterTests", dependencies: ["FlowFilter", "WireProtocol"]),
        // The decoder's fixtures are read from Tests/Protos through TestSupport.
        .testTarget(name: "ProtobufWireTests", dependencies: ["ProtobufWire", "TestSupport"]),
        // What the tests share: the netinspect binary, tmux driving it,
        // running programs, the protobuf fixtures, and the flows an agent
        // would send (`Fixtures`), for unit and end-to-end tests alike.
        .target(name: "TestSupport", dependencies: ["WireProtocol"], path: "Tests/TestSupport"),
        // The listener, its connections' state machine and the inbox, on
        // real sockets and without them.
        .testTarget(
            name: "InspectorIngestTests",
            dependencies: [
                "InspectorIngest", "WireProtocol", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
        ),
        // The viewer without a terminal or a process: store, reducer,
        // rendering, export, headless formats (`@testable import InspectorCore`).
        .testTarget(
            name: "InspectorCoreTests",
            dependencies: ["InspectorCore", "InspectorIngest", "FlowFilter", "WireProtocol", "ProtobufWire", "TestSupport"],
            // Snapshot screens and the HAR schema are read through #filePath,
            // not as resources.
            exclude: ["Fixtures", "Snapshots"]
        ),
        .testTarget(
            name: "OTLPReceiverTests",
            dependencies: [
                "OTLPReceiver", "ProtobufWire", "InspectorIngest", "WireProtocol", "CaptureAgent", "TestSupport",
                // `Session`, to fold what the receiver posts as the viewer does.
                "InspectorCore",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                // Only so the real `netinspect` binary is built before the
                // tests that run it as the receiver.
                "InspectorTUI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // The Python exporter script is run through #filePath.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "CaptureAgentTests",
            dependencies: [
                "CaptureAgent",
                "TestSupport",
                // Only so the real `netinspect` binary is built before the
                // fault-injection tests run it as the inspector process.
                "InspectorTUI",
                // Likewise, the service demo its test runs.
                .target(name: "ServiceDemo", condition: .when(traits: ["Hummingbird"])),
                "WireProtocol",
                "CaptureAgentAsyncHTTPClient",
                // The spans AsyncHTTPClient's tracer is given (CaptureTracerTests).
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "CaptureAgentOpenAPI",
                .target(name: "CaptureAgentHummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                // WebSocket routes, captured and not, for Python's `websockets` to talk to.
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: .when(traits: ["Hummingbird"])),
                .target(name: "CaptureAgentVapor", condition: .when(traits: ["Vapor"])),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird", "Vapor"])),
                // gRPC clients and services over the in-process and HTTP/2
                // transports; their messages are real protobuf bytes.
                .target(name: "CaptureAgentGRPC", condition: .when(traits: ["GRPC"])),
                .target(name: "ProtobufWire", condition: .when(traits: ["GRPC"])),
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                .product(name: "GRPCInProcessTransport", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport", condition: .when(traits: ["GRPC"])),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The server-side clients, and a TLS / HTTP/2 loopback server for
                // them (TLSTestServer), each behind its trait: with `Viewer` alone
                // (CI's ThreadSanitizer build) none of them, nor BoringSSL, is compiled.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI", "Hummingbird"])),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["AsyncHTTPClient"])),
            ],
            // The Python WebSocket peers are run through #filePath.
            exclude: ["Fixtures"]
        ),
        // An app with CaptureAgent and swift-otel's OTLP/HTTP exporter, both
        // reporting to the real netinspect (docs/FLEET.md, "From a Swift
        // service"). Behind its own trait so that the sanitizer builds, which
        // name the traits they need, leave swift-otel and swift-protobuf out.
        .testTarget(
            name: "OTelEndToEndTests",
            dependencies: [
                "CaptureAgent", "WireProtocol", "TestSupport",
                // Only so the real `netinspect` binary is built before the test runs it.
                "InspectorTUI",
                .product(name: "OTel", package: "swift-otel", condition: .when(traits: ["SwiftOTel"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["SwiftOTel"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["SwiftOTel"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["SwiftOTel"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["SwiftOTel"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["SwiftOTel"])),
            ]
        ),
        .testTarget(
            name: "InspectorTUITests",
            dependencies: [
                "InspectorCore",
                "InspectorIngest",
                "FlowFilter",
                "TestSupport",
                "InspectorTUI",
                "WireProtocol",
                // RawRequestServer, the server netinspect's own client talks to.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
