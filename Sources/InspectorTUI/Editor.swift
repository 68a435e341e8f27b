import Foundation

/// Runs the person's editor on a temporary file: `$VISUAL`, else `$EDITOR`,
/// else `vi`, through the shell, so `EDITOR="code --wait"` works too. The
/// editor owns the terminal while it runs (``ForegroundCommand``); call it
/// inside ``Terminal/runOutside(_:)``.
enum Editor {
    /// The text as saved, or nil and why not.
    static func edit(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> (String?, String?) {
        let command = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let directory = FileManager.default.temporaryDirectory
        let file = directory.appendingPathComponent("netinspect-edit-\(UUID().uuidString).http")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try Data(text.utf8).write(to: file, options: [.atomic])
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        } catch {
            return (nil, "cannot write \(file.path): \(error.localizedDescription)")
        }
        let outcome = ForegroundCommand.run(["/bin/sh", "-c", "\(command) \"$1\"", "netinspect-editor", file.path])
        if let failure = failure(of: command, outcome) { return (nil, failure) }
        guard let data = try? Data(contentsOf: file), let edited = String(data: data, encoding: .utf8) else {
            return (nil, "the edited file is gone or not UTF-8")
        }
        return (edited, nil)
    }

    /// Why the editor's edit is not taken, or nil when it exited with 0.
    static func failure(of command: String, _ outcome: ForegroundCommand.Outcome) -> String? {
        switch outcome {
        case .exited(0):
            return nil
        case .exited(let status):
            // The shell's own statuses for a command it could not run.
            let why = switch status {
            case 127: " (not found)"
            case 126: " (not executable)"
            default: ""
            }
            return "\(command) exited with status \(status)\(why); nothing was changed"
        case .killed(let number):
            return "\(command) was killed by signal \(number) (\(String(cString: strsignal(number)))); nothing was changed"
        case .cannotStart(let reason):
            return "cannot run \(command): \(reason)"
        }
    }
}
