/// What the status bar's words mean, made once for the help (`?`) and
/// docs/GUIDE.md's table (checked against it by
/// `GuideNamesEveryKeyCommandAndFlagTests`): a count a person cannot look
/// up reads as a fault.
enum StatusBarLegend {
    /// The words as the bar writes them (`N` a number), and what each says.
    static let entries: [(word: String, meaning: String)] = [
        ("N/M flows", "the list shows N of the M flows kept (its filter, f, passes N)"),
        ("filter: EXPR", "the list's filter; c clears it"),
        ("intercept: EXPR", "breakpoints are on: a flow that matches waits (i sets them, I switches them off)"),
        ("replay: N left", "a server replay is on: N recorded responses not used yet"),
        ("HELD N", "flows waiting at a breakpoint: h goes to the next, a resumes it"),
        ("PAUSED (+N)", "the list stands still (p) while N more flows arrived; they are recorded"),
        ("dropped N", "events the apps' agents dropped while connected (their queue was full): those flows are missing or incomplete"),
        ("evicted N", "the oldest flows let go beyond --max-flows"),
        ("ignored N", "events of flows no longer kept (cleared with z, deleted with d, or evicted) that were still under way, "
            + "so their later parts had no flow to join; the flows shown are whole"),
    ]
}
