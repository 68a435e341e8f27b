import Foundation

/// Turns SIGINT, SIGTERM and SIGHUP into a readable pipe, so the main loop
/// can `poll()` for them next to the keyboard and leave through its normal
/// cleanup: terminal restored, socket file removed.
enum SignalPipe {
    // Written once in install() before the handlers can run; the handler only
    // reads it, and write(2) is async-signal-safe.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private(set) static var readEnd: Int32 = -1

    /// The signals that end the program cleanly.
    static let signals = [SIGINT, SIGTERM, SIGHUP]

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
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(SignalPipe.writeEnd, &byte, 1)
            }
        }
    }
}
