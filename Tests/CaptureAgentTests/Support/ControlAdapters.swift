import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WireProtocol
@testable import CaptureAgent
// Each client is built with its trait (all on by default; Package.swift);
// the OpenAPI client's transport is AsyncHTTPClient's.
#if AsyncHTTPClient
import AsyncHTTPClient
import CaptureAgentAsyncHTTPClient
import NIOHTTP1
#endif
#if OpenAPI && AsyncHTTPClient
import CaptureAgentOpenAPI
import HTTPTypes
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime
#endif

/// Every way an app's request reaches the agent, driven the same way, for
/// the table of control scenarios (`ControlScenarioTests`).
enum ControlAdapter: String, CaseIterable, Sendable {
    /// A completion-handler data task: in place unless control changes it.
    case urlSessionInPlace
    /// A session data delegate's task: always re-sent.
    case urlSessionResent
    #if AsyncHTTPClient
    case ahcAsync
    case ahcFuture
    #endif
    #if OpenAPI && AsyncHTTPClient
    case openAPI
    #endif
    #if Vapor
    /// A Vapor application's `app.client`, through the agent's client provider.
    case vaporClient
    #endif

    /// The client the table of powers names.
    var client: CaptureClient {
        switch self {
        case .urlSessionInPlace, .urlSessionResent: .urlSession
        #if AsyncHTTPClient
        case .ahcAsync, .ahcFuture: .asyncHTTPClient
        #endif
        #if OpenAPI && AsyncHTTPClient
        case .openAPI: .openAPI
        #endif
        #if Vapor
        case .vaporClient: .vaporClient
        #endif
        }
    }

    /// Whether a response breakpoint holds a body of unknown length (one the
    /// server ends by closing): the OpenAPI middleware holds only a body of
    /// known length or one it can read twice (docs/AGENT.md), so that one goes on unheld.
    var holdsBodiesOfUnknownLength: Bool {
        #if OpenAPI && AsyncHTTPClient
        return self != .openAPI
        #else
        return true
        #endif
    }

    /// The `source.client` of its flows (nil: URLSession flows carry none).
    var logClient: CaptureSource.Client? {
        switch self {
        case .urlSessionInPlace, .urlSessionResent: nil
        #if AsyncHTTPClient
        case .ahcAsync, .ahcFuture: .asyncHTTPClient
        #endif
        #if OpenAPI && AsyncHTTPClient
        case .openAPI: .openAPI
        #endif
        #if Vapor
        case .vaporClient: .vaporClient
        #endif
        }
    }
}

/// One request, as every adapter sends it.
struct ScenarioRequest: Sendable {
    var method = "GET"
    var url: URL
    var headers: [(String, String)] = []
    var body: [UInt8]?
}

/// What the app saw, in terms every client shares.
struct ScenarioOutcome: Equatable, CustomStringConvertible {
    var status: Int?
    var body: [UInt8] = []
    /// Header fields the tests look at, by lowercased name.
    var marked: [String: String] = [:]
    var failed = false
    /// The error as the app tells it apart: `NSURLErrorDomain -1005` for a
    /// Foundation error, else its type and description.
    var error: String?

    var description: String {
        "status \(status.map(String.init) ?? "-"), \(body.count) bytes \(String(decoding: body.prefix(40), as: UTF8.self).debugDescription), marked \(marked), failed \(failed), error \(error ?? "-")"
    }

    /// `error` as ``error`` tells it.
    static func describing(_ error: Error) -> String {
        #if OpenAPI && AsyncHTTPClient
        let underlying = (error as? ClientError)?.underlyingError ?? error
        #else
        let underlying = error
        #endif
        if let urlError = underlying as? URLError { return "\(NSURLErrorDomain) \(urlError.code.rawValue)" }
        return describe(underlying)
    }

    static let markedNames = ["x-method", "x-edited", "content-type"]
}

/// An error as the app would tell it apart: its type and description.
func describe(_ error: Error) -> String {
    "\(type(of: error)): \(error)"
}

extension ControlAdapter {
    /// Sends `request` as this client would, captured by `agent` or not.
    func send(_ request: ScenarioRequest, agent: CaptureAgent?) async -> ScenarioOutcome {
        switch self {
        case .urlSessionInPlace, .urlSessionResent:
            let configuration = URLSessionConfiguration.default
            configuration.urlCache = nil
            configuration.timeoutIntervalForRequest = 60
            agent?.capture(configuration)
            let style: ClientStyle = self == .urlSessionResent ? .delegate : .completionHandler
            let delegate = style == .delegate ? RecordingDelegate(refusesRedirects: false, credential: nil) : nil
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            var urlRequest = URLRequest(url: request.url)
            urlRequest.httpMethod = request.method
            for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
            urlRequest.httpBody = request.body.map { Data($0) }
            let outcome = await performExchange(urlRequest, on: session, style: style)
            return ScenarioOutcome(status: outcome.status, body: Array(outcome.body),
                                   marked: Self.marked(outcome.headers.map { ($0.key, $0.value) }), failed: outcome.errorCode != nil,
                                   error: outcome.errorCode.map { "\(outcome.errorDomain ?? "") \($0)" })
        #if AsyncHTTPClient
        case .ahcAsync, .ahcFuture:
            var configuration = ahcConfiguration()
            agent?.capture(&configuration)
            let ahc = AHCRequest(method: HTTPMethod(rawValue: request.method), url: request.url.absoluteString, headers: request.headers,
                                 body: request.body)
            let outcome = await performAHC(ahc, api: self == .ahcAsync ? .async : .future, configuration: configuration, timeout: .seconds(60))
            let fields = outcome.headers.compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
            }
            return ScenarioOutcome(status: outcome.status, body: outcome.body, marked: Self.marked(fields), failed: outcome.error != nil,
                                   error: outcome.error)
        #endif
        #if OpenAPI && AsyncHTTPClient
        case .openAPI:
            return await sendOpenAPI(request, agent: agent)
        #endif
        #if Vapor
        case .vaporClient:
            return await sendVapor(request, agent: agent)
        #endif
        }
    }

    #if OpenAPI && AsyncHTTPClient
    private func sendOpenAPI(_ request: ScenarioRequest, agent: CaptureAgent?) async -> ScenarioOutcome {
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: ahcConfiguration())
        defer { _ = http.shutdown() }
        let transport = AsyncHTTPClientTransport(configuration: .init(client: http, timeout: .seconds(60)))
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!
        let path = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        components.percentEncodedPath = ""
        components.percentEncodedQuery = nil
        let middlewares: [any ClientMiddleware] = agent.map { [CaptureMiddleware(agent: $0)] } ?? []
        let client = UniversalClient(serverURL: components.url!, transport: transport, middlewares: middlewares)
        do {
            return try await client.send(
                input: (),
                forOperation: "scenario",
                serializer: { _ in
                    var head = HTTPRequest(method: HTTPRequest.Method(request.method)!, scheme: nil, authority: nil, path: path)
                    for (name, value) in request.headers { head.headerFields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
                    return (head, request.body.map { HTTPBody($0) })
                },
                deserializer: { response, body in
                    var outcome = ScenarioOutcome(status: response.status.code)
                    outcome.marked = Self.marked(response.headerFields.map { ($0.name.rawName, $0.value) })
                    if let body { outcome.body = try await [UInt8](collecting: body, upTo: .max) }
                    return outcome
                }
            )
        } catch {
            return ScenarioOutcome(failed: true, error: ScenarioOutcome.describing(error))
        }
    }
    #endif

    static func marked(_ fields: [(String, String)]) -> [String: String] {
        var marked: [String: String] = [:]
        for (name, value) in fields where ScenarioOutcome.markedNames.contains(name.lowercased()) { marked[name.lowercased()] = value }
        return marked
    }
}
