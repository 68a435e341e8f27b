/// Constants of the wire protocol. See `docs/PROTOCOL.md`.
public enum Wire {
    /// The protocol version this library puts in its `hello` and writes
    /// until the viewer asks for a higher one: every viewer reads it.
    ///
    /// Additive changes (new optional fields, new message kinds) keep the
    /// version; a change that an older peer would misread bumps it.
    public static let protocolVersion = 1

    /// The highest version this library writes and reads: 2, bodies as raw
    /// bytes after the JSON (``SectionedPayload``). An agent offers it in
    /// its hello (``Hello/highestProtocolVersion``), a viewer that reads it
    /// answers ``ViewerMessage/useProtocolVersion(_:)``, and the agent's
    /// frames from then on are version 2 (docs/PROTOCOL.md §2.1).
    public static let highestProtocolVersion = 2

    /// The versions a decoder built from this library accepts in a `hello`
    /// and reads frames of.
    public static let supportedVersions: ClosedRange<Int> = 1...highestProtocolVersion

    /// The default largest frame payload a decoder accepts: 16 MiB.
    public static let defaultMaximumFrameSize = 16 * 1024 * 1024

    /// Size of the big-endian length prefix in front of every payload.
    public static let lengthPrefixSize = 4
}
