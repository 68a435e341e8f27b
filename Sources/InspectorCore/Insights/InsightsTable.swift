/// The insights as a table of text, the same for the `s` view and
/// `--summary`: a header, then a row a group, its name cut to fit.
///
/// ```swift
/// InsightsTable.header(width: 100)
/// InsightsTable.row(group, width: 100)
/// //  NAME …  COUNT  ERR%   P50    P95    P99   SENT   RECV  IMPACT  HISTOGRAM
/// ```
package enum InsightsTable {
    /// The histogram's blocks, from one flow to the group's fullest bucket.
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The columns after the name, each right-aligned to its width.
    private static let columns: [(title: String, width: Int)] = [
        ("COUNT", 7), ("ERR%", 6), ("P50", 7), ("P95", 7), ("P99", 7), ("SENT", 9), ("RECV", 9), ("IMPACT", 8),
    ]
    /// The histogram column: a block a bucket, and the space before it.
    private static let histogramWidth = InsightsGroup.bucketBounds.count + 1 + 2

    /// How wide the name column is in a table `width` columns wide.
    static func nameWidth(_ width: Int) -> Int {
        max(12, width - columns.reduce(0) { $0 + $1.width } - histogramWidth)
    }

    /// The header line.
    static func header(width: Int) -> String {
        pad("NAME", nameWidth(width)) + columns.map { leftPad($0.title, $0.width) }.joined() + "  HISTOGRAM"
    }

    /// One group's line.
    static func row(_ group: InsightsGroup, width: Int) -> String {
        let percent = group.count == 0 ? "-" : Format.fixed(group.errorRate * 100, decimals: 1)
        let duration = { (p: Int) in group.percentile(p).map(Format.duration) ?? "-" }
        let cells = ["\(group.count)", percent, duration(50), duration(95), duration(99),
                     Format.size(group.bytesSent), Format.size(group.bytesReceived), Format.duration(group.impact)]
        return pad(group.name, nameWidth(width)) + zip(cells, columns).map { leftPad($0, $1.width) }.joined()
            + "  " + histogram(group)
    }

    /// The histogram of a group's durations, a block a bucket (fastest
    /// first), each as high as its share of the fullest; a space for none.
    static func histogram(_ group: InsightsGroup) -> String {
        let fullest = group.histogram.max() ?? 0
        guard fullest > 0 else { return String(repeating: " ", count: group.histogram.count) }
        return String(group.histogram.map { count in
            count == 0 ? " " : blocks[(count * blocks.count - 1) / fullest]
        })
    }

    /// The whole table for `--summary`: a section a dimension, each sorted
    /// by impact; `filter`, the `--filter` that chose the flows, is named.
    package static func text(_ insights: Insights, width: Int, filter: String? = nil) -> [String] {
        let flows = "\(insights.count) flows" + (filter.map { ", those --filter '\($0)' shows" } ?? "")
        var lines = ["netinspect: insights of \(flows) (histogram buckets: "
            + (InsightsGroup.bucketBounds.map { "<" + Format.duration($0) } + ["more"]).joined(separator: " ") + ")"]
        for dimension in Insights.Dimension.allCases {
            let rows = insights.rows(dimension, by: .impact)
            guard !rows.isEmpty else { continue }
            lines.append("")
            lines.append("by \(dimension.rawValue):")
            lines.append(header(width: width))
            lines += rows.map { row($0, width: width) }
        }
        return lines
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        let cut = DisplayWidth.of(text) > width - 1 ? String(text.prefix(width - 2)) + "…" : text
        return cut + String(repeating: " ", count: max(0, width - DisplayWidth.of(cut)))
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - DisplayWidth.of(text))) + text
    }
}
