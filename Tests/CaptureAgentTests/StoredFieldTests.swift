import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import CaptureAgent

/// `StoredField` reads private properties at offsets from the runtime's
/// field metadata; a wrong offset or type would read garbage, so these pin
/// that it reads exactly what the property holds, and refuses what it cannot.
final class StoredFieldTests: XCTestCase {
    private class Base {
        var number = 7
        var label: String? = "base"
        let queue = DispatchQueue(label: "stored-field-test")
    }

    private final class Derived: Base {
        var extra = [1, 2, 3]
    }

    func testReadsEachKindOfPropertyIncludingASuperclasssFromASubclassInstance() throws {
        let object = Derived()
        object.number = 42
        object.label = "changed"
        let number = try XCTUnwrap(StoredField("number", in: Derived.self))
        XCTAssertEqual(number.value(in: object, as: Int.self), 42)
        XCTAssertEqual(number.value(in: object) as? Int, 42)
        let label = try XCTUnwrap(StoredField("label", in: Base.self))
        XCTAssertEqual(label.value(in: object) as? String, "changed")
        object.label = nil
        XCTAssertNil(label.value(in: object) as? String)
        XCTAssertTrue(try XCTUnwrap(StoredField("queue", in: Base.self)).object(in: object) === object.queue)
        XCTAssertEqual(try XCTUnwrap(StoredField("extra", in: Derived.self)).value(in: object, as: [Int].self), [1, 2, 3])
    }

    func testMissingFieldsAndMismatchedTypesGiveNil() throws {
        XCTAssertNil(StoredField("noSuchField", in: Derived.self))
        let number = try XCTUnwrap(StoredField("number", in: Base.self))
        XCTAssertNil(number.value(in: Base(), as: Int32.self), "a read as another type must be refused")
        XCTAssertNil(number.object(in: Base()), "an Int is not a class instance")
        XCTAssertNil(try XCTUnwrap(StoredField("label", in: Base.self)).object(in: Base()), "an optional is not read as an object")
    }

    /// The corelibs fields the agent reads are all still there, with the
    /// types it expects (a rename in a toolchain fails here, by name).
    func testEveryCorelibsFieldTheAgentReadsExists() throws {
        let fields = TaskInternals.Fields.shared
        XCTAssertNotNil(fields.session)
        XCTAssertNotNil(fields.knownBody)
        XCTAssertTrue(try XCTUnwrap(fields.workQueue).type == DispatchQueue.self)
        XCTAssertTrue(try XCTUnwrap(fields.taskRegistry).type is AnyClass)
        XCTAssertNotNil(fields.behaviours)
    }

    /// Each task has its own work queue; reading it gives that queue, kept alive.
    func testEachTaskSWorkQueueIsRead() throws {
        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "http://127.0.0.1:9/never-sent")!
        let first = try XCTUnwrap(TaskInternals(of: session.dataTask(with: url)).workQueue)
        let second = try XCTUnwrap(TaskInternals(of: session.dataTask(with: url)).workQueue)
        XCTAssertFalse(first === second)
        XCTAssertTrue(first.label.contains("URLSessionTask"), first.label)
    }
}
