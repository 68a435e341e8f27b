// Built with the AsyncHTTPClient trait (on by default; Package.swift).
#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import NIOHTTP1

/// What a client sees of one exchange: status, fields (without `Date`, which
/// differs by the second), body.
struct ClientView: Equatable, CustomStringConvertible {
    var status: Int
    var fields: [String]
    var body: [UInt8]

    var description: String {
        "\(status) \(fields) \(body.count) bytes: \(String(decoding: body.prefix(80), as: UTF8.self).debugDescription)"
    }

    /// The same, with a JSON body's object keys in one order (a server may
    /// write them in any).
    var normalized: ClientView {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)),
              let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return self }
        return ClientView(status: status, fields: fields, body: Array(sorted))
    }

    static func fetch(_ method: HTTPMethod, _ url: String, body: [UInt8]?, headers: [(String, String)] = []) async throws -> ClientView {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(body) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(20))
        var bytes: [UInt8] = []
        for try await chunk in response.body { bytes += chunk.readableBytesView }
        let fields = response.headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name.lowercased()): \($0.value)" }
        return ClientView(status: Int(response.status.code), fields: fields.sorted(), body: bytes)
    }

    /// The value of field `name` (lowercased), if the response had it.
    func field(_ name: String) -> String? {
        fields.first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) }
    }

    #if Hummingbird || Vapor
    /// Reads a stream served in lockstep with `gate`: its body, and for
    /// each chunk the client got, how many chunks the handler had begun to
    /// write by then (`[1, 2, 3]` when each arrived before the next was written).
    static func lockstep(_ url: String, gate: StreamGate) async throws -> (body: String, writtenWhenSeen: [Int]) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        var bytes: [UInt8] = [], writtenWhenSeen: [Int] = []
        for try await part in response.body {
            bytes += part.readableBytesView
            let complete = bytes.filter { $0 == UInt8(ascii: "\n") }.count
            while writtenWhenSeen.count < complete {
                writtenWhenSeen.append(gate.clientHas(writtenWhenSeen.count + 1))
            }
        }
        return (String(decoding: bytes, as: UTF8.self), writtenWhenSeen)
    }
    #endif
}

#endif
