// AgentDemo: embeds the capture agent and makes a few requests.
//
//     swift run AgentDemo [URL]           (default http://127.0.0.1:8080/)
//     NETINSPECT=tcp:127.0.0.1:9123 swift run AgentDemo http://127.0.0.1:8080/
//
// Kept in step with the example in docs/AGENT.md.
import CaptureAgent
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// First thing, before any URLSession exists: then URLSession.shared is captured too.
let agent: CaptureAgent
do {
    agent = try CaptureAgent.start()   // $NETINSPECT, else the default socket
} catch {
    FileHandle.standardError.write(Data("AgentDemo: \(error)\n".utf8))
    exit(2)
}
print("AgentDemo: events go to \(agent.destination)")

let arguments = CommandLine.arguments.dropFirst()
guard let target = URL(string: arguments.first ?? "http://127.0.0.1:8080/") else {
    FileHandle.standardError.write(Data("AgentDemo: not a URL: \(arguments.first ?? "")\n".utf8))
    exit(2)
}

// Any other session: let the agent add itself to the configuration first.
let configuration = URLSessionConfiguration.default
configuration.timeoutIntervalForRequest = 10
agent.capture(configuration)
let session = URLSession(configuration: configuration)

var post = URLRequest(url: target)
post.httpMethod = "POST"
post.setValue("text/plain", forHTTPHeaderField: "Content-Type")
post.httpBody = Data("hello from AgentDemo".utf8)

let exchanges: [(label: String, session: URLSession, request: URLRequest)] = [
    ("shared GET", URLSession.shared, URLRequest(url: target)),
    ("session GET", session, URLRequest(url: target)),
    ("session POST", session, post),
]
var failures = 0
for exchange in exchanges {
    do {
        let (data, response) = try await exchange.session.data(for: exchange.request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        print("\(exchange.label): \(status), \(data.count) bytes")
    } catch {
        failures += 1
        print("\(exchange.label): failed: \(error.localizedDescription)")
    }
}

agent.stop()   // flushes queued events, waiting at most Configuration.flushTimeout
let statistics = agent.statistics
print("AgentDemo: \(statistics.framesWritten) frames written, \(statistics.droppedEvents) events dropped")
exit(failures == 0 ? 0 : 1)
