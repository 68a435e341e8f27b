import WireProtocol

extension Reducer {
    /// `:replay.server FILE…`: the files, split as a shell splits words
    /// (a path with a space is quoted).
    static func startServerReplay(_ argument: String, in state: inout AppState) -> Effect {
        let paths: [String]
        do {
            paths = try ShellWords.split(argument).flatMap { $0 }
        } catch {
            state.notice = Notice(text: "replay.server: \(error.message)", isError: true)
            return .none
        }
        guard !paths.isEmpty else {
            state.notice = Notice(text: "replay.server needs a file: a HAR or a --save file", isError: true)
            return .none
        }
        return .startServerReplay(paths: paths)
    }

    /// `:replay.server.stop`.
    static func stopServerReplay(in state: inout AppState) -> Effect {
        guard state.session.serverReplay != nil else {
            state.notice = Notice(text: "No server replay is running", isError: false)
            return .none
        }
        return .stopServerReplay
    }

    static func serverReplayChanged(_ progress: ServerReplayProgress?, in state: inout AppState) {
        state.session.serverReplay = progress
        let text = progress.map { "Server replay from \($0.summary)" } ?? "Server replay stopped: requests go to the network"
        state.notice = Notice(text: text, isError: false)
        state.session.note(text, level: .info, at: state.clock)
        guard progress != nil else { return }
        // Apps connected already that will not be answered from it.
        for agent in state.session.agents where agent.isConnected && !agent.hello.acceptsControl {
            guard case .agent = agent.connection else { continue }
            let ignored = ControlNotice.text(for: agent.hello, ignoring: ["server replay"])
            state.session.note(ignored, level: .error, at: state.clock)
            state.notice = Notice(text: ignored, isError: true)
        }
    }
}
