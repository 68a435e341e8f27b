import Foundation

/// What the command line asks of a run, read once: `--help`, `--tiny`,
/// `--only N,N`, `--rounds N`; and the machine's load, printed with every
/// section (a figure taken beside a busy core says so itself).
enum BenchOptions {
    static let sections: [(number: Int, name: String)] = [
        (1, "capture overhead: URLSession and AsyncHTTPClient (trait AsyncHTTPClient) against loopback HTTP, with and without the agent"),
        (2, "codec: frames encoded and decoded a second"),
        (3, "inspector ingest: a real listener and store, no terminal"),
        (4, "UI core: filtering, sorting and rendering a large store"),
        (5, "reading a HAR file, in a separate process"),
        (6, "traffic rules: cost per captured request"),
        (7, "OTLP/HTTP span ingest"),
        (8, "inbound capture: a Hummingbird service making one outbound call a request (trait Hummingbird)"),
        (9, "gRPC unary calls, client and server captured (trait GRPC)"),
        (10, "streamed responses read by AsyncHTTPClient (trait AsyncHTTPClient)"),
        (11, "server replay of a recording"),
    ]

    static let usage = """
        usage: netinspect-bench [--tiny] [--only N,N,...] [--rounds N] [--help]

          --only N,N   run only these sections (all by default)
          --rounds N   rounds of every section: those that interleave their modes
                       (1, 8, 9, 10) run N interleaved rounds and report the median;
                       every other section is run N times, one table each.
                       Defaults: 5 for section 1, 3 for 8 and 9, 2 for 10, 1 for the rest
          --tiny       every size shrunk so CI can smoke-run it in seconds; figures mean nothing
          --help       this text

        sections:
        \(sections.map { "  \(String($0.number).padding(toLength: 3, withPad: " ", startingAt: 0)) \($0.name)" }.joined(separator: "\n"))

        environment (for scripts; Benchmarks/agent-instructions.sh sets them):
          NETINSPECT_BENCH_ROUNDS          rounds when --rounds is not given
          NETINSPECT_BENCH_MODES=a,e,...   section 1's modes by letter
          NETINSPECT_BENCH_COUNT, _AHC_COUNT, _INBOUND_COUNT, _GRPC_COUNT   requests of a run
          NETINSPECT_BENCH_WORKLOADS       section 1's URLSession workloads by index (empty: none)
          NETINSPECT_BENCH_NETINSPECT      the netinspect binary (default: beside this one)
          NETINSPECT_BENCH_FOLD_WINDOW_MS  the agent's fold window (callgrind runs lengthen it)
          NETINSPECT_BENCH_SERVICE_MODES   plain or captured: sections 8 and 9 run that mode only

        Every figure of a section is measured side by side in one run; each
        section prints the machine's load average before it starts.
        """

    private static let arguments = Array(CommandLine.arguments.dropFirst())

    static let wantsHelp = arguments.contains("--help") || arguments.contains("-h")
    static let tiny = arguments.contains("--tiny")
    static let only: Set<Int>? = value(after: "--only").map { Set($0.split(separator: ",").compactMap { Int($0) }) }

    /// `--rounds N`, else `NETINSPECT_BENCH_ROUNDS`; nil when neither is given.
    static let rounds: Int? = (value(after: "--rounds") ?? ProcessInfo.processInfo.environment["NETINSPECT_BENCH_ROUNDS"])
        .flatMap { Int($0) }.map { max(1, $0) }

    /// The rounds of a section that interleaves its modes, `standard` unless asked.
    static func rounds(standard: Int) -> Int { rounds ?? standard }

    static func wanted(_ section: Int) -> Bool { only?.contains(section) ?? true }

    /// `NETINSPECT_BENCH_SERVICE_MODES=plain` or `=captured`: sections 8
    /// and 9 run only that mode (a callgrind count wants one mode a
    /// process); both by default.
    static func runsService(captured: Bool) -> Bool {
        switch ProcessInfo.processInfo.environment["NETINSPECT_BENCH_SERVICE_MODES"] {
        case "plain": !captured
        case "captured": captured
        default: true
        }
    }

    /// Words the command line has that this does not read, to refuse.
    static var unknown: [String] {
        var rest: [String] = []
        var skip = false
        for argument in arguments {
            if skip { skip = false; continue }
            switch argument {
            case "--only", "--rounds": skip = true
            case "--tiny", "--help", "-h": break
            default: rest.append(argument)
            }
        }
        return rest
    }

    private static func value(after flag: String) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// The 1, 5 and 15 minute load averages, as `/proc/loadavg` has them.
    static var load: String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
