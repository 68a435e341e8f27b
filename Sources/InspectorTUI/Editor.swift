import Foundation

/// Runs the person's editor on a temporary file: `$VISUAL`, else `$EDITOR`,
/// else `vi`, through the shell, so `EDITOR="code --wait"` works too.
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(command) \"$1\"", "netinspect-editor", file.path]
        do {
            try process.run()
        } catch {
            return (nil, "cannot run \(command): \(error.localizedDescription)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return (nil, "\(command) exited with status \(process.terminationStatus); nothing was changed")
        }
        guard let data = try? Data(contentsOf: file), let edited = String(data: data, encoding: .utf8) else {
            return (nil, "the edited file is gone or not UTF-8")
        }
        return (edited, nil)
    }
}
