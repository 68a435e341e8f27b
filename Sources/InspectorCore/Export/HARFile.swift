import Foundation
import WireProtocol

/// Writes flows as an HTTP Archive (HAR 1.2) and reads HAR files, ours or
/// another tool's, back into flows.
///
/// ```swift
/// let data = try HARFile.encode(store.shownFlows)
/// let flows = try HARFile.decode(Data(contentsOf: url))
/// ```
///
/// Mapping: timings are our own monotonic offsets in milliseconds (`send` =
/// start → request sent, `wait` = request sent → first byte, `receive` = first
/// byte → finished; `blocked`, `dns`, `connect`, `ssl` are -1 because
/// FoundationNetworking on Linux does not report them). Bodies that are not
/// UTF-8 text are base64 with `encoding: "base64"`. A file written here and
/// read back gives the same flows; a file from elsewhere gives flows with
/// state completed (failed when there is no status) and new ids.
package enum HARFile {
    /// The name and version written as the HAR `creator`.
    static let creator = (name: "netinspect", version: "0.1.0")

    /// Encodes `flows` as a HAR 1.2 document (UTF-8 JSON). A flow's comment
    /// goes in its entry's `comment`, a mark in `_netinspect.marked`.
    package static func encode(_ flows: [NetworkLog], annotations: [FlowID: FlowAnnotation] = [:], prettyPrinted: Bool = true) throws -> Data {
        let entries = flows.map { flow in
            var entry = HAR.Entry(flow)
            if let annotation = annotations[flow.id] {
                entry.comment = annotation.comment
                if annotation.isMarked { entry.netinspect?.marked = true }
            }
            return entry
        }
        let har = HAR(log: HAR.Log(creator: HAR.Creator(name: creator.name, version: creator.version), entries: entries))
        let encoder = JSONEncoder()
        encoder.outputFormatting = prettyPrinted ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.withoutEscapingSlashes]
        return try encoder.encode(har)
    }

    /// Writes `flows` as a HAR file at `path`, created with mode 0600
    /// (captured traffic may hold secrets), replacing what was there.
    package static func write(_ flows: [NetworkLog], annotations: [FlowID: FlowAnnotation] = [:], to path: String) throws {
        let data = try encode(flows, annotations: annotations)
        let url = URL(fileURLWithPath: path)
        try data.write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    /// Why a file could not be read as HAR.
    package struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, and where.
        package var description: String
    }

    /// Reads a HAR document. Unknown fields are ignored and missing optional
    /// ones defaulted; an entry without a request method or URL is an error
    /// naming the entry.
    package static func decode(_ data: Data) throws(ReadError) -> [NetworkLog] {
        try decodeSession(data).flows
    }

    /// Reads a HAR document with the marks and comments of its entries
    /// (an entry's `comment`, whoever wrote it, and `_netinspect.marked`).
    static func decodeSession(_ data: Data) throws(ReadError) -> FlowFile.Contents {
        var flows: [NetworkLog] = []
        var annotations: [FlowID: FlowAnnotation] = [:]
        do {
            try data.withUnsafeBytes { raw in
                try JSONParser.forEachElement(ofArrayAt: ["log", "entries"], in: raw.bindMemory(to: UInt8.self)) { entry in
                    do {
                        let flow = try NetworkLog(harEntry: entry)
                        flows.append(flow)
                        let annotation = FlowAnnotation(isMarked: entry["_netinspect"]?["marked"]?.boolValue ?? false,
                                                        comment: entry["comment"]?.stringValue)
                        if !annotation.isEmpty { annotations[flow.id] = annotation }
                    } catch {
                        throw ReadError(description: "log.entries[\(flows.count)]: \(error)")
                    }
                }
            }
        } catch let error as ReadError {
            throw error
        } catch WireError.malformedPayload(let reason) where reason.hasPrefix("no array") {
            throw ReadError(description: "not a HAR file: no \"log.entries\" array")
        } catch let error as WireError {
            throw ReadError(description: "not JSON: \(error)")
        } catch {
            throw ReadError(description: "\(error)")
        }
        return FlowFile.Contents(flows: flows, annotations: annotations)
    }
}

// MARK: - Writing

extension HAR.Entry {
    init(_ flow: NetworkLog) {
        let timing = flow.timing
        let sent = timing.requestSent ?? 0
        let ended = timing.finished ?? timing.firstResponseByte ?? sent
        let firstByte = timing.firstResponseByte ?? ended
        // The client's phases, where it measured them, split our own "send"
        // (start to request sent) into blocked, DNS, connect (TLS inside, as
        // HAR says) and the rest, so `time` stays the flow's duration.
        let phases = timing.phases
        let setup = [phases?.blocked, phases?.dns, phases?.connect, phases?.tls].compactMap { $0 }.reduce(0, +)
        let timings = HAR.Timings(blocked: phases?.blocked.map(milliseconds) ?? -1, dns: phases?.dns.map(milliseconds) ?? -1,
                                  connect: phases.flatMap { $0.connect == nil && $0.tls == nil ? nil : ($0.connect ?? 0) + ($0.tls ?? 0) }
                                      .map(milliseconds) ?? -1,
                                  send: milliseconds(max(0, sent - setup)), wait: milliseconds(max(0, firstByte - sent)),
                                  receive: milliseconds(max(0, ended - firstByte)), ssl: phases?.tls.map(milliseconds) ?? -1)
        self.init(
            startedDateTime: isoDate(timing.startedAt),
            time: [timings.blocked, timings.dns, timings.connect, timings.send, timings.wait, timings.receive].filter { $0 > 0 }.reduce(0, +),
            request: HAR.Request(flow.request),
            response: HAR.Response(flow.response),
            cache: HAR.Cache(),
            timings: timings,
            netinspect: HAR.Extension(
                id: flow.id.description, sessionID: flow.sessionID, taskID: flow.taskID,
                state: flow.state.rawValue, startedAt: timing.startedAt.timeIntervalSince1970,
                requestSent: timing.requestSent, firstResponseByte: timing.firstResponseByte, finished: timing.finished,
                redirects: flow.redirects.map { HAR.RedirectHopRecord(statusCode: $0.statusCode, from: $0.from, to: $0.to) },
                error: flow.error.map { HAR.ErrorRecord(domain: $0.domain, code: $0.code, message: $0.message) },
                requestBody: flow.request.body.map(HAR.BodyRecord.init),
                responseBody: flow.response?.body.map(HAR.BodyRecord.init),
                source: flow.source.map(JSONValue.init),
                clientHeaders: flow.request.clientHeaders.isEmpty ? nil : flow.request.clientHeaders.map(JSONValue.init),
                phases: flow.timing.phases.map(JSONValue.init),
                changes: flow.changes.map(JSONValue.init),
                direction: flow.direction?.rawValue,
                parentID: flow.parentID?.description
            )
        )
        if let call = flow.grpc { addGRPC(call) }
        if let socket = flow.webSocket {
            webSocketMessages = socket.messages.map { HAR.WebSocketMessageRecord($0, startedAt: timing.startedAt, in: flow) }
        }
    }
}

extension HAR.Request {
    init(_ request: WireProtocol.Request) {
        let contentType = request.headers.first("Content-Type") ?? ""
        self.init(
            method: request.method,
            url: request.url,
            httpVersion: "HTTP/1.1",
            cookies: request.headers.values(for: "Cookie").flatMap(cookies(inCookieHeader:)),
            // As sent: the app's fields, then the client's (`_netinspect.clientHeaders` says which).
            headers: request.headersAsSent.map { HAR.NameValue(name: $0.name, value: $0.value) },
            queryString: queryItems(of: request.url),
            postData: request.body.map { body in
                let (text, encoding) = textOrBase64(body.data)
                let params = encoding == nil && MediaType(contentType).isForm
                    ? formFields(text).map { HAR.NameValue(name: $0.name, value: $0.value) } : []
                return HAR.PostData(mimeType: contentType, params: params, text: text, encoding: encoding)
            },
            headersSize: -1,
            bodySize: request.body?.size ?? 0
        )
    }
}

extension HAR.Response {
    init(_ response: WireProtocol.Response?) {
        guard let response else {
            self.init(status: 0, statusText: "", httpVersion: "", cookies: [], headers: [],
                      content: HAR.Content(size: 0, mimeType: "x-unknown"), redirectURL: "", headersSize: -1, bodySize: -1)
            return
        }
        let body = response.body
        let (text, encoding) = body.map { textOrBase64($0.data) } ?? (nil, nil)
        let comment = body.flatMap { $0.isTruncated ? "truncated: \($0.data.count) of \($0.size) bytes captured" : nil }
        self.init(
            status: response.statusCode,
            statusText: Format.reason(response.statusCode),
            httpVersion: "HTTP/1.1",
            cookies: response.headers.values(for: "Set-Cookie").compactMap(cookie(inSetCookieHeader:)),
            headers: response.headers.map { HAR.NameValue(name: $0.name, value: $0.value) },
            content: HAR.Content(size: body?.size ?? 0,
                                 mimeType: response.mimeType ?? response.headers.first("Content-Type") ?? "x-unknown",
                                 text: text, encoding: encoding, comment: comment),
            redirectURL: response.headers.first("Location") ?? "",
            headersSize: -1,
            bodySize: body?.size ?? -1
        )
    }
}

private func milliseconds(_ seconds: Double) -> Double { (seconds * 1_000_000).rounded() / 1000 }

/// Text when the bytes are UTF-8, else base64 with the encoding named.
private func textOrBase64(_ data: Data) -> (String, String?) {
    if let text = String(data: data, encoding: .utf8) { return (text, nil) }
    return (data.base64EncodedString(), "base64")
}

private func queryItems(of url: String) -> [HAR.NameValue] {
    (URLComponents(string: url)?.queryItems ?? []).map { HAR.NameValue(name: $0.name, value: $0.value ?? "") }
}

private func cookies(inCookieHeader header: String) -> [HAR.Cookie] {
    header.split(separator: ";").compactMap { pair in
        let parts = pair.split(separator: "=", maxSplits: 1)
        guard let name = parts.first?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { return nil }
        return HAR.Cookie(name: name, value: parts.count > 1 ? String(parts[1]) : "")
    }
}

private func cookie(inSetCookieHeader header: String) -> HAR.Cookie? {
    cookies(inCookieHeader: String(header.prefix { $0 != ";" })).first
}

// MARK: - Reading

extension NetworkLog {
    init(harEntry entry: JSONValue) throws(HARFile.ReadError) {
        guard entry.isObject else { throw HARFile.ReadError(description: "not an object") }
        guard let request = entry["request"] else { throw HARFile.ReadError(description: "no request") }
        guard let method = request["method"]?.stringValue else { throw HARFile.ReadError(description: "request has no method") }
        guard let url = request["url"]?.stringValue else { throw HARFile.ReadError(description: "request has no url") }
        let ours = entry["_netinspect"]
        let response = entry["response"]

        let startedAt = ours?["startedAt"]?.doubleValue.map(Date.init(timeIntervalSince1970:))
            ?? entry["startedDateTime"]?.stringValue.flatMap(parseISODate) ?? Date(timeIntervalSince1970: 0)
        let timing: Timing
        if let ours {
            timing = Timing(startedAt: startedAt, requestSent: ours["requestSent"]?.doubleValue,
                            firstResponseByte: ours["firstResponseByte"]?.doubleValue, finished: ours["finished"]?.doubleValue,
                            phases: ours["phases"].map(transferPhases))
        } else {
            timing = harTiming(entry, startedAt: startedAt)
        }

        let requestBody = request["postData"].map { postData -> CapturedBody in
            let data = bodyData(text: postData["text"]?.stringValue,
                                encoding: (postData["_encoding"] ?? postData["encoding"])?.stringValue)
            return capturedBody(data, record: ours?["requestBody"], declaredSize: request["bodySize"]?.intValue)
        }

        var parsedResponse: WireProtocol.Response?
        if let response, let status = response["status"]?.intValue, status > 0 {
            let content = response["content"]
            let body = content.flatMap { content -> CapturedBody? in
                guard content["text"] != nil || (content["size"]?.intValue ?? 0) > 0 else { return nil }
                let data = bodyData(text: content["text"]?.stringValue, encoding: content["encoding"]?.stringValue)
                return capturedBody(data, record: ours?["responseBody"], declaredSize: content["size"]?.intValue)
            }
            let declaredMime = content?["mimeType"]?.stringValue.flatMap { $0.isEmpty || $0 == "x-unknown" ? nil : MediaType.essence(of: $0) }
            parsedResponse = WireProtocol.Response(statusCode: status, headers: headers(response["headers"]),
                                                   body: body, mimeType: declaredMime)
        }

        let error = ours?["error"].map {
            FlowError(domain: $0["domain"]?.stringValue ?? "", code: $0["code"]?.intValue ?? 0, message: $0["message"]?.stringValue ?? "")
        }
        let state = ours?["state"]?.stringValue.flatMap(FlowState.init(rawValue:)) ?? (parsedResponse == nil ? .failed : .completed)
        let redirects = (ours?["redirects"]?.arrayValue ?? []).map {
            RedirectHop(statusCode: $0["statusCode"]?.intValue ?? 0, from: $0["from"]?.stringValue ?? "", to: $0["to"]?.stringValue ?? "")
        }

        self.init(
            id: ours?["id"]?.stringValue.flatMap(FlowID.init) ?? FlowID(),
            sessionID: ours?["sessionID"]?.intValue ?? 0,
            taskID: ours?["taskID"]?.intValue ?? 0,
            request: requestRecord(method: method, url: url, sent: headers(request["headers"]), body: requestBody,
                                   clientHeaders: ours?["clientHeaders"].map(headers) ?? []),
            response: parsedResponse,
            timing: timing,
            redirects: redirects,
            error: error,
            state: state,
            source: ours?["source"].flatMap(captureSource),
            changes: ours?["changes"].flatMap(flowChanges),
            direction: ours?["direction"]?.stringValue.flatMap(FlowDirection.init(rawValue:)),
            parentID: ours?["parentID"]?.stringValue.flatMap(FlowID.init)
        )
        restoreGRPC(from: ours)
        restoreWebSocket(from: entry)
    }
}

/// The request with the client's fields split off the end of the headers
/// as sent, when the file says which they were.
private func requestRecord(method: String, url: String, sent: [HTTPHeader], body: CapturedBody?, clientHeaders: [HTTPHeader]) -> WireProtocol.Request {
    guard !clientHeaders.isEmpty, sent.count >= clientHeaders.count, Array(sent.suffix(clientHeaders.count)) == clientHeaders else {
        return WireProtocol.Request(method: method, url: url, headers: sent, body: body)
    }
    return WireProtocol.Request(method: method, url: url, headers: Array(sent.dropLast(clientHeaders.count)), body: body, clientHeaders: clientHeaders)
}

private func transferPhases(_ value: JSONValue) -> TransferPhases {
    TransferPhases(blocked: value["blocked"]?.doubleValue, dns: value["dns"]?.doubleValue, connect: value["connect"]?.doubleValue,
                   tls: value["tls"]?.doubleValue, send: value["send"]?.doubleValue, wait: value["wait"]?.doubleValue,
                   receive: value["receive"]?.doubleValue, source: value["source"]?.stringValue)
}

private func captureSource(_ value: JSONValue) -> CaptureSource? {
    guard let client = value["client"]?.stringValue else { return nil }
    return CaptureSource(client: .init(rawValue: client), path: value["path"]?.stringValue.map(CaptureSource.Path.init(rawValue:)),
                         operationID: value["operationID"]?.stringValue)
}

private func flowChanges(_ value: JSONValue) -> FlowChanges? {
    guard let rules = value["rules"]?.arrayValue else { return nil }
    let edited = value["edited"]?.arrayValue?.compactMap { $0.stringValue.flatMap(HoldPhase.init(rawValue:)) }
    return FlowChanges(rules: rules.compactMap(\.stringValue), originalURL: value["originalURL"]?.stringValue,
                       originalHeaders: value["originalHeaders"].map(headers), mockedFrom: value["mockedFrom"]?.stringValue,
                       replayOf: value["replayOf"]?.stringValue.flatMap(FlowID.init), edited: edited?.isEmpty == false ? edited : nil,
                       serverReplay: value["serverReplay"].flatMap(serverReplayMark),
                       composed: value["composed"]?.boolValue == true ? true : nil,
                       condition: value["condition"].flatMap(appliedCondition))
}

private func serverReplayMark(_ value: JSONValue) -> ServerReplayMark? {
    guard let left = value["left"]?.doubleValue else { return nil }
    return ServerReplayMark(recordedID: value["recordedID"]?.stringValue.flatMap(FlowID.init), left: Int(left),
                            extra: value["extra"]?.stringValue, waited: value["waited"]?.doubleValue)
}

private func appliedCondition(_ value: JSONValue) -> AppliedCondition? {
    guard let rule = value["rule"]?.stringValue else { return nil }
    return AppliedCondition(rule: rule, latencyMilliseconds: value["latencyMilliseconds"]?.doubleValue.map { Int($0) },
                            downBitsPerSecond: value["downBitsPerSecond"]?.doubleValue.map { Int($0) },
                            upBitsPerSecond: value["upBitsPerSecond"]?.doubleValue.map { Int($0) },
                            failure: value["failure"]?.stringValue)
}

/// Offsets from another tool's `timings`: everything before `wait` counts as
/// sending; `ssl` is already inside `connect` (HAR 1.2 says so).
private func harTiming(_ entry: JSONValue, startedAt: Date) -> Timing {
    guard let timings = entry["timings"], timings.isObject else {
        return Timing(startedAt: startedAt, finished: entry["time"]?.doubleValue.map { max(0, $0) / 1000 })
    }
    func phase(_ name: String) -> Double { max(0, timings[name]?.doubleValue ?? 0) / 1000 }
    let sent = phase("blocked") + phase("dns") + phase("connect") + phase("send")
    let firstByte = sent + phase("wait")
    return Timing(startedAt: startedAt, requestSent: sent, firstResponseByte: firstByte, finished: firstByte + phase("receive"))
}

private func headers(_ value: JSONValue?) -> [HTTPHeader] {
    (value?.arrayValue ?? []).compactMap {
        guard let name = $0["name"]?.stringValue else { return nil }
        return HTTPHeader(name: name, value: $0["value"]?.stringValue ?? "")
    }
}

private func bodyData(text: String?, encoding: String?) -> Data {
    guard let text else { return Data() }
    if encoding?.lowercased() == "base64", let data = Data(base64Encoded: text) { return data }
    return Data(text.utf8)
}

private func capturedBody(_ data: Data, record: JSONValue?, declaredSize: Int?) -> CapturedBody {
    if let record, let size = record["size"]?.intValue {
        return CapturedBody(data: data, size: size, isTruncated: record["truncated"]?.boolValue ?? false,
                            isDecoded: record["decoded"]?.boolValue ?? false)
    }
    let size = max(data.count, declaredSize ?? 0)
    return CapturedBody(data: data, size: size, isTruncated: size > data.count)
}

// MARK: - Shared text helpers

/// Fields of an `application/x-www-form-urlencoded` body, percent-decoded,
/// `+` read as a space, in order.
func formFields(_ text: String) -> [(name: String, value: String)] {
    text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        func decode(_ part: Substring) -> String {
            let spaced = part.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
    }
}

private let isoWithFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
private let isoPlain = Date.ISO8601FormatStyle()

/// ISO 8601 in UTC with milliseconds, e.g. 2025-11-21T09:38:43.123Z.
func isoDate(_ date: Date) -> String { isoWithFraction.format(date) }

/// Parses ISO 8601 with or without fractional seconds, with `Z` or an offset.
func parseISODate(_ text: String) -> Date? {
    (try? isoWithFraction.parse(text)) ?? (try? isoPlain.parse(text))
}
