import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The requests the demo app makes: what a small shop client would send.
struct DemoTraffic: Sendable {
    /// The demo server's port.
    var port: Int
    /// A loopback port that refuses connections.
    var refusedPort: Int
    /// The bearer token every API request carries (the agent redacts it).
    var bearer = "demo-" + String(UUID().uuidString.lowercased().prefix(13))

    /// One of each kind, in this order.
    var cycle: [URLRequest] {
        [
            get("/api/users?page=\(Int.random(in: 1 ... 5))"),
            post("/api/orders", type: "application/json; charset=utf-8", body: orderJSON),
            get("/api/users/\(Int.random(in: 1 ... 100))"),
            post("/api/login", type: "application/x-www-form-urlencoded", body: "username=jos%C3%A9&password=hunter2&remember=on"),
            get("/me"),
            get("/api/users/\(Int.random(in: 404 ... 999))"),
            get("/api/reports/today"),
            get("/api/search?q=caf%C3%A9%20cr%C3%A8me"),
            get("/static/avatar.png", accept: "image/png,image/*;q=0.8"),
            get("/api/feed"),
            get("/api/health", port: refusedPort),
            delete("/api/orders/ord_\(Int.random(in: 10000 ... 99999))"),
        ]
    }

    /// What tick `number` after the first cycle sends: one to three
    /// requests, mostly successful reads, now and then any of the others,
    /// and an order every fifth tick, so a person trying README's POST
    /// breakpoint never waits long (by chance alone, about one time in 25
    /// no POST came within 30 s).
    func tick(_ number: Int) -> [URLRequest] {
        let common = [get("/api/users?page=\(Int.random(in: 1 ... 5))"), get("/api/users/\(Int.random(in: 1 ... 100))"), get("/api/feed")]
        let mix = (0 ..< Int.random(in: 1 ... 3)).compactMap { _ in
            Int.random(in: 0 ..< 3) == 0 ? cycle.randomElement() : common.randomElement()
        }
        return number % 5 == 0 ? mix + [post("/api/orders", type: "application/json; charset=utf-8", body: orderJSON)] : mix
    }

    private var orderJSON: String {
        let quantity = Int.random(in: 1 ... 4)
        return #"{"customer":"Zoë Müller","items":[{"sku":"KAFFEE-☕-250G","qty":\#(quantity),"price":"8.90"},"#
            + #"{"sku":"TASSE-BLÅ","qty":1,"price":"14.50"}],"note":"Bitte vor 12 Uhr liefern — merci!","currency":"CHF"}"#
    }

    private func request(_ method: String, _ pathAndQuery: String, port: Int? = nil, accept: String = "application/json") -> URLRequest {
        // Built from constants of this file; cannot fail to parse.
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port ?? self.port)\(pathAndQuery)")!)
        request.httpMethod = method
        request.setValue(accept, forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue(UUID().uuidString.lowercased(), forHTTPHeaderField: "X-Request-ID")
        request.setValue("DemoShop/2.4 (netinspect --demo)", forHTTPHeaderField: "User-Agent")
        request.setValue(["de-CH, de;q=0.9, en;q=0.6", "en-GB, en;q=0.9", "ja-JP, ja;q=0.9"].randomElement(), forHTTPHeaderField: "Accept-Language")
        return request
    }

    private func get(_ pathAndQuery: String, port: Int? = nil, accept: String = "application/json") -> URLRequest {
        request("GET", pathAndQuery, port: port, accept: accept)
    }

    private func delete(_ path: String) -> URLRequest {
        request("DELETE", path)
    }

    private func post(_ path: String, type: String, body: String) -> URLRequest {
        var request = request("POST", path)
        request.setValue(type, forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        return request
    }
}
