import Foundation

/// Digits for the list, the detail view and `--dump`, made without
/// `String(format:)`: on Linux that goes through `NSString` and
/// `CFStringCreateWithFormat`, and a `--dump` line made five of them, most
/// of netinspect's cost a flow (docs/BENCHMARKS.md, "Costs behind the code").
/// Each gives the text `String(format:)` would; `FormattingTests` compares
/// them on many values, ties included.
extension Format {
    /// `value` with at least `width` digits, zeros in front: `%0*d`.
    static func zeroPadded(_ value: Int, width: Int) -> String {
        let digits = String(value.magnitude)
        let padding = max(0, width - digits.utf8.count - (value < 0 ? 1 : 0))
        let zeros = padding == 0 ? "" : String(repeating: "0", count: padding)
        return value < 0 ? "-" + zeros + digits : zeros + digits
    }

    /// `value` with `decimals` digits after the point (1 to 3): `%.*f`.
    /// printf rounds the double's exact value, half to even; scaling by a
    /// power of ten rounds too, so a value within a hair of a tie, and
    /// anything negative, huge or not finite, is left to `String(format:)`.
    static func fixed(_ value: Double, decimals: Int) -> String {
        let scale = decimals == 1 ? 10.0 : decimals == 2 ? 100.0 : 1000.0
        let scaled = value * scale
        guard scaled >= 0, scaled < 1e12, abs(scaled - scaled.rounded(.down) - 0.5) > 1e-6 else {
            return String(format: "%.\(decimals)f", value)
        }
        let units = Int(scaled.rounded(.toNearestOrEven))
        let whole = units / Int(scale)
        return "\(whole)." + zeroPadded(units - whole * Int(scale), width: decimals)
    }
}
