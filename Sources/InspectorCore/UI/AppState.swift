import FlowFilter
import Foundation
import ProtobufWire
import WireProtocol

/// The tabs of the detail view.
package enum DetailTab: Int, Sendable, CaseIterable {
    /// Request line, headers and body; status, headers, body, redirects and
    /// error; the timing waterfall; a gRPC call's messages, status and
    /// trailers; the messages of a stream (events, WebSocket, gRPC) in one list.
    case request, response, timing, grpc, messages

    /// The tab's title.
    var title: String {
        switch self {
        case .request: "Request"
        case .response: "Response"
        case .timing: "Timing"
        case .grpc: "gRPC"
        case .messages: "Messages"
        }
    }

    /// The tabs a flow has: the gRPC tab only for a gRPC call, the messages
    /// tab only for a flow that has messages (``FlowMessages/hasMessages(_:)``).
    static func tabs(for log: NetworkLog?) -> [DetailTab] {
        var tabs: [DetailTab] = [.request, .response, .timing]
        if log?.grpc != nil { tabs.append(.grpc) }
        if let log, FlowMessages.hasMessages(log) { tabs.append(.messages) }
        return tabs
    }
}

/// What fills the screen above the status bar.
package enum Mode: Sendable, Equatable {
    /// The flow list.
    case list
    /// One flow.
    case detail(DetailState)
    /// The event log: connections, rejections, disconnections.
    case events(scroll: Int)
    /// The differences between two flows.
    case diff(DiffState)
    /// The traffic rules (``AppState/rules``), with the selected row.
    case rules(cursor: Int)
    /// The output of the command netinspect runs (``AppState/commandRun``).
    case output(scroll: Int)
    /// The traffic grouped by route, host or service (``AppState/insights``).
    case insights(InsightsViewState)
}

/// The insights view's own state.
package struct InsightsViewState: Sendable, Equatable {
    /// What the rows are.
    var dimension: Insights.Dimension = .route
    /// What they are sorted by.
    var column: Insights.Column = .impact
    /// Whether the order is reversed (smallest first).
    var ascending = false
    /// The selected row.
    var cursor = 0
    /// Whether the changes against the baseline are shown instead of a
    /// dimension (the tab after the last, with `--baseline`).
    var showsChanges = false

    init() {}
}

/// The diff view's own state.
package struct DiffState: Sendable, Equatable {
    /// The flow compared against, by sequence number.
    var base: Int
    /// The flow compared with it.
    var other: Int
    /// First line shown.
    var scroll = 0
}

/// The detail view's own state.
package struct DetailState: Sendable, Equatable {
    /// The flow shown, by sequence number.
    var sequence: Int
    /// The tab shown.
    var tab: DetailTab = .request
    /// First line shown.
    var scroll = 0
    /// Text searched for in the body, highlighted where it occurs.
    var search: String?
    /// Whether an inbound flow's waterfall lists every call it made, not
    /// only the first ``DetailContent/waterfallCallLimit`` (`-`).
    var showsAllCalls = false
    /// Whether the body is shown whole rather than up to
    /// ``BodyFormatter/maximumLines``: a search found nothing in the lines
    /// shown, so the rest is searched and shown too.
    var showsWholeBody = false
    /// Whether the view keeps the end of a live stream in sight as it grows
    /// (the messages tab, and the Response tab of a body arriving in parts),
    /// as `tail -f` does: on when a tab of a live flow is shown, off once
    /// the person scrolls up, on again at the bottom.
    var followsEnd = false
}

/// A line of text being typed at the bottom of the screen.
struct Prompt: Sendable, Equatable {
    /// What the text is for.
    enum Purpose: Sendable, Equatable {
        /// Free-text filter of the list.
        case search
        /// Filter expression.
        case filter
        /// Search inside the detail view's body.
        case bodySearch
        /// The comment of the flow with this sequence number.
        case comment(Int)
        /// A command line (`:`).
        case command
        /// The breakpoint filter (`i`).
        case intercept
        /// A traffic rule, `KIND SPEC`: a new one, or the one at this index of the rules view.
        case rule(replacing: Int?)
        /// The file to save a body of the flow with this sequence number to.
        case saveBody(Int, request: Bool)
        /// The file to write the shown flows to: JSON lines (`w`), or HAR (`W`).
        case writeFlows(har: Bool)

        /// Whether text offered in the prompt is a suggestion that the first
        /// typed character replaces (a search, a filter, a file name), rather
        /// than text being edited (a comment, a rule).
        var replacesOfferedText: Bool {
            switch self {
            case .comment, .command, .rule: false
            case .search, .filter, .bodySearch, .intercept, .saveBody, .writeFlows: true
            }
        }
    }

    /// What the text is for.
    var purpose: Purpose
    /// The text so far.
    var text: String
    /// The position in the command history being shown (up/down), if any.
    var historyIndex: Int?
    /// What was typed before walking the history, restored past its end.
    var draft: String?
    /// Whether the text is the offered one, shown selected: typing replaces
    /// it, a backspace or Tab starts editing it.
    var isSelected: Bool

    /// Creates a prompt offering `text`.
    init(purpose: Purpose, text: String) {
        self.purpose = purpose
        self.text = text
        isSelected = !text.isEmpty && purpose.replacesOfferedText
    }

    /// Adds a typed character, replacing the offered text if it is still selected.
    mutating func type(_ character: Character) {
        if isSelected { text = "" }
        isSelected = false
        text.append(character)
    }

    /// The label shown before the text.
    var label: String {
        switch purpose {
        case .search: "Search: "
        case .filter: "Filter: "
        case .bodySearch: "Find in body: "
        case .comment: "Comment: "
        case .command: ":"
        case .intercept: "Intercept (empty: none): "
        case .rule(nil): "New rule (KIND SPEC): "
        case .rule: "Edit rule (KIND SPEC): "
        case .saveBody(_, true): "Save the request body to: "
        case .saveBody: "Save the response body to: "
        case .writeFlows(har: false): "Save the shown flows (JSON lines) to: "
        case .writeFlows(har: true): "Export the shown flows as HAR to: "
        }
    }
}

/// A yes/no question asked before something that cannot be undone.
enum Confirmation: Sendable, Equatable {
    /// `z`: remove every recorded flow.
    case clearFlows
    /// `q` on the list: leave netinspect (`Q` leaves without asking).
    case quit
    /// `d` in the rules view: delete the rule at this index.
    case deleteRule(Int)
}

/// A one-line note at the bottom of the screen, until the next key.
struct Notice: Sendable, Equatable {
    /// The text.
    var text: String
    /// Whether it reports a mistake.
    var isError: Bool
}

/// The whole state of the inspector UI: what was recorded and how it is
/// being looked at. Changed only by ``Reducer``, drawn only by ``Renderer``.
package struct AppState: Sendable {
    /// Recorded flows, agents and events.
    package internal(set) var session: Session
    /// The filtered, sorted index of the list.
    package internal(set) var view = FlowView()
    /// The terminal size.
    package internal(set) var size: Size
    /// Which screen is up.
    var mode: Mode = .list
    /// Whether the help overlay is shown over ``mode``.
    var showsHelp = false
    /// First row of the help overlay shown.
    var helpScroll = 0
    /// The selected row of the list.
    var cursor = 0
    /// The selected flow, by sequence number; the cursor follows it as rows move.
    var selection: Int?
    /// First list row on screen.
    var listTop = 0
    /// Whether the newest flow is kept selected and in view.
    var follows = true
    /// The flow a hold last stopped the list on (``Reducer/selectFirstHeld``):
    /// while the cursor rests there, the next hold moves it on.
    var stoppedAtHold: Int?
    /// The rows frozen by `p`, while the list is paused.
    var pausedRows: [Int]?
    /// The free-text filter (`/`).
    var searchText: String?
    /// The filter expression (`f` and the quick filters), as typed.
    package internal(set) var filterText: String?
    /// The text being typed, if any.
    var prompt: Prompt?
    /// The yes/no question being asked, if any.
    var confirmation: Confirmation?
    /// The note shown until the next key.
    var notice: Notice?
    /// Text shown over the screen until closed with q or Esc (the cURL command).
    var overlay: TextOverlay?
    /// Time zone for displayed times (injected so snapshots are stable).
    let timeZone: TimeZone
    /// The current time, from the last ``Action/tick(_:)``; unfinished
    /// flows show how long they have been running against it.
    var now: Date?
    /// The keymap.
    let keymap: Keymap
    /// The flow a diff compares against (`b`), by sequence number.
    var diffBase: Int?
    /// Command lines run from the bar, oldest first (at most 100).
    var commandHistory: [String] = []
    /// The list columns chosen with `:columns`; nil shows the default set.
    var chosenColumns: [ListColumn]?
    /// The breakpoint filter sent to agents that accept control (`i`); nil: none.
    var interceptFilter: String?
    /// The filter `I` switches back on.
    var lastInterceptFilter: String?
    /// Replays of many flows under way (`:replay.client`, `r` on marked flows).
    var replayJobs: [ReplayJob] = []
    /// The body view chosen per content type (`m` in the detail view,
    /// `:view MODE`), kept for the session: every JSON body stays in hex
    /// once one was switched to it.
    var bodyViews: [String: BodyFormatter.View] = [:]
    /// The traffic rules: what the rules view shows and agents that accept control get.
    var rules: RuleBook
    /// The command netinspect runs (`netinspect -- COMMAND`), if any.
    var commandRun: CommandRun?
    /// The finished flows grouped for the insights view, kept up to date as they arrive.
    var insights = Insights()
    /// `--baseline`: the recorded run, and what changed (the insights view's changes tab).
    package var baseline: BaselineView?
    /// The descriptor sets given with `--proto`: gRPC messages are shown
    /// with field and enum value names when they describe the method.
    let protoSchema: ProtoSchema

    /// The list nested by parent (`T`), and what it shows; nil when flat.
    var tree: FlowTree?
    /// Parents whose children the nested list hides (`-`).
    var collapsedParents: Set<Int> = []
    /// Whether every parent is collapsed (`_`), whatever `collapsedParents` says.
    var collapsesAll = false

    /// The free-text filter, made from ``searchText``.
    var searchFilter: FilterExpression? { searchText.map(FilterExpression.freeText) }
    var expressionFilter: FilterExpression?
    let detailCache = LinesMemo<DetailLinesKey>()
    let diffCache = LinesMemo<DiffLinesKey>()
    /// The list's call summaries, per flow and revision.
    let callSummaries = CallSummaries()

    /// A fresh state.
    package init(
        limits: FlowStore.Limits = FlowStore.Limits(),
        size: Size = .minimum,
        timeZone: TimeZone = .current,
        keymap: Keymap = .standard,
        rules: RuleBook = RuleBook(),
        protoSchema: ProtoSchema = ProtoSchema()
    ) {
        self.session = Session(limits: limits)
        self.rules = rules
        self.protoSchema = protoSchema
        self.size = size
        self.timeZone = timeZone
        self.keymap = keymap
    }

    /// The rows the list shows: frozen while paused, live otherwise; nested
    /// by parent in tree mode.
    package var rows: [Int] { pausedRows ?? tree?.rows ?? view.rows }

    /// Rows of the list that fit on screen (between the header and the two
    /// bottom lines).
    var listHeight: Int { max(1, size.height - 3) }

    /// Where keys go now.
    var keyContext: KeyContext {
        if prompt != nil { return .prompt }
        if confirmation != nil { return .confirm }
        if showsHelp || overlay != nil { return .help }
        switch mode {
        case .list: return .list
        case .detail: return .detail
        case .rules: return .rules
        case .insights: return .insights
        case .events, .diff, .output: return .help
        }
    }

    /// Connected agents whose app accepts control: those the rules reach.
    var controlledAgents: Int {
        session.agents.reduce(0) { $0 + ($1.isConnected && $1.hello.acceptsControl ? 1 : 0) }
    }

    /// The sort order as shown in the status bar, with the arrow spreadsheets
    /// use: `time↑` ascending (oldest first), `duration↓` descending (slowest first).
    var sortDescription: String {
        view.sortKey.rawValue + (view.isReversed ? "↓" : "↑")
    }

    /// The filters in force, as typed, joined for display.
    var filterDescription: String? {
        let parts = [searchText.map { "/\($0)" }, filterText].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " & ")
    }
}

/// Scrollable text shown over the screen, closed with q or Esc.
struct TextOverlay: Sendable, Equatable {
    /// The first line, in the title style.
    var title: String
    /// The text, one entry per line.
    var lines: [String]
    /// The first line shown.
    var scroll = 0

    /// Creates an overlay.
    init(title: String, lines: [String]) {
        self.title = title
        self.lines = lines
    }
}
