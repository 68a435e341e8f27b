import Foundation
import WireProtocol

extension Message {
    /// A cheap upper-bound guess of the encoded frame size (base64 bodies
    /// plus a fixed allowance for the rest), as the message is and once
    /// every body is cut to at most `kept` bytes, from one look at the
    /// bodies. Bounds the queue without encoding on the app's threads.
    func estimatedFrameSizes(keepingBodyBytes kept: Int) -> (whole: Int, cut: Int) {
        let (first, second) = bodyByteCounts
        func base64(_ count: Int) -> Int { (count + 2) / 3 * 4 }
        return (1024 + base64(first) + base64(second), 1024 + base64(min(first, kept)) + base64(min(second, kept)))
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
        case .bodyPart(let event): event.id
        case .webSocketMessage(let event): event.id
        case .hello, .status: nil
        }
    }

    /// The byte counts of the (at most two) captured bodies this message
    /// carries, 0 for a body it does not carry. Asked for every queued
    /// message, so it builds nothing (an array of the bodies allocates for
    /// every request; docs/BENCHMARKS.md, "Costs behind the code").
    var bodyByteCounts: (Int, Int) {
        switch self {
        case .flowStarted(let log):
            (log.request.body?.data.count ?? 0, log.response?.body?.data.count ?? 0)
        case .flowFinished(let event):
            (event.requestBody?.data.count ?? 0, event.response?.body?.data.count ?? 0)
        case .held(let hold):
            (hold.response?.body?.data.count ?? 0, 0)
        case .grpcMessage(let event):
            (event.message.body.data.count, 0)
        case .bodyPart(let event):
            (event.part.body.data.count, 0)
        case .webSocketMessage(let event):
            (event.message.body.data.count, 0)
        case .hello, .flowResponse, .status, .released:
            (0, 0)
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
        case .bodyPart(var event):
            event.part.body = cut(event.part.body)
            return .bodyPart(event)
        case .webSocketMessage(var event):
            event.message.body = cut(event.message.body)
            return .webSocketMessage(event)
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
        // nil: the message as it is, encoded without a copy (the usual case).
        var cut: Message?
        while true {
            do {
                if let cut {
                    try encoder.encode(cut, version: version, appendingTo: &buffer)
                } else {
                    try encoder.encode(message, version: version, appendingTo: &buffer)
                }
                return true
            } catch let .frameTooLargeToEncode(length, limit) {
                let current = cut ?? message
                let largest = max(current.bodyByteCounts.0, current.bodyByteCounts.1)
                guard largest > 0 else { return false }
                // Scale by the overshoot, with a margin for base64 and JSON.
                let scaled = Int(Double(largest) * Double(limit) / Double(length) * 0.9)
                cut = current.cuttingBodies(to: max(0, min(largest - 1, scaled)))
            } catch {
                return false
            }
        }
    }

    /// What a batch became: frames appended, the flow events they carry,
    /// and the flow events lost because not even their metadata encodes.
    struct Encoded {
        var frames = 0
        var flowEvents = 0
        var unencodable = 0
    }

    /// Appends the frames of `batch` to `buffer` (each as ``append(_:to:encoder:version:)``
    /// does), and to `messageEvents` the flow events of each flow message
    /// appended. By index: a for-in loop would copy each message out of the batch.
    static func append(_ batch: [PendingQueue.Taken], to buffer: inout [UInt8], messageEvents: inout [Int],
                       encoder: FrameEncoder, version: Int) -> Encoded {
        var encoded = Encoded()
        for index in batch.indices {
            let (isFlowEvent, events) = (batch[index].message.isFlowEvent, batch[index].events)
            if append(batch[index].message, to: &buffer, encoder: encoder, version: version) {
                encoded.frames += 1
                if isFlowEvent {
                    encoded.flowEvents += events
                    messageEvents.append(events)
                }
            } else if isFlowEvent {
                // Lost here, so counted here.
                encoded.unencodable += events
            }
        }
        return encoded
    }
}
