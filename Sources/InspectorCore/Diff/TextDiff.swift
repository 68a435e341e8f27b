/// A line-by-line diff of two texts (Myers' O(ND) algorithm, after
/// trimming the lines both share at the start and the end).
enum TextDiff {
    /// Edits beyond this are not searched for: the texts are reported as
    /// too different, with where they first part.
    static let maximumEdits = 1_000

    enum Edit: Equatable {
        case same(Int, Int)
        case removed(Int)
        case added(Int)
    }

    static func rows(_ base: String, _ other: String) -> [FlowDiff.Row] {
        let left = base.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        let right = other.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard let edits = edits(left, right) else {
            let first = (0..<min(left.count, right.count)).first { left[$0] != right[$0] } ?? min(left.count, right.count)
            return [
                FlowDiff.Row(kind: .note, label: "more than \(maximumEdits) lines differ (\(left.count) vs \(right.count) lines)", base: nil, other: nil),
                FlowDiff.Row(kind: .changed, label: "line \(first + 1)",
                             base: first < left.count ? String(left[first]) : nil, other: first < right.count ? String(right[first]) : nil),
            ]
        }
        var rows: [FlowDiff.Row] = []
        var same = 0
        var omitted = 0
        func flushSame() {
            if same > 0, !rows.isEmpty { rows.append(FlowDiff.Row(kind: .note, label: "… \(same) lines the same", base: nil, other: nil)) }
            same = 0
        }
        for edit in edits {
            switch edit {
            case .same: same += 1
            case .removed(let index):
                flushSame()
                if rows.count < FlowDiff.maximumRows {
                    rows.append(FlowDiff.Row(kind: .removed, label: "line \(index + 1)", base: String(left[index]), other: nil))
                } else { omitted += 1 }
            case .added(let index):
                flushSame()
                if rows.count < FlowDiff.maximumRows {
                    rows.append(FlowDiff.Row(kind: .added, label: "line \(index + 1)", base: nil, other: String(right[index])))
                } else { omitted += 1 }
            }
        }
        if omitted > 0 { rows.append(FlowDiff.Row(kind: .note, label: "… \(omitted) more differences not listed", base: nil, other: nil)) }
        return rows
    }

    /// The shortest edit script from `left` to `right`, or nil when it
    /// needs more than ``maximumEdits`` edits.
    static func edits<Element: Equatable>(_ left: [Element], _ right: [Element]) -> [Edit]? {
        var prefix = 0
        while prefix < left.count, prefix < right.count, left[prefix] == right[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < left.count - prefix, suffix < right.count - prefix,
              left[left.count - 1 - suffix] == right[right.count - 1 - suffix] { suffix += 1 }
        let n = left.count - prefix - suffix
        let m = right.count - prefix - suffix
        var middle: [Edit] = []
        if n > 0 || m > 0 {
            guard let script = myers(n: n, m: m, equal: { left[prefix + $0] == right[prefix + $1] }) else { return nil }
            middle = script.map {
                switch $0 {
                case let .same(a, b): .same(a + prefix, b + prefix)
                case let .removed(a): .removed(a + prefix)
                case let .added(b): .added(b + prefix)
                }
            }
        }
        return (0..<prefix).map { Edit.same($0, $0) } + middle
            + (0..<suffix).map { Edit.same(left.count - suffix + $0, right.count - suffix + $0) }
    }

    private static func myers(n: Int, m: Int, equal: (Int, Int) -> Bool) -> [Edit]? {
        let limit = min(n + m, maximumEdits)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)
        var trace: [[Int]] = []
        var found = false
        search: for d in 0...limit {
            trace.append(v)
            for k in stride(from: -d, through: d, by: 2) {
                var x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1] : v[offset + k - 1] + 1
                var y = x - k
                while x < n, y < m, equal(x, y) {
                    x += 1
                    y += 1
                }
                v[offset + k] = x
                if x >= n, y >= m {
                    found = true
                    break search
                }
            }
        }
        guard found else { return nil }
        // Walk back through the saved frontiers.
        var edits: [Edit] = []
        var x = n
        var y = m
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let v = trace[d]
            let k = x - y
            let previousK = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? k + 1 : k - 1
            let previousX = d == 0 ? 0 : v[offset + previousK]
            let previousY = previousX - previousK
            while x > previousX, y > previousY {
                x -= 1
                y -= 1
                edits.append(.same(x, y))
            }
            if d > 0 {
                if x == previousX { edits.append(.added(previousY)) } else { edits.append(.removed(previousX)) }
            }
            x = previousX
            y = previousY
        }
        return edits.reversed()
    }
}
