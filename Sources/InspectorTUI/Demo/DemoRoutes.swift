import Foundation

/// The demo server's routes: a small shop API.
///
/// | Route | Answer |
/// |---|---|
/// | `GET /api/users?page=N` | 200, JSON page of four users |
/// | `GET /api/users/ID` | 200 JSON user for 1…100, else 404 JSON |
/// | `POST /api/orders` (JSON) | 201 JSON with `Location`; 400 when the body is not JSON |
/// | `DELETE /api/orders/ID` | 204 |
/// | `POST /api/login` (form) | 200 JSON token and a `Set-Cookie`; 400 without a username |
/// | `GET /me` | 302 to `/api/users/7` |
/// | `GET /api/reports/today` | 500 JSON |
/// | `GET /api/search?q=…` | 200 JSON after 1.5 s |
/// | `GET /static/avatar.png` | 200 `image/png`, 83 KB |
/// | `GET /api/feed` | 200 JSON, `Content-Encoding: gzip` |
/// | anything else | 404 JSON |
enum DemoRoutes {
    /// How long `/api/search` takes.
    static let slowDelay: Int64 = 1500

    static func respond(to request: DemoRequest) -> DemoResponse {
        let userID = parameter(of: request.path, after: "/api/users/")
        switch (request.method, request.path) {
        case ("GET", "/api/users"):
            let page = max(1, Int(request.query["page"] ?? "") ?? 1)
            let users = (1 ... 4).map { DemoContent.user(((page - 1) * 4 + $0 - 1) % 100 + 1) }
            var response = json(200, ["page": .int(page), "per_page": .int(4), "total": .int(100)], users: users)
            response.headers += [("Cache-Control", "private, max-age=30"), ("Link", "</api/users?page=\(page + 1)>; rel=\"next\"")]
            return response
        case ("GET", _) where userID != nil:
            guard let id = Int(userID ?? ""), (1 ... 100).contains(id) else {
                return error(404, "not_found", "No user with id \(userID ?? "").")
            }
            var response = DemoResponse(status: 200, headers: jsonType, body: DemoContent.json(DemoContent.user(id)))
            response.headers.append(("ETag", "\"user-\(id)-v3\""))
            return response
        case ("POST", "/api/orders"):
            guard (try? JSONSerialization.jsonObject(with: Data(request.body))) != nil else {
                return error(400, "bad_request", "The body is not JSON.")
            }
            let id = "ord_\(UInt32.random(in: 10000 ... 99999))"
            var response = json(201, ["id": .text(id), "status": .text("created"), "received_bytes": .int(request.body.count)])
            response.headers.append(("Location", "/api/orders/\(id)"))
            return response
        case ("DELETE", _) where parameter(of: request.path, after: "/api/orders/") != nil:
            return DemoResponse(status: 204)
        case ("POST", "/api/login"):
            let form = formFields(request.body)
            guard let name = form["username"], !name.isEmpty else {
                return error(400, "bad_request", "username is required.")
            }
            let token = "demo-" + UUID().uuidString.lowercased().prefix(13)
            var response = json(200, ["token": .text(String(token)), "user": .text(name), "expires_in": .int(3600)])
            response.headers.append(("Set-Cookie", "session=\(UUID().uuidString.prefix(8)); Path=/; HttpOnly; SameSite=Lax"))
            return response
        case ("GET", "/me"):
            return DemoResponse(status: 302, headers: [("Location", "/api/users/7"), ("Content-Type", "text/plain")], body: Array("Found\n".utf8))
        case ("GET", "/api/reports/today"):
            return error(500, "internal", "Upstream 'reports-db' timed out after 3000 ms.")
        case ("GET", "/api/search"):
            let query = request.query["q"] ?? ""
            var response = json(200, ["query": .text(query), "took_ms": .int(Int(slowDelay))], users: [DemoContent.user(3), DemoContent.user(8)])
            response.delay = .milliseconds(slowDelay)
            return response
        case ("GET", "/static/avatar.png"):
            return DemoResponse(status: 200, headers: [("Content-Type", "image/png"), ("Cache-Control", "public, max-age=86400")], body: DemoContent.avatarPNG)
        case ("GET", "/api/feed"):
            let headers = jsonType + [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")]
            return DemoResponse(status: 200, headers: headers, body: DemoContent.gzipFeed)
        default:
            return error(404, "not_found", "No route for \(request.method) \(request.path).")
        }
    }

    /// The last segment of `path` when it is `prefix` plus one segment.
    private static func parameter(of path: String, after prefix: String) -> String? {
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        return rest.isEmpty || rest.contains("/") ? nil : String(rest)
    }

    private static let jsonType = [(name: "Content-Type", value: "application/json; charset=utf-8")]

    /// A JSON value of the few kinds the routes need.
    enum Field: Encodable {
        case int(Int)
        case text(String)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .int(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            }
        }
    }

    private struct Envelope: Encodable {
        var fields: [String: Field]
        var users: [DemoContent.User]?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (name, value) in fields { try container.encode(value, forKey: Key(stringValue: name)) }
            if let users { try container.encode(users, forKey: Key(stringValue: "users")) }
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    private static func json(_ status: Int, _ fields: [String: Field], users: [DemoContent.User]? = nil) -> DemoResponse {
        DemoResponse(status: status, headers: jsonType, body: DemoContent.json(Envelope(fields: fields, users: users)))
    }

    private static func error(_ status: Int, _ code: String, _ message: String) -> DemoResponse {
        var response = json(status, ["error": .text(code), "message": .text(message)])
        response.headers.append(("X-Trace-Id", UUID().uuidString.lowercased()))
        return response
    }

    /// The fields of an `application/x-www-form-urlencoded` body.
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if let name = parts.first { fields[name] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }
}
