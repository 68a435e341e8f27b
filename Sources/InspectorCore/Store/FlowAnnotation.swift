import WireProtocol

/// What the person at the inspector added to a flow: a mark and a comment.
///
/// Viewer-side state: agents never send it and it is not part of
/// ``WireProtocol/NetworkLog``. It lives in the store beside the flow, is
/// written to `--save` files (as annotation lines) and to HAR (the entry's
/// `comment`, and `_netinspect.marked`), and is read back from both.
///
/// ```swift
/// var note = FlowAnnotation()
/// note.isMarked = true
/// note.comment = "fails only with the staging token"
/// ```
package struct FlowAnnotation: Sendable, Equatable, Hashable {
    /// Whether the flow is marked (`M`, `:mark`).
    var isMarked: Bool
    /// The comment (`#`, `:comment`); nil when there is none. Never empty.
    var comment: String? {
        didSet { if comment?.isEmpty == true { comment = nil } }
    }

    /// Creates an annotation; an empty comment is stored as none.
    init(isMarked: Bool = false, comment: String? = nil) {
        self.isMarked = isMarked
        self.comment = comment?.isEmpty == true ? nil : comment
    }

    /// Whether there is nothing to keep.
    var isEmpty: Bool { !isMarked && comment == nil }
}
