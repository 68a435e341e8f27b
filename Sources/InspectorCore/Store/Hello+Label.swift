import WireProtocol

extension Hello {
    /// How the list, the detail view and `--dump` name the app: its name,
    /// with its process id after it (`myservice[4242]`) when another of
    /// `agents` has the same name but is another process, so two instances
    /// of one service read apart.
    ///
    /// ```swift
    /// a.label(among: [a, b])   // "myservice[4242]" when b is myservice too
    /// ```
    package func label(among agents: some Sequence<Hello>) -> String {
        let shared = agents.contains {
            $0.appName == appName && ($0.processID != processID || $0.hostName != hostName)
        }
        return shared ? "\(appName)[\(processID)]" : appName
    }
}
