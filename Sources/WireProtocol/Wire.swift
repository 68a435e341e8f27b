/// Constants of the wire protocol. See `docs/PROTOCOL.md`.
public enum Wire {
    /// The protocol version this library speaks and puts in its `hello`.
    ///
    /// Additive changes (new optional fields, new message kinds) keep the
    /// version; a change that an older peer would misread bumps it.
    public static let protocolVersion = 1

    /// The versions a decoder built from this library accepts in a `hello`.
    public static let supportedVersions: ClosedRange<Int> = 1...1

    /// The default largest frame payload a decoder accepts: 16 MiB.
    public static let defaultMaximumFrameSize = 16 * 1024 * 1024

    /// Size of the big-endian length prefix in front of every payload.
    public static let lengthPrefixSize = 4
}
