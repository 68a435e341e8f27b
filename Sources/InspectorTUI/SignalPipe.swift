import Foundation

/// Turns SIGINT, SIGTERM and SIGHUP into a readable pipe, so the main loop
/// can `poll()` for them next to the keyboard and leave through its normal
/// cleanup: terminal restored, socket file removed.
///
/// Each signal is one byte: its number, with the high bit set when the
/// terminal sent it (Ctrl-C, a hangup), which reaches the whole foreground
/// process group, a wrapped command included, so it need not be passed on.
///
/// ```swift
/// SignalPipe.install()
/// for received in SignalPipe.take() where !received.fromTerminal { kill(child, received.number) }
/// ```
enum SignalPipe {
    // Written once in install() before the handlers can run; the handler only
    // reads it, and write(2) is async-signal-safe.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private(set) static var readEnd: Int32 = -1

    /// The signals that end the program cleanly.
    static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// A signal that arrived.
    struct Received: Equatable {
        /// Its number.
        var number: Int32
        /// Whether the kernel sent it for the terminal (`si_code` is
        /// `SI_KERNEL`), rather than a process with kill(2).
        var fromTerminal: Bool
    }

    /// Creates the pipe and installs the handlers.
    static func install() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        readEnd = ends[0]
        writeEnd = ends[1]
        // A parent may have started us with these blocked (Foundation's
        // Process, called from a Dispatch thread, passes its mask on); a
        // blocked SIGTERM would never reach the handler.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in signals { sigaddset(&unblocked, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { number, info, _ in
                let fromTerminal = info.map { Int($0.pointee.si_code) == Int(SI_KERNEL) } ?? false
                var byte = UInt8(truncatingIfNeeded: number) | (fromTerminal ? 0x80 : 0)
                _ = write(SignalPipe.writeEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            // SA_RESTART as signal(2) gives: a read or write the signal
            // interrupts goes on rather than failing with EINTR.
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// The signals received since the last call, oldest first.
    static func take() -> [Received] {
        var received: [Received] = []
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readEnd, &bytes, bytes.count)
            guard count > 0 else { return received }
            received += bytes[..<count].map { Received(number: Int32($0 & 0x7F), fromTerminal: $0 & 0x80 != 0) }
        }
    }
}
