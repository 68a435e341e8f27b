import Foundation
import WireProtocol

/// How an HTTP flow ended, as every adapter reports it: the one place an
/// end becomes the flow's final state and error (``FlowRecording/finish(_:)``).
///
/// ```swift
/// flow.finish(.completed)
/// flow.finish(.thrown(error))      // cancelled when the error says so, failed otherwise
/// flow.finish(.killed)             // a person killed it at a breakpoint
/// ```
package enum FlowEnd: Sendable, Equatable {
    case completed
    case failed(FlowError)
    case cancelled(FlowError)

    /// A person killed the flow at a breakpoint; its client ends it as a cancelled request.
    package static let killed = FlowEnd.cancelled(FlowFailure.killed)

    /// The app's task was cancelled while the flow waited (a hold, a condition's latency).
    package static let taskCancelled = FlowEnd.cancelled(FlowFailure.describe(CancellationError()))

    /// An error a client reported: cancelled when it means so (Foundation's
    /// and Swift's cancellation, or `cancelled`: the client's own), failed otherwise.
    package static func thrown(_ error: Error, cancelled: Bool = false) -> FlowEnd {
        cancelled || FlowFailure.isCancellation(error) ? .cancelled(FlowFailure.describe(error)) : .failed(FlowFailure.describe(error))
    }

    package var state: FlowState {
        switch self {
        case .completed: .completed
        case .failed: .failed
        case .cancelled: .cancelled
        }
    }

    package var error: FlowError? {
        switch self {
        case .completed: nil
        case .failed(let error), .cancelled(let error): error
        }
    }
}

extension FlowRecording {
    /// Ends an HTTP flow once, with the request body its parts carried.
    /// Returns whether this call ended it.
    @discardableResult
    package func finish(_ end: FlowEnd) -> Bool {
        finish { recorder, parts in recorder.finished(state: end.state, error: end.error, requestBody: parts.requestBody) }
    }

    /// The flow of an exchange answered without the network (map local,
    /// server replay, a condition's status, a person's edit): the request
    /// counts as sent, the answer is the response, and the flow ends.
    package func answered(with response: ExchangeResponse) {
        requestEnded()
        respond { recorder in
            let event = recorder.received(statusCode: response.statusCode, headers: response.headers,
                                          mimeType: MediaType.essence(of: response.headers.first("Content-Type")))
            response.body.withUnsafeBytes { recorder.receivedBody($0) }
            return event
        }
        finish(.completed)
    }
}
