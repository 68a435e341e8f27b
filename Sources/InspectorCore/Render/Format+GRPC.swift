import Foundation
import WireProtocol

/// How a gRPC call reads in the list, the detail title and `--dump`: by
/// service and method, and by its gRPC status, never by the HTTP 200 that
/// carries a failed call as well as a good one.
extension Format {
    /// `echo.Echo/Get`: the call as a person names it.
    static func grpcName(_ call: GRPCCall) -> String {
        "\(call.service)/\(call.method)"
    }

    /// What the method column shows for a gRPC call, whose HTTP method is always POST.
    static let grpcMethod = "gRPC"

    /// The method column's text: `gRPC` for a call, else the HTTP method.
    static func method(of log: NetworkLog) -> String {
        log.grpc == nil ? log.request.method : grpcMethod
    }

    /// The call's shape: in 10 columns for the list's type column, else in words.
    static func grpcKind(_ call: GRPCCall, short: Bool = true) -> String {
        switch call.kind {
        case .unary?: "unary"
        case .clientStreaming?: short ? "client str" : "client streaming"
        case .serverStreaming?: short ? "server str" : "server streaming"
        case .bidirectionalStreaming?: short ? "bidi str" : "bidirectional streaming"
        case nil: "grpc"
        }
    }

    /// The style of a gRPC status: OK as a 2xx, every other code as a 5xx.
    static func style(forGRPC status: GRPCStatus) -> Style {
        status.isOK ? .status2xx : .status5xx
    }

    /// The bytes of a call's messages one way, by their true sizes.
    static func grpcBytes(_ call: GRPCCall, _ direction: GRPCMessage.Direction) -> Int {
        call.messages.reduce(0) { $0 + ($1.direction == direction ? $1.body.size : 0) }
    }

    /// The response's size as the list and `--dump` show it: its body's (so
    /// far, while it streams), or for a gRPC call or a WebSocket the total of
    /// its messages received; nil when none arrived.
    static func responseSize(_ log: NetworkLog) -> String? {
        if let socket = log.webSocket, socket.messages.contains(where: { $0.direction == .response }) {
            return size(webSocketBytes(socket, .response))
        }
        if let call = log.grpc, call.messages.contains(where: { $0.direction == .response }) {
            return size(grpcBytes(call, .response))
        }
        return log.response?.body.map { size($0.size) }
    }
}
