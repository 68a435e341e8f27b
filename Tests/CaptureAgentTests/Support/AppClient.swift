import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import CaptureAgent

/// Everything the app can observe of one exchange.
struct AppOutcome: Equatable, CustomStringConvertible {
    var status: Int?
    var headers: [String: String] = [:]
    var body = Data()
    var finalURL: String?
    var errorDomain: String?
    var errorCode: Int?

    init(data: Data?, response: URLResponse?, error: Error?) {
        let http = response as? HTTPURLResponse
        status = http?.statusCode
        headers = (http?.allHeaderFields ?? [:]).reduce(into: [:]) { result, field in
            if let name = field.key as? String { result[name] = "\(field.value)" }
        }
        body = data ?? Data()
        finalURL = response?.url?.absoluteString
        if let error {
            errorDomain = (error as NSError).domain
            errorCode = (error as NSError).code
        }
    }

    var description: String {
        "status=\(status.map(String.init) ?? "-") body=\(body.count)B error=\(errorCode.map(String.init) ?? "-") url=\(finalURL ?? "-") headers=\(headers.sorted { $0.key < $1.key })"
    }
}

/// How the app drives a session.
enum ClientStyle: CaseIterable, Sendable {
    case completionHandler
    case asyncAwait
    case delegate
}

/// The body an upload task carries (data tasks carry theirs in the request).
enum UploadSource: Sendable {
    case data(Data)
    case file(URL)
}

/// A session delegate that records what the app would see, per task, and
/// can refuse redirects (the app's own redirect policy).
final class RecordingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Entry {
        var response: URLResponse?
        var data = Data()
        var chunks = 0
        var done: ((AppOutcome) -> Void)?
    }

    private let entries = Locked<[Int: Entry]>([:])
    let refusesRedirects: Bool
    let credential: URLCredential?
    /// Answers `needNewBodyStream` (streamed uploads) when set.
    var bodyStream: (@Sendable () -> InputStream)?
    let redirectsSeen = Locked<[Int]>([])
    let challengesSeen = Locked<[String]>([])
    let chunkCounts = Locked<[Int]>([])

    init(refusesRedirects: Bool = false, credential: URLCredential? = nil) {
        self.refusesRedirects = refusesRedirects
        self.credential = credential
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        completionHandler(bodyStream?())
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        challengesSeen.withLock { $0.append(challenge.protectionSpace.authenticationMethod) }
        if let credential {
            completionHandler(.useCredential, credential)
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }

    func expect(_ task: URLSessionTask, done: @escaping (AppOutcome) -> Void) {
        entries.withLock { $0[task.taskIdentifier, default: Entry()].done = done }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        redirectsSeen.withLock { $0.append(response.statusCode) }
        completionHandler(refusesRedirects ? nil : request)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        entries.withLock { $0[dataTask.taskIdentifier, default: Entry()].response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        entries.withLock {
            $0[dataTask.taskIdentifier, default: Entry()].data.append(data)
            $0[dataTask.taskIdentifier, default: Entry()].chunks += 1
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let entry = entries.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        chunkCounts.withLock { $0.append(entry?.chunks ?? 0) }
        entry?.done?(AppOutcome(data: entry?.data, response: entry?.response ?? task.response, error: error))
    }
}

/// Runs one request the way an app would, in the given style.
func performExchange(
    _ request: URLRequest,
    upload: UploadSource? = nil,
    on session: URLSession,
    style: ClientStyle,
    onTask: @escaping @Sendable (URLSessionTask) -> Void = { _ in }
) async -> AppOutcome {
    switch style {
    case .asyncAwait:
        do {
            let (data, response): (Data, URLResponse)
            switch upload {
            case nil: (data, response) = try await session.data(for: request)
            case .data(let body): (data, response) = try await session.upload(for: request, from: body)
            case .file(let url): (data, response) = try await session.upload(for: request, fromFile: url)
            }
            return AppOutcome(data: data, response: response, error: nil)
        } catch {
            return AppOutcome(data: nil, response: nil, error: error)
        }
    case .completionHandler:
        return await withCheckedContinuation { continuation in
            let handler: @Sendable (Data?, URLResponse?, Error?) -> Void = { data, response, error in
                continuation.resume(returning: AppOutcome(data: data, response: response, error: error))
            }
            let task: URLSessionTask
            switch upload {
            case nil: task = session.dataTask(with: request, completionHandler: handler)
            case .data(let body): task = session.uploadTask(with: request, from: body, completionHandler: handler)
            case .file(let url): task = session.uploadTask(with: request, fromFile: url, completionHandler: handler)
            }
            task.resume()
            onTask(task)
        }
    case .delegate:
        guard let delegate = session.delegate as? RecordingDelegate else {
            preconditionFailure("delegate style needs a session with a RecordingDelegate")
        }
        return await withCheckedContinuation { continuation in
            let task: URLSessionTask
            switch upload {
            case nil: task = session.dataTask(with: request)
            case .data(let body): task = session.uploadTask(with: request, from: body)
            case .file(let url): task = session.uploadTask(with: request, fromFile: url)
            }
            delegate.expect(task) { continuation.resume(returning: $0) }
            task.resume()
            onTask(task)
        }
    }
}
