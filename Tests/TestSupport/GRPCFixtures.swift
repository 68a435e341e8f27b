import Foundation
import WireProtocol

/// gRPC calls for the tests, with the messages protoc made for the
/// decoder (``ProtoFixtures/decoder``).
package enum GRPCFixtures {
    package static var directory: URL { ProtoFixtures.decoder }

    package static func bytes(_ name: String) throws -> [UInt8] {
        try ProtoFixtures.decoderBytes(name)
    }

    /// The events of one call: started, response head, messages, finished.
    package static func call(
        _ number: Int, method: String = "Get", kind: GRPCCallKind = .unary,
        messages: [(GRPCMessage.Direction, [UInt8])], status: GRPCStatus?, state: FlowState = .completed,
        trailers: [HTTPHeader] = [], dropped: Int = 0, inbound: Bool = false
    ) -> [Message] {
        var log = Fixtures.started(number, method: "POST", url: "http://127.0.0.1:9000/echo.Echo/\(method)",
                                   headers: [HTTPHeader(name: "content-type", value: "application/grpc"),
                                             HTTPHeader(name: "te", value: "trailers")])
        log.grpc = GRPCCall(service: "echo.Echo", method: method, kind: kind)
        if inbound { log.direction = .inbound }
        let head = Response(statusCode: 200, headers: [HTTPHeader(name: "content-type", value: "application/grpc")], mimeType: "application/grpc")
        var events: [Message] = [.flowStarted(log), .flowResponse(FlowResponse(id: log.id, response: head, timing: Timing(startedAt: log.timing.startedAt)))]
        for (index, (direction, bytes)) in messages.enumerated() {
            events.append(.grpcMessage(GRPCMessageEvent(id: log.id, message: GRPCMessage(
                direction: direction, at: 0.002 + Double(index) * 0.003, body: CapturedBody(data: Data(bytes))))))
        }
        guard state.isFinal else { return events }
        events.append(.flowFinished(FlowFinished(
            id: log.id, state: state, response: head,
            timing: Timing(startedAt: log.timing.startedAt, requestSent: 0.001, firstResponseByte: 0.002, finished: 0.004 + Double(messages.count) * 0.003),
            grpc: status.map { GRPCOutcome(status: $0, trailers: trailers, droppedMessages: dropped) })))
        return events
    }

    /// A list of four calls: a unary Get that succeeded, one that found
    /// nothing, a server stream still running, a deadline exceeded.
    package static func messages() throws -> [Message] {
        let request = try bytes("request.bin"), response = try bytes("response.bin")
        return call(1, messages: [(.request, request), (.response, response)], status: GRPCStatus(code: 0),
                    trailers: [HTTPHeader(name: "grpc-status", value: "0")])
            + call(2, messages: [(.request, request)], status: GRPCStatus(code: 5, message: "no such echo"),
                   trailers: [HTTPHeader(name: "grpc-status", value: "5"), HTTPHeader(name: "grpc-message", value: "no such echo")])
            + call(3, method: "Expand", kind: .serverStreaming, messages: [(.request, request), (.response, response), (.response, response)],
                   status: nil, state: .responded)
            + call(4, method: "Collect", kind: .clientStreaming, messages: [(.request, request), (.request, request)],
                   status: GRPCStatus(code: 4, message: "deadline exceeded after 1s"), state: .failed, dropped: 3)
    }
}
