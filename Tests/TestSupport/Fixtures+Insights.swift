import Foundation
import WireProtocol

extension Fixtures {
    package static let insightsUUIDs = ["123e4567-e89b-42d3-a456-426614174000", "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE"]

    /// 10 × GET /users/N taking N×10 ms (the tenth a 500); 2 × a UUID's
    /// avatar, 404s of 200 and 400 ms; a POST to a hash taking 2 s; a
    /// failed ping (60 s, Fixtures.failed).
    package static func insightsFlows() -> [NetworkLog] {
        var flows: [NetworkLog] = []
        for number in 1...10 {
            var log = Fixtures.started(number, url: "https://api.example.com/users/\(number)?fields=all")
            log.apply(Fixtures.finished(number, status: number == 10 ? 500 : 200, body: "12345", duration: Double(number) / 100))
            flows.append(log)
        }
        for (offset, uuid) in insightsUUIDs.enumerated() {
            var log = Fixtures.started(11 + offset, url: "https://API.example.com/users/\(uuid)/avatar")
            log.apply(Fixtures.finished(11 + offset, status: 404, body: "", duration: Double(offset + 1) / 5))
            flows.append(log)
        }
        var post = Fixtures.started(13, method: "POST", url: "https://api.example.com/blobs/0123456789abcdef0123",
                                    body: CapturedBody(data: Data(count: 1000)))
        post.apply(Fixtures.finished(13, status: 201, body: "", duration: 2))
        flows.append(post)
        var ping = Fixtures.started(14, url: "https://other.example.org/v1/deadbeef/ping")
        ping.apply(Fixtures.failed(14))
        flows.append(ping)
        return flows
    }
}
