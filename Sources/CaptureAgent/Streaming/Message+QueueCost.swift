import Foundation
import WireProtocol

extension Message {
    /// A cheap upper-bound guess of the encoded frame size (base64 bodies
    /// plus a fixed allowance for the rest), as the message is and once
    /// every body is cut to at most `kept` bytes, from one look at the
    /// bodies. Bounds the queue without encoding on the app's threads.
    func estimatedFrameSizes(keepingBodyBytes kept: Int) -> (whole: Int, cut: Int) {
        var whole = 1024, cut = 1024
        for body in bodies {
            whole += (body.data.count + 2) / 3 * 4
            cut += (min(body.data.count, kept) + 2) / 3 * 4
        }
        return (whole, cut)
    }

    /// The flow this message is about; nil for `hello` and `status`.
    var flowID: FlowID? {
        switch self {
        case .flowStarted(let log): log.id
        case .flowResponse(let event): event.id
        case .flowFinished(let event): event.id
        case .held(let hold): hold.id
        case .released(let release): release.id
        case .grpcMessage(let event): event.id
        case .hello, .status: nil
        }
    }

    /// The captured bodies this message carries.
    var bodies: [CapturedBody] {
        switch self {
        case .flowStarted(let log):
            return [log.request.body, log.response?.body].compactMap { $0 }
        case .flowFinished(let event):
            return [event.requestBody, event.response?.body].compactMap { $0 }
        case .held(let hold):
            return [hold.response?.body].compactMap { $0 }
        case .grpcMessage(let event):
            return [event.message.body]
        case .hello, .flowResponse, .status, .released:
            return []
        }
    }

    /// The same message with every body cut to at most `limit` bytes; a cut
    /// body keeps its full size and is marked truncated.
    func cuttingBodies(to limit: Int) -> Message {
        func cut(_ body: CapturedBody) -> CapturedBody {
            guard body.data.count > limit else { return body }
            return CapturedBody(data: body.data.prefix(limit), size: body.size, isTruncated: true, isDecoded: body.isDecoded)
        }
        func cut(_ body: CapturedBody?) -> CapturedBody? { body.map(cut) }
        func cut(_ response: Response?) -> Response? {
            guard var response else { return nil }
            response.body = cut(response.body)
            return response
        }
        switch self {
        case .flowStarted(var log):
            log.request.body = cut(log.request.body)
            log.response = cut(log.response)
            return .flowStarted(log)
        case .flowFinished(var event):
            event.requestBody = cut(event.requestBody)
            event.response = cut(event.response)
            return .flowFinished(event)
        case .held(var hold):
            hold.response = cut(hold.response)
            return .held(hold)
        case .grpcMessage(var event):
            event.message.body = cut(event.message.body)
            return .grpcMessage(event)
        case .hello, .flowResponse, .status, .released:
            return self
        }
    }
}

/// Keeps frames under the viewer's limit (`Wire.defaultMaximumFrameSize`).
enum FrameFitting {
    /// Appends the frame for `message` to `buffer`; when it would be too
    /// large, the frame of the message with its bodies cut further. False
    /// (and `buffer` unchanged) only when even a message without body bytes
    /// cannot be encoded.
    static func append(_ message: Message, to buffer: inout [UInt8], encoder: FrameEncoder, version: Int) -> Bool {
        var candidate = message
        while true {
            do {
                try encoder.encode(candidate, version: version, appendingTo: &buffer)
                return true
            } catch let .frameTooLargeToEncode(length, limit) {
                let largest = candidate.bodies.map(\.data.count).max() ?? 0
                guard largest > 0 else { return false }
                // Scale by the overshoot, with a margin for base64 and JSON.
                let scaled = Int(Double(largest) * Double(limit) / Double(length) * 0.9)
                candidate = candidate.cuttingBodies(to: max(0, min(largest - 1, scaled)))
            } catch {
                return false
            }
        }
    }
}
