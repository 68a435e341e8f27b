import Foundation
import InspectorCore

/// The main loop: wait for a key, a listener event or a signal; reduce;
/// render; blit. Runs on the main thread, the only one that touches ncurses.
struct App {
    var state: AppState
    let inbox: Inbox
    let terminal: Terminal

    /// Runs until the user quits or a signal arrives.
    mutating func run() {
        state = reduced(.resize(terminal.size))
        terminal.blit(Renderer.render(state, size: state.size))
        var descriptors = [
            pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            pollfd(fd: inbox.wakeFileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // The timeout only matters if a wake-up were lost; resizes arrive
            // as KEY_RESIZE after SIGWINCH interrupts poll().
            _ = poll(&descriptors, nfds_t(descriptors.count), 250)
            if descriptors[2].revents != 0 { return }
            for input in terminal.readInput() {
                switch input {
                case .resize:
                    terminal.invalidate()
                    state = reduced(.resize(terminal.size))
                case .key(let key):
                    var next = state
                    if Reducer.reduce(&next, .key(key)) == .quit { return }
                    state = next
                }
            }
            let events = inbox.drain()
            if !events.isEmpty { state = reduced(.inbox(events, at: Date())) }
            terminal.blit(Renderer.render(state, size: state.size))
        }
    }

    private func reduced(_ action: Action) -> AppState {
        var next = state
        _ = Reducer.reduce(&next, action)
        return next
    }
}
