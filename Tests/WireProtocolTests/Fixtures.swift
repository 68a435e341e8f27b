import Foundation
import WireProtocol

/// Messages covering every kind and the awkward corners of the model:
/// binary and empty bodies, non-ASCII headers, duplicate headers, custom
/// methods, truncation, redirects, errors.
enum Fixtures {
    static let flowID = FlowID("6F1C2B8E-3D4A-4E5F-9A0B-1C2D3E4F5A6B")!
    static let started = Date(timeIntervalSince1970: 1_763_717_923.123456)

    static let hello = Hello(
        agentName: "CaptureAgent", agentVersion: "0.1.0", appName: "orders-service",
        processID: 4242, hostName: "build-7", token: "s3cr3t"
    )

    static let request = Request(
        method: "PROPFIND",
        url: "https://api.example.com/v1/caf%C3%A9?q=%E2%9C%93",
        headers: [
            HTTPHeader(name: "Accept", value: "application/json"),
            HTTPHeader(name: "X-Trace", value: "a"),
            HTTPHeader(name: "X-Trace", value: "b"),
            HTTPHeader(name: "X-Name", value: "Zoë 東京 🚀"),
        ],
        body: CapturedBody(data: Data([0x00, 0xFF, 0x7B, 0x22, 0x0A, 0x80]), size: 6, isTruncated: false)
    )

    static let log = NetworkLog(
        id: flowID, sessionID: 3, taskID: 17, request: request,
        timing: Timing(startedAt: started), state: .pending
    )

    static let response = Response(
        statusCode: 207,
        headers: [
            HTTPHeader(name: "Content-Type", value: "application/json; charset=utf-8"),
            HTTPHeader(name: "Set-Cookie", value: "a=1"),
            HTTPHeader(name: "Set-Cookie", value: "b=2"),
        ],
        mimeType: "application/json"
    )

    static let flowResponse = FlowResponse(
        id: flowID, response: response,
        timing: Timing(startedAt: started, requestSent: 0.000_25, firstResponseByte: 0.0125),
        redirects: [RedirectHop(statusCode: 301, from: "http://api.example.com/v1", to: "https://api.example.com/v1")]
    )

    static var finalResponse: Response {
        var response = response
        response.body = CapturedBody(data: Data(repeating: 0x41, count: 16), size: 5_000_000, isTruncated: true)
        return response
    }

    static let flowFinished = FlowFinished(
        id: flowID, state: .completed, response: finalResponse,
        requestBody: CapturedBody(data: Data(), size: 0),
        timing: Timing(startedAt: started, requestSent: 0.000_25, firstResponseByte: 0.0125, finished: 0.5),
        redirects: flowResponse.redirects
    )

    static let flowFailed = FlowFinished(
        id: FlowID("00000000-0000-4000-8000-000000000001")!, state: .failed,
        error: FlowError(domain: "NSURLErrorDomain", code: -1001, message: "The request timed out."),
        timing: Timing(startedAt: started, requestSent: 0.001, finished: 60)
    )

    static let status = AgentStatus(droppedEvents: 12, queuedEvents: 3)

    /// A flow with every field added after version 1's first release: who
    /// captured it, the fields the client added, a decoded body, and the
    /// client's own phase timings. Older peers ignore them.
    static let sourcedID = FlowID("00000000-0000-4000-8000-000000000002")!

    static let sourcedLog = NetworkLog(
        id: sourcedID, sessionID: 1, taskID: 2,
        request: Request(
            method: "GET", url: "http://127.0.0.1:8080/feed",
            headers: [HTTPHeader(name: "Accept", value: "application/json")],
            clientHeaders: [HTTPHeader(name: "Host", value: "127.0.0.1:8080"), HTTPHeader(name: "Accept-Encoding", value: "deflate, gzip")]
        ),
        timing: Timing(startedAt: started), state: .pending,
        source: CaptureSource(client: .openAPI, path: .wire, operationID: "getFeed"),
        changes: FlowChanges(rules: ["map-remote |api.example.com|127.0.0.1:8080", "modify-headers /Accept/application/json"],
                             originalURL: "https://api.example.com/feed",
                             originalHeaders: [HTTPHeader(name: "Accept", value: "*/*")])
    )

    static let sourcedFinished = FlowFinished(
        id: sourcedID, state: .completed,
        response: Response(statusCode: 200, headers: [HTTPHeader(name: "Content-Encoding", value: "gzip")],
                           body: CapturedBody(data: Data("{}".utf8), size: 2, isDecoded: true)),
        timing: Timing(startedAt: started, requestSent: 0.001, firstResponseByte: 0.004, finished: 0.005,
                       phases: TransferPhases(dns: 0.0005, connect: 0.00025, wait: 0.003, receive: 0.001, source: "libcurl")),
        clientHeaders: [HTTPHeader(name: "Host", value: "127.0.0.1:8080"), HTTPHeader(name: "User-Agent", value: "t")]
    )

    /// A response held at a breakpoint, then released with an edit.
    static let held = FlowHold(id: sourcedID, phase: .response, response: response, timeout: 60)
    static let released = FlowRelease(id: sourcedID, phase: .response, reason: .resumed)
    static let editedFinished = FlowFinished(
        id: sourcedID, state: .completed,
        response: Response(statusCode: 201, headers: [HTTPHeader(name: "X-From", value: "breakpoint")], body: CapturedBody(data: Data("edited".utf8))),
        timing: Timing(startedAt: started, requestSent: 0.01, firstResponseByte: 0.02, finished: 3.5),
        changes: FlowChanges(rules: [], edited: [.request, .response], originalResponse: response)
    )

    /// A request the service received, and the call it made while handling
    /// it: the fields of server-side capture.
    static let inboundID = FlowID("00000000-0000-4000-8000-000000000003")!
    static let inboundLog = NetworkLog(
        id: inboundID, sessionID: 3, taskID: 1,
        request: Request(method: "POST", url: "http://shop.local:8080/checkout",
                         headers: [HTTPHeader(name: "Content-Type", value: "application/json")]),
        timing: Timing(startedAt: started), source: CaptureSource(client: .hummingbird, path: .inPlace),
        direction: .inbound, peer: "127.0.0.1:53124"
    )
    static let childLog = NetworkLog(
        id: FlowID("00000000-0000-4000-8000-000000000004")!, sessionID: 4, taskID: 1,
        request: Request(method: "GET", url: "http://inventory.local/items/42"),
        timing: Timing(startedAt: started),
        source: CaptureSource(client: .asyncHTTPClient, path: .wire), parentID: inboundID,
        localAddress: "127.0.0.1:53200"
    )

    /// A server-streaming gRPC call: started, one message each way, ended
    /// with a status and trailers. Older peers skip `grpcMessage` and ignore
    /// the `grpc` members.
    static let grpcID = FlowID("00000000-0000-4000-8000-000000000005")!
    static let grpcLog = NetworkLog(
        id: grpcID, sessionID: 5, taskID: 1,
        request: Request(method: "POST", url: "http://127.0.0.1:9000/echo.Echo/Expand",
                         headers: [HTTPHeader(name: "content-type", value: "application/grpc"),
                                   HTTPHeader(name: "te", value: "trailers")]),
        timing: Timing(startedAt: started), source: CaptureSource(client: .grpcSwift),
        grpc: GRPCCall(service: "echo.Echo", method: "Expand", kind: .serverStreaming)
    )
    static let grpcRequestMessage = GRPCMessageEvent(
        id: grpcID, message: GRPCMessage(direction: .request, at: 0.0005, body: CapturedBody(data: Data([0x0A, 0x03, 0x61, 0x20, 0x62])))
    )
    static let grpcResponseMessage = GRPCMessageEvent(
        id: grpcID, message: GRPCMessage(direction: .response, at: 0.002,
                                         body: CapturedBody(data: Data([0x0A, 0x01]), size: 3, isTruncated: true))
    )
    static let grpcFinished = FlowFinished(
        id: grpcID, state: .completed, response: Response(statusCode: 200, headers: [HTTPHeader(name: "content-type", value: "application/grpc")]),
        timing: Timing(startedAt: started, requestSent: 0.0005, firstResponseByte: 0.0015, finished: 0.003),
        grpc: GRPCOutcome(status: GRPCStatus(code: 5, message: "no such word"),
                          trailers: [HTTPHeader(name: "grpc-status", value: "5")], droppedMessages: 2)
    )

    /// A streamed response: one part of its body while it was open.
    static let bodyPart = BodyPartEvent(
        id: flowID, part: BodyPart(direction: .response, at: 0.8, offset: 0, body: CapturedBody(data: Data("data: hi\n\n".utf8)))
    )

    /// A WebSocket connection: the upgrade started, a text message, the
    /// server's close, and its end.
    static let webSocketID = FlowID("00000000-0000-4000-8000-000000000006")!
    static let webSocketLog = NetworkLog(
        id: webSocketID, sessionID: 6, taskID: 1,
        request: Request(method: "GET", url: "ws://127.0.0.1:8080/chat",
                         headers: [HTTPHeader(name: "Upgrade", value: "websocket")]),
        timing: Timing(startedAt: started), source: CaptureSource(client: .hummingbird, path: .inPlace),
        direction: .inbound, webSocket: WebSocketSession()
    )
    static let webSocketText = WebSocketMessageEvent(
        id: webSocketID, message: WebSocketMessage(direction: .request, at: 0.2, opcode: .text, body: CapturedBody(data: Data("hello".utf8)))
    )
    static let webSocketClose = WebSocketMessageEvent(
        id: webSocketID, message: WebSocketMessage(direction: .response, at: 1.5, opcode: .close,
                                                   body: CapturedBody(data: Data("done".utf8)), closeCode: 1000)
    )
    static let webSocketFinished = FlowFinished(
        id: webSocketID, state: .completed, response: Response(statusCode: 101, headers: [HTTPHeader(name: "Upgrade", value: "websocket")]),
        timing: Timing(startedAt: started, requestSent: 0.0005, firstResponseByte: 0.001, finished: 1.5),
        webSocket: WebSocketOutcome(droppedMessages: 1)
    )

    /// One of each kind, hello first, as a connection would carry them.
    static let conversation: [Message] = [
        .hello(hello), .status(status), .flowStarted(log), .flowResponse(flowResponse),
        .flowFinished(flowFinished), .flowFinished(flowFailed),
        .flowStarted(sourcedLog), .flowFinished(sourcedFinished),
        .held(held), .released(released), .flowFinished(editedFinished),
        .flowStarted(inboundLog), .flowStarted(childLog),
        .flowStarted(grpcLog), .grpcMessage(grpcRequestMessage), .grpcMessage(grpcResponseMessage), .flowFinished(grpcFinished),
        .bodyPart(bodyPart),
        .flowStarted(webSocketLog), .webSocketMessage(webSocketText), .webSocketMessage(webSocketClose), .flowFinished(webSocketFinished),
    ]

    static func frames(_ messages: [Message]) throws -> [UInt8] {
        let encoder = FrameEncoder()
        return try messages.flatMap { Array(try encoder.encode($0)) }
    }

    static func frame(json: String) -> [UInt8] {
        Array(FrameEncoder.frame(payload: Data(json.utf8)))
    }
}

extension MessageDecoder {
    /// Every message currently decodable, stopping at the first error.
    mutating func drain() throws(WireError) -> [Message] {
        var out: [Message] = []
        while let message = try next() { out.append(message) }
        return out
    }

    /// Feeds `chunks` to a new decoder in order; every message, then the end of the stream.
    static func decodeAll(_ chunks: [ArraySlice<UInt8>]) throws -> [Message] {
        var decoder = MessageDecoder()
        var out: [Message] = []
        for chunk in chunks {
            decoder.append(contentsOf: chunk)
            out += try decoder.drain()
        }
        try decoder.finish()
        return out
    }
}
