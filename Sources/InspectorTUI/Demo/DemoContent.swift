import Foundation

/// The data the demo server hands out: people with names from several
/// scripts, a PNG drawn on the spot, and a gzip-compressed JSON feed.
enum DemoContent {
    struct User: Codable, Sendable {
        var id: Int
        var name: String
        var email: String
        var city: String
        var role: String
    }

    static let people: [(name: String, email: String, city: String)] = [
        ("Zoë Müller", "zoe@example.com", "Zürich"),
        ("José Núñez", "jose@example.com", "Sevilla"),
        ("山田 太郎", "taro@example.jp", "東京"),
        ("Åsa Lindström", "asa@example.se", "Göteborg"),
        ("Renée Côté", "renee@example.ca", "Montréal"),
        ("Øystein Dahl", "oystein@example.no", "Tromsø"),
        ("Ada Lovelace", "ada@example.org", "London"),
        ("Jürgen Weiß", "juergen@example.de", "Köln"),
        ("Chloé Dubois", "chloe@example.fr", "Nantes"),
        ("Mikko Häkkinen", "mikko@example.fi", "Espoo"),
    ]

    /// User `id` (1…100).
    static func user(_ id: Int) -> User {
        let person = people[(id - 1) % people.count]
        return User(id: id, name: person.name, email: person.email, city: person.city, role: id % 7 == 0 ? "admin" : "member")
    }

    /// Compact JSON, UTF-8 as it is (no `\u` escapes), keys sorted.
    static func json(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs and dictionaries cannot fail.
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    // MARK: - The gzip feed

    /// `/api/feed`: 5229 bytes of pretty-printed JSON (24 posts), gzip -9,
    /// made once with Python's gzip module (mtime 0). Foundation decodes it.
    static let gzipFeed: [UInt8] = Array(Data(base64Encoded: """
        H4sIAAAAAAAC/72YP2/TQBjG93yKkxeWVL33bMd2JcRQBBICBtopiOGaXJKjTmzZTkVbdUhbVib+LWwgCEVVI6EOVbf7KKFFfAty
        15JWsuUjaq5SZOle3yX56Xnz5PG7XUHIajHWtJaQFUdxP6SJVZXFmLbZpAhqwTPWTSer55MFQtvqKsvyGGCMq/8qGc9Cecx6mIhT
        tsVRK4m6qC5OE97oWNNttJ91okTuq0fiAD0Rp2HIkqv7IV9n8vOuvTFtX30BVWnwbNO6XL6Y7ov7ayFPOxdABJPaAsAChlUcLGE8
        edUvjuxUi0kgT7JMW2KIGon41mVVlN7hIdqI+imKQyoOsyKmZ6wnhgwti5+ZGOahbK+EKkvoBgunh6Q6UdT8X06iOD09J8lznn8a
        /Tr5MR4cnr8/Gg8+jAf7492D8d678e7XIsiz0ej32yN09vn7n703eUjPmZN0tkQCR49k55FWuuI4aYsv6VqUNFHG47SIRLxOKXrM
        e800S8RxN88CAMYUcyQeAT2ek8d78FJirdNNus577UK0j5tpxngP3aedsADM8eekkqswfD2Gm8dYpTFNEeuhFbbBw5AWgTyK0smP
        8Kk4ESO2VQDiu8YUqkk029Wj1Uy5YGn7zaKSJ1EcokfxbsEGS3vvZpL5ijPQc/qmbbC0L2eRLpBIbk2PFJizQUJMKQZY/XHZWjzA
        JmzQDeajEqicAfqcAWDGBoOaMYVUtAB9tABiygZL228WlVSkIPpIAfYt2GBp791MMpUtbH22AMe0DZb25SzSqZxh63MGuOZs0LaN
        KaayhqPPGlAzYYPenB63QOUMV58zwDNigwQbe8ICFS1cfbQA35QNlrbfLCqpSIH1kQKCW7DB0t67kWREZQvQZwuCTdsglDbmzAMN
        og8aBMz5oOOYnWMQfdggxIQP+jDP2YWtDxrENuKDntmphXM9WVQuD1k99iqTexdpzBflZPGenCTeJVZl5y9ducKmbRQAAA==
        """, options: .ignoreUnknownCharacters) ?? Data())

    // MARK: - The PNG

    /// `/static/avatar.png`: a 192×144 RGB picture, stored without
    /// compression so it weighs a realistic 83 KB.
    static let avatarPNG: [UInt8] = png(width: 192, height: 144) { x, y in
        let dx = x - 96, dy = y - 72
        if dx * dx + dy * dy < 48 * 48 { return (245, 196, 140) }
        return (UInt8(40 + x / 2), UInt8(60 + y), 180)
    }

    /// A truecolour PNG whose pixels `color` gives.
    static func png(width: Int, height: Int, color: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var scanlines: [UInt8] = []
        scanlines.reserveCapacity((width * 3 + 1) * height)
        for y in 0 ..< height {
            scanlines.append(0)  // filter: none
            for x in 0 ..< width {
                let (r, g, b) = color(x, y)
                scanlines += [r, g, b]
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
        png += chunk("IDAT", zlibStored(scanlines))
        png += chunk("IEND", [])
        return png
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let end = min(start + 65535, data.count)
            let length = UInt16(end - start)
            out.append(end == data.count ? 1 : 0)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            out += data[start ..< end]
            start = end
        } while start < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + bigEndian(b << 16 | a)
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0 ..< 8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
