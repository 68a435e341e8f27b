import Foundation
import WireProtocol

/// Deterministic flows for the tests, as an agent would send them: the
/// viewer's unit tests fold them into a state (InspectorCoreTests'
/// `Fixtures+State.swift`), its end-to-end tests send them to the real
/// binary.
package enum Fixtures {
    /// 2026-11-21 09:30:00 UTC.
    package static let epoch = Date(timeIntervalSince1970: 1_795_253_400)
    package static let utc = TimeZone(identifier: "UTC")!

    package static func id(_ number: Int) -> FlowID {
        FlowID(String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    package static func hello(app: String = "orders-service", pid: Int = 4242) -> Hello {
        Hello(agentName: "CaptureAgent", agentVersion: "0.1.0", appName: app, processID: pid, hostName: "build-7")
    }

    package static func started(
        _ number: Int,
        method: String = "GET",
        url: String? = nil,
        headers: [HTTPHeader] = [HTTPHeader(name: "Accept", value: "application/json")],
        body: CapturedBody? = nil,
        at offset: Double? = nil
    ) -> NetworkLog {
        NetworkLog(
            id: id(number),
            request: Request(method: method, url: url ?? "https://api.example.com/v1/items/\(number)?page=2", headers: headers, body: body),
            timing: Timing(startedAt: epoch.addingTimeInterval(offset ?? Double(number)))
        )
    }

    package static func finished(
        _ number: Int,
        status: Int = 200,
        body: String = #"{"id":1,"name":"Zoë","tags":["a","b"],"ok":true,"price":12.5,"none":null}"#,
        bytes: [UInt8]? = nil,
        contentType: String = "application/json",
        duration: Double = 0.120,
        at offset: Double? = nil
    ) -> FlowFinished {
        let data = bytes.map { Data($0) } ?? Data(body.utf8)
        return FlowFinished(
            id: id(number),
            state: .completed,
            response: Response(
                statusCode: status,
                headers: [HTTPHeader(name: "Content-Type", value: contentType), HTTPHeader(name: "Cache-Control", value: "no-store")],
                body: CapturedBody(data: data),
                mimeType: contentType
            ),
            timing: Timing(
                startedAt: epoch.addingTimeInterval(offset ?? Double(number)),
                requestSent: duration * 0.1,
                firstResponseByte: duration * 0.7,
                finished: duration
            )
        )
    }

    package static func failed(_ number: Int) -> FlowFinished {
        FlowFinished(
            id: id(number),
            state: .failed,
            error: FlowError(domain: "NSURLErrorDomain", code: -1001, message: "The request timed out."),
            timing: Timing(startedAt: epoch.addingTimeInterval(Double(number)), requestSent: 0.001, finished: 60)
        )
    }

    /// The first bytes of a 320×240 PNG: enough for its header to be read.
    package static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52,
                                   0, 0, 0x01, 0x40, 0, 0, 0, 0xF0, 8, 6, 0, 0, 0])
}
