// ServerClientDemo: captures AsyncHTTPClient and an OpenAPI client.
//
//     swift run ServerClientDemo [URL]          (default http://127.0.0.1:8080/)
//     NETINSPECT=tcp:127.0.0.1:9123 swift run ServerClientDemo http://127.0.0.1:8080/
//
// docs/AGENT.md's AsyncHTTPClient and OpenAPI snippets are the marked parts of
// this file (a test keeps them identical).
#if AsyncHTTPClient && OpenAPI
import AsyncHTTPClient
import CaptureAgent
import CaptureAgentAsyncHTTPClient
import CaptureAgentOpenAPI
import Foundation
import OpenAPIAsyncHTTPClient

let target = CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:8080/"
guard let targetURL = URL(string: target) else {
    FileHandle.standardError.write(Data("ServerClientDemo: not a URL: \(target)\n".utf8))
    exit(2)
}
var failures = 0
do {
    // snippet:ahc:begin
    let agent = try CaptureAgent.start()      // $NETINSPECT, else the default socket

    var configuration = HTTPClient.Configuration()
    agent.capture(&configuration)              // before the client is created
    let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

    let response = try await httpClient.execute(HTTPClientRequest(url: target), timeout: .seconds(10))
    let body = try await response.body.collect(upTo: 1 << 20)
    // snippet:ahc:end
    print("AsyncHTTPClient execute(_:timeout:): \(response.status.code), \(body.readableBytes) bytes")

    // The future-based API, which Vapor's app.client uses, is captured by the same line.
    let old = try await httpClient.execute(request: HTTPClient.Request(url: target)).get()
    print("AsyncHTTPClient execute(request:): \(old.status.code), \(old.body?.readableBytes ?? 0) bytes")

    // snippet:openapi:begin
    let client = Client(                        // the client the OpenAPI generator made
        serverURL: targetURL,
        transport: AsyncHTTPClientTransport(),  // HTTPClient.shared: not captured itself, so one flow per call
        middlewares: [CaptureMiddleware(agent: agent)]   // last, after the app's own middlewares
    )
    let text = try await client.getRoot()
    // snippet:openapi:end
    print("OpenAPI getRoot: \(text.utf8.count) bytes")

    try await httpClient.shutdown().get()
    agent.stop()                                // flushes, waiting at most Configuration.flushTimeout
    let statistics = agent.statistics
    print("ServerClientDemo: \(statistics.framesWritten) frames written, \(statistics.droppedEvents) events dropped")
} catch {
    failures += 1
    print("ServerClientDemo: failed: \(error)")
}
exit(failures == 0 ? 0 : 1)
#else
import Foundation
FileHandle.standardError.write(Data("ServerClientDemo needs the package's AsyncHTTPClient and OpenAPI traits (on by default)\n".utf8))
exit(2)
#endif
