import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU affinity for section 1's pinned rows: the app (this process, its
/// in-process server included) on every CPU but one, `netinspect` alone on
/// that one, as on a laptop where the viewer's work does not come out of the
/// app's cores.
///
/// Linux keeps the affinity mask per thread (sched_setaffinity(2) takes a
/// thread id; 0 is the calling thread) and a new thread starts with its
/// creator's mask, a child process with its parent's. So a whole process is
/// pinned by pinning each of its threads, listed again until no unpinned
/// one has appeared meanwhile; and a child is spawned pinned by pinning the
/// spawning thread around the spawn. Glibc's Swift module does not declare
/// the affinity calls (they are behind `_GNU_SOURCE`): they are looked up by
/// name.
enum CPUPinning {
    /// Where each side runs in the pinned rows.
    struct Split {
        var app: [Int]
        var netinspect: Int
    }

    /// CPUs this process may use, read once before anything is pinned.
    static let allowed: [Int] = cpus(ofThread: 0) ?? []

    /// The app on all allowed CPUs but the last, netinspect on the last;
    /// nil with fewer than two.
    static let split: Split? = allowed.count >= 2 ? Split(app: Array(allowed.dropLast()), netinspect: allowed.last!) : nil

    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
    private static let setAffinity = dlsym(dlopen(nil, RTLD_NOW), "sched_setaffinity").map { unsafeBitCast($0, to: AffinityCall.self) }
    private static let getAffinity = dlsym(dlopen(nil, RTLD_NOW), "sched_getaffinity").map { unsafeBitCast($0, to: AffinityCall.self) }
    /// Bytes of a mask: 1,024 CPUs, glibc's `cpu_set_t`.
    private static let maskSize = 128

    /// The CPUs thread `thread` (0: the calling one) may run on.
    static func cpus(ofThread thread: pid_t) -> [Int]? {
        guard let getAffinity else { return nil }
        var mask = [UInt8](repeating: 0, count: maskSize)
        guard mask.withUnsafeMutableBytes({ getAffinity(thread, maskSize, $0.baseAddress) }) == 0 else { return nil }
        return (0 ..< maskSize * 8).filter { mask[$0 / 8] & (1 << ($0 % 8)) != 0 }
    }

    /// Lets thread `thread` (0: the calling one) run only on `cpus`.
    static func pin(thread: pid_t, to cpus: [Int]) throws {
        guard let setAffinity else { throw BenchmarkError(description: "sched_setaffinity is not in this C library") }
        var mask = [UInt8](repeating: 0, count: maskSize)
        for cpu in cpus { mask[cpu / 8] |= 1 << (cpu % 8) }
        guard mask.withUnsafeMutableBytes({ setAffinity(thread, maskSize, $0.baseAddress) }) == 0 else {
            // A thread that ended since it was listed has nothing left to pin.
            if errno == ESRCH { return }
            throw BenchmarkError(description: "sched_setaffinity(\(thread), \(cpus)): \(String(cString: strerror(errno)))")
        }
    }

    /// Lets every thread of process `process` run only on `cpus`.
    static func pin(process: pid_t, to cpus: [Int]) throws {
        var done: Set<pid_t> = []
        while true {
            let fresh = threads(of: process).filter { !done.contains($0) }
            guard !fresh.isEmpty else { return }
            for thread in fresh { try pin(thread: thread, to: cpus) }
            done.formUnion(fresh)
        }
    }

    /// Runs `body` with the calling thread on `cpus` only, then as before:
    /// a process spawned in `body` keeps `cpus`.
    static func withCallingThread<T>(on cpus: [Int], _ body: () throws -> T) throws -> T {
        let before = Self.cpus(ofThread: 0) ?? allowed
        try pin(thread: 0, to: cpus)
        defer { try? pin(thread: 0, to: before) }
        return try body()
    }

    /// The thread ids of process `process`, from /proc.
    static func threads(of process: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []).compactMap { pid_t($0) }
    }

    /// What a run found of where its threads may run.
    struct Check {
        /// Threads of this process, and of the netinspect reading, at the end of the run.
        var appThreads = 0
        var netinspectThreads = 0
        /// Threads whose mask was not the run's: none when the pinning held.
        var misplaced = 0
    }

    /// Runs `body` with every thread of this process on `split`'s app CPUs
    /// when `pinned`, else on all allowed CPUs, and checks at its end that
    /// every thread of this process and of `netinspect` (pinned: on its own
    /// CPU, else on all) was where the run wanted it.
    static func placed<T>(pinned: Bool, netinspect: pid_t?, _ body: () throws -> T) throws -> (T, Check) {
        let (app, viewer) = pinned ? (split.map(\.app), split.map { [$0.netinspect] }) : (allowed, allowed)
        guard let app, let viewer else { throw BenchmarkError(description: "pinned run with fewer than two CPUs") }
        if pinned { try pin(process: getpid(), to: app) }
        defer { if pinned { try? pin(process: getpid(), to: allowed) } }
        let value = try body()
        let own = threadsNotOn(app, process: getpid())
        let other = netinspect.map { threadsNotOn(viewer, process: $0) } ?? (threads: 0, off: 0)
        return (value, Check(appThreads: own.threads, netinspectThreads: other.threads, misplaced: own.off + other.off))
    }

    /// How many threads process `process` has, and how many of them have a
    /// mask other than exactly `cpus`.
    static func threadsNotOn(_ cpus: [Int], process: pid_t) -> (threads: Int, off: Int) {
        let wanted = Set(cpus)
        let masks = threads(of: process).compactMap { Self.cpus(ofThread: $0) }
        return (masks.count, masks.filter { Set($0) != wanted }.count)
    }

    /// The row note on where a mode's runs ran; empty for a shared run that
    /// found every thread where it should be.
    static func note(_ checks: [Check], pinned: Bool) -> String {
        let misplaced = checks.map(\.misplaced).reduce(0, +)
        var parts: [String] = []
        if pinned, let split {
            let cpus = split.app.map(String.init).joined(separator: ",")
            let viewer = checks.map(\.netinspectThreads).max() ?? 0
            parts.append("app's \(checks.map(\.appThreads).max() ?? 0) threads on CPU \(cpus)"
                + (viewer > 0 ? ", netinspect's \(viewer) on CPU \(split.netinspect)" : ""))
        }
        if misplaced > 0 { parts.append("\(misplaced) threads found off their CPUs") }
        return parts.joined(separator: "; ")
    }
}
