import Foundation
import WireProtocol
import XCTest

@testable import FlowFilter

/// `~grpc [REGEX]` and `~gs NAME|CODE`, beside the rest of the language (FilterTests).
final class GRPCFilterTests: XCTestCase {
    private func call(_ service: String = "echo.Echo", _ method: String = "Get", status: GRPCStatus? = nil) -> NetworkLog {
        var log = NetworkLog(request: Request(method: "POST", url: "http://127.0.0.1:9000/\(service)/\(method)"),
                             response: Response(statusCode: 200), timing: Timing(startedAt: Date(timeIntervalSince1970: 0)))
        log.grpc = GRPCCall(service: service, method: method, status: status)
        return log
    }

    private let plain = NetworkLog(request: Request(method: "POST", url: "http://127.0.0.1:9000/echo.Echo/Get"),
                                   response: Response(statusCode: 200), timing: Timing(startedAt: Date(timeIntervalSince1970: 0)))

    private func matches(_ text: String, _ log: NetworkLog, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        do {
            return try FilterExpression.parse(text).matches(log)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
            return false
        }
    }

    func testGRPCAloneSelectsCallsAndNotAnHTTPFlowToTheSamePath() {
        XCTAssertTrue(matches("~grpc", call()))
        XCTAssertFalse(matches("~grpc", plain))
        XCTAssertTrue(matches("!~grpc", plain))
    }

    func testGRPCWithAPatternMatchesServiceSlashMethod() {
        XCTAssertTrue(matches("~grpc echo.Echo", call()))
        XCTAssertTrue(matches("~grpc 'Echo/(Get|Put)$'", call()))
        XCTAssertFalse(matches("~grpc 'Echo/(Get|Put)$'", call("echo.Echo", "Expand")))
        XCTAssertTrue(matches("~grpc ^inventory\\.", call("inventory.Stock", "Reserve")))
        XCTAssertFalse(matches("~grpc echo", call("inventory.Stock", "Reserve")))
        XCTAssertFalse(matches("~grpc echo", plain))
    }

    func testGRPCTakesAWordAsItsPatternAndLeavesOperatorsAlone() throws {
        XCTAssertEqual(try FilterExpression.parse("~grpc & ~m POST"), .and(.grpc(nil), .method("POST")))
        XCTAssertEqual(try FilterExpression.parse("(~grpc) | ~e"), .or(.grpc(nil), .error))
        XCTAssertEqual(try FilterExpression.parse("~grpc echo ~e"), .and(.grpc(try FilterPattern(regularExpression: "echo")), .error))
    }

    func testStatusByNameInEitherCaseOrByCode() {
        let notFound = call(status: GRPCStatus(code: 5, message: "gone"))
        for text in ["~gs NOT_FOUND", "~gs not_found", "~gs 5"] { XCTAssertTrue(matches(text, notFound), text) }
        XCTAssertFalse(matches("~gs OK", notFound))
        XCTAssertTrue(matches("~gs OK", call(status: GRPCStatus(code: 0))))
        XCTAssertTrue(matches("~gs DEADLINE_EXCEEDED", call(status: GRPCStatus(code: 4))))
        XCTAssertTrue(matches("~gs 99", call(status: GRPCStatus(code: 99))), "a code gRPC does not define still matches by number")
    }

    func testStatusNeverMatchesACallStillRunningOrAnHTTPFlow() {
        XCTAssertFalse(matches("~gs OK", call()))
        XCTAssertFalse(matches("~gs 0", plain))
        XCTAssertTrue(matches("~grpc & !~gs OK", call()), "unfinished calls are among the not-OK ones")
    }

    func testEveryCanonicalNameParses() throws {
        for (code, name) in GRPCStatus.names.enumerated() {
            XCTAssertEqual(try FilterExpression.parse("~gs \(name)"), .grpcStatus(code))
        }
    }

    func testAnUnknownStatusOrAMissingOneIsAnErrorWithItsColumn() {
        XCTAssertThrowsError(try FilterExpression.parse("~grpc & ~gs NOPE")) { error in
            XCTAssertEqual((error as? FilterParseError)?.offset, 12)
            XCTAssertTrue("\(error)".contains("gRPC status name like NOT_FOUND"), "\(error)")
        }
        XCTAssertThrowsError(try FilterExpression.parse("~gs")) { error in
            XCTAssertEqual((error as? FilterParseError)?.message, "~gs needs an argument")
        }
        XCTAssertThrowsError(try FilterExpression.parse("~gs -1"))
    }

    func testQuickSearchFindsAStatusName() throws {
        let notFound = call(status: GRPCStatus(code: 5))
        XCTAssertTrue(FilterExpression.freeText("not_found").matches(notFound))
        XCTAssertFalse(FilterExpression.freeText("not_found").matches(call(status: GRPCStatus(code: 0))))
    }

    func testTheHelpSummaryListsBoth() {
        let syntax = FilterExpression.syntaxSummary.map(\.syntax)
        XCTAssertTrue(syntax.contains("~grpc [REGEX]"))
        XCTAssertTrue(syntax.contains("~gs NAME|CODE"))
    }
}
