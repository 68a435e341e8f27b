import Foundation
@testable import InspectorCore
import ProtobufWire
import TestSupport
import XCTest

/// `--proto` files read from disk (`ProtoSchema.load(paths:)`): a file that
/// cannot be read, or a `.proto` source given for a descriptor set, is
/// refused naming the file and saying how to make a set.
final class ProtoSchemaFilesTests: XCTestCase {
    func testAProtoSourceGivenForADescriptorSetIsRefusedNamingTheFile() throws {
        let path = GRPCFixtures.directory.appendingPathComponent("echo.proto").path
        XCTAssertThrowsError(try ProtoSchema.load(paths: [path])) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix(path + ": not a descriptor set ("), text)
            XCTAssertTrue(text.contains("protoc --descriptor_set_out"), text)
        }
    }

    func testAMissingFileIsNamed() {
        XCTAssertThrowsError(try ProtoSchema.load(paths: ["/nonexistent/echo.pb"])) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent/echo.pb: cannot be read"), "\(error)")
        }
    }
}
