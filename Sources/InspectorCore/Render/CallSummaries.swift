import NIOConcurrencyHelpers

/// What the list shows after a flow's path when its body names a call (a
/// GraphQL operation, a JSON-RPC method and its answer), kept per flow until
/// the flow changes: reading them parses bodies of up to 64 KiB, and the
/// list is drawn several times a second for every visible row.
///
/// ```swift
/// let summary = state.callSummaries.summary(of: record)   // computed once per revision
/// summary.jsonRPC?.text                                   // "tools/call add → result"
/// ```
final class CallSummaries: Sendable {
    struct Summary: Sendable {
        var graphQL: String?
        var jsonRPC: JSONRPC.Summary?
    }

    private struct Entry {
        var revision: Int
        var summary: Summary
    }

    /// More than a screenful of rows many times over; the memo starts again past it.
    private static let limit = 4096
    private let entries = NIOLockedValueBox<[Int: Entry]>([:])

    /// The record's summaries, read from its bodies once per revision.
    func summary(of record: FlowStore.Record) -> Summary {
        if let entry = entries.withLockedValue({ $0[record.sequence] }), entry.revision == record.revision { return entry.summary }
        let summary = Summary(graphQL: GraphQL.operation(of: record.log.request), jsonRPC: JSONRPC.summary(of: record.log))
        entries.withLockedValue { entries in
            if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
            entries[record.sequence] = Entry(revision: record.revision, summary: summary)
        }
        return summary
    }
}
