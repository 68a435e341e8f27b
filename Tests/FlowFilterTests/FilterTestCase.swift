import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter

/// What the filter tests share: a flow to match, parsing that fails the
/// test instead of throwing, and assertions that name the expression.
class FilterTestCase: XCTestCase {
    func flow(
        method: String = "GET",
        url: String = "https://api.example.com/v1/users?page=2",
        requestHeaders: [HTTPHeader] = [HTTPHeader(name: "Accept", value: "application/json")],
        requestBody: String? = nil,
        status: Int? = 200,
        responseHeaders: [HTTPHeader] = [HTTPHeader(name: "Content-Type", value: "application/json; charset=utf-8")],
        responseBody: String? = #"{"name":"Zoë"}"#,
        mimeType: String? = "application/json",
        state: FlowState = .completed,
        error: FlowError? = nil
    ) -> NetworkLog {
        NetworkLog(
            request: Request(
                method: method, url: url, headers: requestHeaders,
                body: requestBody.map { CapturedBody(data: Data($0.utf8)) }
            ),
            response: status.map {
                Response(
                    statusCode: $0, headers: responseHeaders,
                    body: responseBody.map { CapturedBody(data: Data($0.utf8)) }, mimeType: mimeType
                )
            },
            timing: Timing(startedAt: Date(timeIntervalSince1970: 0)),
            error: error,
            state: state
        )
    }

    func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> FilterExpression {
        do {
            return try FilterExpression.parse(text)
        } catch {
            XCTFail("'\(text)' did not parse: \(error)", file: file, line: line)
            return .not(.all)
        }
    }

    func assertMatches(_ text: String, _ log: NetworkLog, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(parse(text, file: file, line: line).matches(log), "'\(text)' should match \(note)", file: file, line: line)
    }

    func assertMisses(_ text: String, _ log: NetworkLog, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(parse(text, file: file, line: line).matches(log), "'\(text)' should not match \(note)", file: file, line: line)
    }

    func assertError(
        _ text: String, _ message: String, at offset: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let expression = try FilterExpression.parse(text)
            XCTFail("'\(text)' parsed as \(expression), expected an error", file: file, line: line)
        } catch {
            XCTAssertEqual(error.offset, offset, "offset of '\(error.message)' in '\(text)'", file: file, line: line)
            XCTAssertTrue(error.message.contains(message), "'\(error.message)' should contain '\(message)'", file: file, line: line)
        }
    }
}
