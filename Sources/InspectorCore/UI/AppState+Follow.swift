import Foundation
import WireProtocol

/// Following a live stream in the detail view, as `tail -f` does: while
/// the person has not scrolled up, new messages and body parts scroll into
/// sight as they arrive.
extension AppState {
    /// Shows `tab` of the detail view's flow from its top, or, for a live
    /// stream, from its end, following it.
    mutating func show(_ tab: DetailTab, of detail: DetailState) {
        var detail = detail
        detail.tab = tab
        detail.scroll = 0
        // Only these tabs can grow at their end, as parts and messages arrive.
        detail.followsEnd = (tab == .response || tab == .messages) && session.store[detail.sequence].map { !$0.log.state.isFinal } == true
        mode = .detail(detail)
        followStreamEnd()
    }

    /// Scrolls the detail view to its end when it follows a stream that grows.
    mutating func followStreamEnd() {
        guard case .detail(var detail) = mode, detail.followsEnd,
              let log = session.store[detail.sequence]?.log, Self.growsAtTheEnd(log, tab: detail.tab) else { return }
        detail.scroll = max(0, detailLines(detail).count - pageHeight)
        mode = .detail(detail)
    }

    /// A scroll down that reached the end follows again.
    mutating func resumeFollowingAtTheEnd() {
        guard case .detail(var detail) = mode, !detail.followsEnd,
              detail.scroll >= detailLines(detail).count - pageHeight else { return }
        detail.followsEnd = true
        mode = .detail(detail)
    }

    /// The messages tab grows at its end; so does the Response tab of a body
    /// that arrives in parts. A body that arrives whole, at the end, is read
    /// from its top.
    static func growsAtTheEnd(_ log: NetworkLog, tab: DetailTab) -> Bool {
        switch tab {
        case .messages: true
        case .response: (log.parts?.count(of: .response) ?? 0) > 0
        case .request, .timing, .grpc: false
        }
    }
}
