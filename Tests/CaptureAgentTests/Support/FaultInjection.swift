import Foundation
import TestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import CaptureAgent

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length); return getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// One request made synchronously, as a plain app thread would.
func fetch(_ request: URLRequest, on session: URLSession) -> (outcome: AppOutcome, seconds: Double) {
    let done = DispatchSemaphore(value: 0)
    let result = Locked<AppOutcome?>(nil)
    let started = DispatchTime.now().uptimeNanoseconds
    session.dataTask(with: request) { data, response, error in
        result.withLock { $0 = AppOutcome(data: data, response: response, error: error) }
        done.signal()
    }.resume()
    done.wait()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    return (result.current!, seconds)
}

/// Requests in a loop on `workers` threads until ``finish()``, each checked
/// against the response it must get.
final class RequestLoop: @unchecked Sendable {
    let completed = Locked(0)
    let failures = Locked<[String]>([])
    private let stopping = Locked(false)
    private let group = DispatchGroup()

    /// - Parameter make: for (worker, index), the request and the body it must return.
    init(workers: Int, session: URLSession, _ make: @escaping @Sendable (Int, Int) -> (URLRequest, Data)) {
        for worker in 0 ..< workers {
            group.enter()
            let thread = Thread { [self] in
                var index = 0
                while !stopping.current {
                    let (request, expected) = make(worker, index)
                    let (outcome, _) = fetch(request, on: session)
                    if outcome.status != 200 || outcome.body != expected {
                        failures.withLock { $0.append("\(request.url!.absoluteString): \(outcome)") }
                    }
                    completed.withLock { $0 += 1 }
                    index += 1
                }
                group.leave()
            }
            thread.start()
        }
    }

    /// Waits (at most `timeout`) until `count` more requests have completed.
    @discardableResult
    func waitFor(more count: Int, timeout: TimeInterval = 20) -> Bool {
        let target = completed.current + count
        return eventually(timeout: timeout) { completed.current >= target }
    }

    /// Stops the loop and waits for the requests under way; returns how many completed.
    func finish() -> Int {
        stopping.withLock { $0 = true }
        group.wait()
        return completed.current
    }
}

/// This process's resident memory, from /proc/self/status.
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

/// glibc's `malloc_trim(0)`, so that resident memory measured next starts
/// from what is in use, not from what an earlier test freed.
func releaseFreedMemory() {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
}
