import Foundation
import WireProtocol
import XCTest

/// What a recorded request is matched on: mitmproxy's server replay rules.
final class ServerReplayKeyTests: XCTestCase {
    private func key(_ url: String, method: String = "GET", headers: [HTTPHeader] = [], body: String? = nil,
                     _ configure: (inout ServerReplayOptions) -> Void = { _ in }) -> ServerReplayKey {
        var options = ServerReplayOptions()
        configure(&options)
        return ServerReplayKey(method: method, url: url, headers: headers, body: body.map { Data($0.utf8) }, options: options)!
    }

    func testMethodSchemeHostPortPathQueryOrderAndBodyEachCount() {
        let base = key("https://api.example.com/items?a=1&b=2", method: "POST", body: "x")
        XCTAssertEqual(base, key("https://API.example.com:443/items?a=1&b=2", method: "post", body: "x"), "case of method and host, the default port")
        for other in [key("https://api.example.com/items?a=1&b=2", method: "PUT", body: "x"),
                      key("http://api.example.com/items?a=1&b=2", method: "POST", body: "x"),
                      key("https://web.example.com/items?a=1&b=2", method: "POST", body: "x"),
                      key("https://api.example.com:8443/items?a=1&b=2", method: "POST", body: "x"),
                      key("https://api.example.com/item?a=1&b=2", method: "POST", body: "x"),
                      key("https://api.example.com/items?b=2&a=1", method: "POST", body: "x"),
                      key("https://api.example.com/items?a=1&b=3", method: "POST", body: "x")] {
            XCTAssertNotEqual(other.withBody, base.withBody)
            XCTAssertNotEqual(other.withoutBody, base.withoutBody)
        }
        let otherBody = key("https://api.example.com/items?a=1&b=2", method: "POST", body: "y")
        XCTAssertNotEqual(otherBody.withBody, base.withBody)
        XCTAssertEqual(otherBody.withoutBody, base.withoutBody, "the key without the body ignores it")
    }

    func testTheOptionsLeaveOutWhatTheyName() {
        XCTAssertEqual(key("/a?page=1&ts=100".asURL) { $0.ignoreParams = ["ts"] }, key("/a?page=1&ts=200".asURL) { $0.ignoreParams = ["ts"] })
        XCTAssertNotEqual(key("/a?page=1&ts=100".asURL), key("/a?page=1&ts=200".asURL))
        XCTAssertEqual(key("http://one.test:1/a") { $0.ignoreHost = true }, key("http://two.test:2/a") { $0.ignoreHost = true })
        XCTAssertEqual(key("/a".asURL, method: "POST", body: "1") { $0.ignoreContent = true }, key("/a".asURL, method: "POST", body: "2") { $0.ignoreContent = true })
        let user = { (value: String) in [HTTPHeader(name: "X-User", value: value), HTTPHeader(name: "X-Request-ID", value: UUID().uuidString)] }
        XCTAssertEqual(key("/a".asURL, headers: user("ann")), key("/a".asURL, headers: user("bob")), "headers do not count unless named")
        XCTAssertNotEqual(key("/a".asURL, headers: user("ann")) { $0.useHeaders = ["x-user"] },
                          key("/a".asURL, headers: user("bob")) { $0.useHeaders = ["x-user"] })
        XCTAssertEqual(key("/a".asURL, headers: [HTTPHeader(name: "x-user", value: "ann")]) { $0.useHeaders = ["X-User"] },
                       key("/a".asURL, headers: user("ann")) { $0.useHeaders = ["X-User"] })
    }

    func testTheKeyIsTheSameInEveryProcess() {
        // FNV-1a 64 of "GET\nhttp\n127.0.0.1:8080\n/text\n\n", worked out
        // apart from this code (Python): a change to the key's form shows here.
        XCTAssertEqual(key("http://127.0.0.1:8080/text").withBody, 0xFEB5_F221_DC70_AE8E)
    }

    func testABookTravelsAndReadsBack() throws {
        var options = ServerReplayOptions()
        options.ignoreParams = ["ts"]
        options.extra = .kill
        options.reuse = true
        let entry = ServerReplayEntry(key: key("http://127.0.0.1/x"), recordedID: FlowID(),
                                      response: Response(statusCode: 201, headers: [HTTPHeader(name: "A", value: "b")],
                                                         body: CapturedBody(data: Data([0, 1, 2]))), wait: 0.25)
        for message in [ViewerMessage.serverReplay(ServerReplayBook(options: options, entries: [entry], continues: true)), .serverReplay(nil)] {
            var decoder = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: true)
            decoder.append(contentsOf: message.frame())
            XCTAssertEqual(try decoder.next(), message)
            var refusing = ViewerMessageDecoder(maximumFrameSize: 1 << 20, acceptsRules: false)
            refusing.append(contentsOf: message.frame())
            XCTAssertNil(try refusing.next(), "an agent that does not allow control skips it")
        }
    }
}

private extension String {
    var asURL: String { "http://127.0.0.1:8080" + self }
}
