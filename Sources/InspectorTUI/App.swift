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
        _ = Reducer.reduce(&state, .resize(terminal.size))
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
            // The state is reduced in place, never through a copy: a copy
            // would make the next mutation duplicate every stored flow.
            for input in terminal.readInput() {
                switch input {
                case .resize:
                    terminal.invalidate()
                    _ = Reducer.reduce(&state, .resize(terminal.size))
                case .key(let key):
                    if Reducer.reduce(&state, .key(key)) == .quit { return }
                }
            }
            let events = inbox.drain()
            if !events.isEmpty { _ = Reducer.reduce(&state, .inbox(events, at: Date())) }
            _ = Reducer.reduce(&state, .tick(Date()))
            terminal.blit(Renderer.render(state, size: state.size))
        }
    }
}
