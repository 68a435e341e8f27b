import Foundation
import ProtobufWire
import TestSupport
import WireProtocol

@testable import InspectorCore

/// ``GRPCFixtures``' calls folded into a state.
extension GRPCFixtures {
    /// The echo service's descriptor set, read as `--proto` reads it.
    static func schema() throws -> ProtoSchema {
        try ProtoSchema.load(paths: [directory.appendingPathComponent("echo.pb").path])
    }

    /// The four calls of ``messages()`` in the list, typed by `schema`.
    static func state(schema: ProtoSchema = ProtoSchema(), size: Size = .minimum) throws -> AppState {
        var state = AppState(size: size, timeZone: Fixtures.utc, protoSchema: schema)
        _ = Reducer.reduce(&state, .inbox([.listening(.unix(path: "/tmp/netinspect-test.sock"))] + Fixtures.connection(messages: try messages()),
                                          at: Fixtures.epoch.addingTimeInterval(10)))
        return state
    }
}
