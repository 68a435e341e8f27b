import Foundation
@testable import InspectorCore
import TestSupport
import WireProtocol
import XCTest

final class BodyViewTests: XCTestCase {
    private func text(_ data: Data, _ type: String?) -> String {
        BodyFormatter.lines(for: CapturedBody(data: data), contentType: type).map(\.text).joined(separator: "\n")
    }

    func testImageHeadersAreReadForEachFormat() {
        XCTAssertEqual(ImageInfo(Fixtures.png), ImageInfo(format: "PNG", width: 320, height: 240))
        XCTAssertEqual(ImageInfo(Data("GIF89a".utf8) + Data([0x10, 0x00, 0x20, 0x00, 0, 0])), ImageInfo(format: "GIF", width: 16, height: 32))
        // SOI, an APP0 segment of 16 bytes, then SOF0 with 8-bit precision, height 600, width 800.
        var jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]) + Data(repeating: 0, count: 14)
        jpeg += Data([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03])
        XCTAssertEqual(ImageInfo(jpeg), ImageInfo(format: "JPEG", width: 800, height: 600))
        var webp = Data("RIFF".utf8) + Data([0, 0, 0, 0]) + Data("WEBPVP8X".utf8) + Data(repeating: 0, count: 8)
        webp += Data([0x3F, 0x01, 0x00, 0xC7, 0x00, 0x00]) // 320 × 200, stored minus one
        XCTAssertEqual(ImageInfo(webp), ImageInfo(format: "WebP", width: 320, height: 200))
        var lossless = Data("RIFF".utf8) + Data([0, 0, 0, 0]) + Data("WEBPVP8L".utf8) + Data([0, 0, 0, 0, 0x2F])
        // width-1 = 99 (14 bits), height-1 = 49 (next 14 bits)
        let bits = 99 | (49 << 14)
        lossless += Data([UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24 & 0xFF)])
        XCTAssertEqual(ImageInfo(lossless), ImageInfo(format: "WebP", width: 100, height: 50))
        XCTAssertNil(ImageInfo(Data([0x89, 0x50, 0x4E, 0x47])), "a header cut short is not an image")
        XCTAssertNil(ImageInfo(Data("plain".utf8)))
    }

    func testImageBodyIsDescribedThenDumped() {
        let shown = text(Fixtures.png, "image/png")
        XCTAssertTrue(shown.hasPrefix("Image  PNG, 320 × 240 px, 29 B"), shown)
        XCTAssertTrue(shown.contains("00000000  89 50 4e 47"), shown)
    }

    func testBinaryBodyIsAHexDump() {
        XCTAssertTrue(text(Data([0, 1, 2, 0xFF]), "application/octet-stream").hasPrefix("00000000  00 01 02 ff"))
    }

    func testMultipartIsDecodedFieldByField() {
        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello, world\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"me.png\"\r\nContent-Type: image/png\r\n\r\n"
        var data = Data(body.utf8) + Fixtures.png + Data("\r\n--XyZ\r\nContent-Disposition: form-data; name=\"blob\"\r\n\r\n".utf8)
        data += Data([0, 0, 0, 1, 2, 0xFF]) + Data("\r\n--XyZ--\r\n".utf8)
        let shown = text(data, "multipart/form-data; boundary=XyZ")
        XCTAssertTrue(shown.contains("Part 1  title  12 B"), shown)
        XCTAssertTrue(shown.contains("  Hello, world"), shown)
        XCTAssertTrue(shown.contains("Part 2  avatar  file \"me.png\"  29 B  image/png"), shown)
        XCTAssertTrue(shown.contains("PNG image, 320 × 240 px"), shown)
        XCTAssertTrue(shown.contains("Part 3  blob  6 B"), shown)
        XCTAssertTrue(shown.contains("(binary, 6 bytes)"), shown)
    }

    func testXMLAndHTMLAreIndented() {
        let xml = text(Data(#"<?xml version="1.0"?><order id="7"><item>tea</item><note/><!-- c --></order>"#.utf8), "application/xml")
        XCTAssertEqual(xml, """
            <?xml version="1.0"?>
            <order id="7">
              <item>
                tea
              </item>
              <note/>
              <!-- c -->
            </order>
            """)
        let html = text(Data("<html><body><p>Hi<br>there</p><script>if (a < b) { go() }</script></body></html>".utf8), "text/html; charset=utf-8")
        XCTAssertEqual(html, """
            <html>
              <body>
                <p>
                  Hi
                  <br>
                  there
                </p>
                <script>
                  if (a < b) { go() }
                </script>
              </body>
            </html>
            """)
    }

    func testFormBodyIsATable() {
        let shown = text(Data("name=Zo%C3%AB+K&empty=".utf8), "application/x-www-form-urlencoded")
        XCTAssertEqual(shown, "name  │ Zoë K\nempty │ ")
    }

    /// mitmproxy's view modes: `m` in the detail view cycles them, `:view`
    /// picks one, and the choice holds for every body of that content type.
    func testViewModesCycleAndAreRememberedPerContentType() {
        var state = Fixtures.mixedState(size: Size(width: 100, height: 40))
        state.press("g", "enter", "2")
        let screen = { (state: AppState) in Renderer.render(state, size: state.size).text }
        XCTAssertTrue(screen(state).contains("view: auto") && screen(state).contains(#""name": "Zoë""#), screen(state))
        state.press("m")
        XCTAssertTrue(screen(state).contains("view: raw") && screen(state).contains(#"{"id":1,"name":"Zoë""#), screen(state))
        state.press("m")
        XCTAssertTrue(screen(state).contains("view: hex") && screen(state).contains("7b 22 69 64"), screen(state))
        state.press("space")
        XCTAssertTrue(screen(state).contains("view: hex"), "the 404's JSON body too:\n\(screen(state))")
        state.enter("view auto", after: ":")
        XCTAssertEqual(state.bodyViews["json"], .auto)
        state.enter("view sideways", after: ":")
        XCTAssertEqual(state.notice?.isError, true)
    }
}
