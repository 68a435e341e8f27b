import Foundation

/// Puts the terminal back if the process dies of a crash signal, so a trap
/// does not leave the shell in raw mode on the alternate screen.
///
/// The handler may run on any thread, so it does not touch ncurses: it only
/// restores the termios settings saved before curses started and writes the
/// reset sequences, both async-signal-safe. Then it reinstates the handler
/// that was there before (Swift's backtracer, or the default action) and
/// re-raises, so the crash is reported and ends the process as usual, now
/// on a sane screen.
enum CrashGuard {
    // Written once by arm() before the handlers are installed; only read after.
    /// On the heap, not a Swift global: AddressSanitizer found `tcgetattr`
    /// writing past a `termios` global (emitted 57 bytes long, the C struct
    /// is 60), an overflow that would corrupt whatever follows it.
    nonisolated(unsafe) private static let savedSettings: UnsafeMutablePointer<termios> = {
        let pointer = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        pointer.initialize(to: termios())
        return pointer
    }()
    nonisolated(unsafe) private static var hasSettings = false
    /// Previous actions indexed by signal number; a plain buffer because the
    /// handler must not touch Swift collections.
    nonisolated(unsafe) private static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)

    /// Leave the alternate screen, reset attributes, show the cursor.
    private static let reset: StaticString = "\u{1B}[?1049l\u{1B}[0m\u{1B}[?25h\r\n"

    static let signals = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]

    /// Saves the terminal's settings and installs the handlers. Call before
    /// curses changes the terminal.
    static func arm() {
        hasSettings = tcgetattr(STDIN_FILENO, savedSettings) == 0
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                if CrashGuard.hasSettings { _ = tcsetattr(STDIN_FILENO, TCSANOW, CrashGuard.savedSettings) }
                _ = write(STDOUT_FILENO, CrashGuard.reset.utf8Start, CrashGuard.reset.utf8CodeUnitCount)
                sigaction(number, CrashGuard.previous + Int(number), nil)
                raise(number)
            }
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, previous + Int(number))
        }
    }
}
