// ServiceDemo: a Hummingbird service whose inbound requests, and the calls
// each one makes, are captured.
//
//     swift run ServiceDemo                 serve on 127.0.0.1:8080 until Ctrl-C
//     swift run ServiceDemo --self-test     serve, call /checkout three times, exit
//     swift run ServiceDemo --port 8090 --inventory 127.0.0.1:8080
//                                           a second instance, whose checkouts ask
//                                           the first for inventory (`--port 0`: any)
//
// Then `curl -X POST 127.0.0.1:8080/checkout` while netinspect runs: the
// checkout shows with the inventory call it made nested under it.
// docs/AGENT.md's Hummingbird snippet is the marked part of this file (a test
// keeps them identical).
#if Hummingbird
import AsyncHTTPClient
import CaptureAgent
import CaptureAgentAsyncHTTPClient
import CaptureAgentHummingbird
import Foundation
import Hummingbird
import NIOCore

let selfTest = CommandLine.arguments.contains("--self-test")
func option(_ name: String) -> String? {
    CommandLine.arguments.firstIndex(of: name).flatMap { CommandLine.arguments.dropFirst($0 + 1).first }
}
let port = option("--port").flatMap(Int.init) ?? (selfTest ? 0 : 8080)
let inventory = option("--inventory")

// snippet:hummingbird:begin
let agent = try CaptureAgent.start()          // $NETINSPECT, else the default socket

var configuration = HTTPClient.Configuration()
agent.capture(&configuration)                  // the calls handlers make
let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

let router = Router(context: PeerContext.self)
router.add(middleware: InboundCaptureMiddleware(agent: agent))   // the requests the service receives

/// A context that knows the client's address: the flow records it as its
/// peer, and netinspect nests a request sent by another captured service
/// under that service's call.
struct PeerContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
// snippet:hummingbird:end

let listening = AsyncStream<Int>.makeStream()
router.get("inventory/:item") { _, context -> String in
    "{\"item\":\"\(context.parameters.get("item") ?? "")\",\"inStock\":3}"
}
router.post("checkout") { request, _ -> String in
    let cart = try await request.body.collect(upTo: 1 << 16)
    // Made while handling the checkout, so its flow names the checkout's as its parent.
    let service = inventory ?? request.head.authority ?? "127.0.0.1:\(port)"
    let stock = try await httpClient.execute(HTTPClientRequest(url: "http://\(service)/inventory/42"), timeout: .seconds(5))
    _ = try await stock.body.collect(upTo: 1 << 16)
    return "{\"order\":\"A-1\",\"cartBytes\":\(cart.readableBytes),\"inventory\":\(stock.status.code)}"
}

let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    onServerRunning: { channel in listening.continuation.yield(channel.localAddress?.port ?? 0) }
)
let service = Task { try await app.run() }
func firstPort(_ ports: AsyncStream<Int>) async -> Int {
    for await port in ports { return port }
    return 0
}
let boundPort = await firstPort(listening.stream)
// Written at once, not buffered: a test or script waiting for the port reads it through a pipe.
FileHandle.standardOutput.write(Data("ServiceDemo: listening on 127.0.0.1:\(boundPort)\n".utf8))

if selfTest {
    var failures = 0
    for _ in 0..<3 {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(boundPort)/checkout")
        request.method = .POST
        request.body = .bytes(Array("{\"cart\":[42]}".utf8))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        print("POST /checkout: \(response.status.code) \(String(buffer: body))")
        if response.status.code != 200 { failures += 1 }
    }
    service.cancel()
    _ = await service.result
    try await httpClient.shutdown().get()
    agent.stop()
    exit(failures == 0 ? 0 : 1)
} else {
    _ = await service.result
}
#else
import Foundation
FileHandle.standardError.write(Data("ServiceDemo needs the package's Hummingbird trait (on by default)\n".utf8))
exit(2)
#endif
