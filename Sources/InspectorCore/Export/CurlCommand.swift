import Foundation
import WireProtocol

/// A `curl` command line that sends a recorded request again, byte for byte.
///
/// ```swift
/// let command = CurlCommand.make(for: flow.request)
/// // curl --globoff --path-as-is -X PUT 'http://127.0.0.1:8080/items/1' \
/// //   -H 'Content-Type: application/json' \
/// //   --data-raw '{"name":"Zoë"}'
/// ```
///
/// What makes it exact:
/// - `--globoff` and `--path-as-is` stop curl from rewriting `[]{}` and `/../`
///   in the URL;
/// - headers curl would add on its own (`User-Agent`, `Accept`, and with a body
///   `Content-Type` and `Expect`) are removed with `-H 'Name:'` unless the
///   request had them; `Content-Length` is left to curl, which counts the body;
/// - a text body (UTF-8, no control characters but tab and newlines, not
///   starting with `@`) goes in `--data-raw '…'`; any other body is piped in
///   from `printf` with octal escapes, so NUL and invalid UTF-8 survive a
///   POSIX shell;
/// - a truncated body ends the command with a shell comment saying so, since
///   only the captured prefix can be replayed.
enum CurlCommand {
    /// The command for `request`, as POSIX shell text (several lines joined
    /// with backslash-newline).
    static func make(for request: Request) -> String {
        var arguments = ["curl", "--globoff", "--path-as-is"]
        let body = request.body
        let hasBody = body.map { !$0.data.isEmpty } ?? false
        switch request.method {
        case "GET" where !hasBody: break
        case "POST" where hasBody: break
        case "HEAD": arguments.append("--head")
        default: arguments += ["-X", shellQuoted(request.method)]
        }
        arguments.append(shellQuoted(request.url))

        var lines = [arguments.joined(separator: " ")]
        for header in request.headers where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            let field = header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
            lines.append("-H " + shellQuoted(field))
        }
        var curlDefaults = ["User-Agent", "Accept"]
        if hasBody { curlDefaults += ["Content-Type", "Expect"] }
        for name in curlDefaults where request.headers.first(name) == nil {
            lines.append("-H " + shellQuoted("\(name):"))
        }

        var pipe = ""
        if let body, hasBody {
            if let text = replayableText(body.data) {
                lines.append("--data-raw " + shellQuoted(text))
            } else {
                pipe = "printf " + printfQuoted(body.data) + " | "
                lines.append("--data-binary @-")
            }
            if body.isTruncated {
                lines.append("# body truncated: only \(body.data.count) of \(body.size) bytes were captured")
            }
        }
        return pipe + lines.joined(separator: " \\\n  ")
    }

    /// The body as text when `--data-raw` can carry it unchanged.
    private static func replayableText(_ data: Data) -> String? {
        guard let text = String(data: data, encoding: .utf8), !text.hasPrefix("@") else { return nil }
        let allowed: Set<Unicode.Scalar> = ["\t", "\n", "\r"]
        let hasControl = text.unicodeScalars.contains { ($0.value < 0x20 && !allowed.contains($0)) || $0.value == 0x7F }
        return hasControl ? nil : text
    }

    /// Single-quoted for a POSIX shell; a quote inside becomes `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// A single-quoted printf format that prints exactly `data`.
    static func printfQuoted(_ data: Data) -> String {
        var out = "'"
        for byte in data {
            switch byte {
            case UInt8(ascii: "'"): out += #"'\''"#
            case UInt8(ascii: "\\"): out += #"\\"#
            case UInt8(ascii: "%"): out += "%%"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "\\" + String(byte, radix: 8).leftPadded(to: 3)
            }
        }
        return out + "'"
    }
}

/// The OSC 52 escape sequence that asks the terminal to put `text` on the
/// system clipboard. Works over SSH in terminals that allow it (xterm, kitty,
/// iTerm2, WezTerm, Windows Terminal); inside tmux it needs
/// `set -g set-clipboard on`.
package func osc52Clipboard(_ text: String) -> String {
    "\u{1B}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}"
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
