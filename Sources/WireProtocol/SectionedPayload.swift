import Foundation

/// Reads and writes the payload of a version-2 frame: the message's JSON,
/// then its bodies as raw bytes, each in a length-prefixed section
/// (docs/PROTOCOL.md §2.1).
///
/// Layout of one version-2 payload (inside the frame's 4-byte length):
///
/// ```
///  0               1               2               3               4
/// +---------------+---------------+---------------+---------------+---------------+
/// |     0x02      |         JSON length J, unsigned 32-bit, big-endian            |
/// +---------------+---------------+---------------+---------------+---------------+
/// |                 J bytes of UTF-8 JSON (the message, as in version 1,        ...
/// |                 but each body says {"section":K,...} instead of "base64")
/// +---------------+---------------+---------------+---------------+
/// |        section 0 length L0, unsigned 32-bit, big-endian       |
/// +---------------+---------------+---------------+---------------+
/// |                 L0 raw bytes of body 0                                      ...
/// +---------------+---------------+---------------+---------------+
/// |        section 1 length L1 ...                                 (and so on, to the end)
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// The first byte tells the layouts apart: a version-1 payload is JSON text,
/// which never starts with 0x02. So a reader needs no per-connection state
/// to read both, and an agent may switch at any frame boundary once the
/// viewer said it reads version 2. Sections run exactly to the end of the
/// payload; every length is checked against what is left before anything
/// is kept, so a malicious length costs nothing but an error.
enum SectionedPayload {
    /// The first byte of every version-2 payload.
    static let marker: UInt8 = 0x02
    private static let headerSize = 1 + Wire.lengthPrefixSize

    /// The range of the JSON in `payload`, a version-2 payload; the body
    /// sections' ranges go to `sections`.
    /// - Throws: ``WireError/malformedPayload(_:)`` when a length runs past
    ///   the payload's end.
    static func split(_ payload: UnsafeBufferPointer<UInt8>, sections: inout [Range<Int>]) throws(WireError) -> Range<Int> {
        guard payload.count >= headerSize, payload[0] == marker else {
            throw .malformedPayload("version-2 payload shorter than its 5-byte header")
        }
        let jsonLength = length(in: payload, at: 1)
        guard jsonLength <= payload.count - headerSize else {
            throw .malformedPayload("version-2 JSON length \(jsonLength) runs past the payload's \(payload.count) bytes")
        }
        let json = headerSize ..< headerSize + jsonLength
        var index = json.upperBound
        while index < payload.count {
            guard payload.count - index >= Wire.lengthPrefixSize else {
                throw .malformedPayload("body section \(sections.count) has a partial length")
            }
            let sectionLength = length(in: payload, at: index)
            index += Wire.lengthPrefixSize
            guard sectionLength <= payload.count - index else {
                throw .malformedPayload("body section \(sections.count) length \(sectionLength) runs past the payload")
            }
            sections.append(index ..< index + sectionLength)
            index += sectionLength
        }
        return json
    }

    /// The bytes `sections` take after the JSON, their lengths included.
    static func size(of sections: [Data]) -> Int {
        sections.reduce(0) { $0 + Wire.lengthPrefixSize + $1.count }
    }

    /// Appends `sections`, each a 32-bit big-endian length then its bytes.
    static func append(_ sections: [Data], to buffer: inout [UInt8]) {
        for body in sections {
            buffer.append(contentsOf: FrameEncoder.lengthPrefix(body.count))
            buffer.append(contentsOf: body)
        }
    }

    private static func length(in payload: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        Int(payload[index]) << 24 | Int(payload[index + 1]) << 16 | Int(payload[index + 2]) << 8 | Int(payload[index + 3])
    }
}

extension JSONWriter {
    /// Starts a version-2 payload at the end of `bytes`: bodies written from
    /// now on go to sections.
    mutating func beginSectionedPayload() -> Int {
        let start = output.count
        output.append(SectionedPayload.marker)
        output.append(repeating: 0, count: Wire.lengthPrefixSize)
        sections = []
        return start
    }

    /// Numbers `body` as the next section; its bytes follow the JSON.
    mutating func section(_ body: Data) -> Int {
        sections?.append(body)
        return (sections?.count ?? 1) - 1
    }

    /// Fills in the JSON length of the payload begun at `start` and returns
    /// the sections, whose bytes follow the JSON (``SectionedPayload/append(_:to:)``).
    /// They are not copied into the writer: a frame encoder copies them
    /// once, straight to where the frame goes.
    mutating func endSectionedJSON(startedAt start: Int) -> [Data] {
        let jsonStart = start + 1 + Wire.lengthPrefixSize
        putLength(output.count - jsonStart, at: start + 1)
        defer { sections = nil }
        return sections ?? []
    }

    /// Writes `length` as a 32-bit big-endian number over the four bytes at `index`.
    mutating func putLength(_ length: Int, at index: Int) {
        let value = UInt32(truncatingIfNeeded: length)
        output[index] = UInt8(truncatingIfNeeded: value >> 24)
        output[index + 1] = UInt8(truncatingIfNeeded: value >> 16)
        output[index + 2] = UInt8(truncatingIfNeeded: value >> 8)
        output[index + 3] = UInt8(truncatingIfNeeded: value)
    }
}

extension JSONTape {
    /// Records a frame payload of either version.
    func load(payload: UnsafeBufferPointer<UInt8>) throws(WireError) {
        guard payload.first == SectionedPayload.marker else { return try load(payload, json: 0 ..< payload.count) }
        var sections: [Range<Int>] = []
        let json = try SectionedPayload.split(payload, sections: &sections)
        try load(payload, json: json, sections: sections)
    }
}
