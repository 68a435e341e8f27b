extension UInt8 {
    /// The byte with an ASCII capital letter made small; any other byte as
    /// it is. For text lowered byte by byte on hot paths, where
    /// `String.lowercased()` applies Unicode case mapping
    /// (docs/BENCHMARKS.md, "Costs behind the code").
    ///
    /// ```swift
    /// UInt8(ascii: "Q").lowercasedASCII == UInt8(ascii: "q")
    /// ```
    package var lowercasedASCII: UInt8 {
        self &- UInt8(ascii: "A") < 26 ? self | 0x20 : self
    }
}
