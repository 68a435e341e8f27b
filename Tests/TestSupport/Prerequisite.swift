import Foundation

/// What a test needs from the machine and did not find: a failure, not a
/// skip. `.ci/run` installs every tool the tests use and builds every
/// binary they run, so in CI a missing one is a broken setup, and a skip
/// there would let the test it guards pass without running. A test skips
/// only for what CI cannot have, and says so where it skips.
///
/// ```swift
/// let curl = try Prerequisite.tool("curl", installedBy: "apt-get install curl")
/// ```
public struct Prerequisite: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// The first `name` on `PATH`, or a failure that says how to install it.
    public static func tool(_ name: String, installedBy install: String) throws -> String {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        guard let found = paths.map({ "\($0)/\(name)" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Prerequisite("\(name) is not installed: \(install) (.ci/run installs it)")
        }
        return found
    }

    /// The `netinspect` binary the build made (``NetinspectBinary``), or a
    /// failure: `swift build --build-tests` builds it with the tests.
    public static func netinspect() throws -> URL {
        let binary = NetinspectBinary.url
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw Prerequisite("netinspect binary not found at \(binary.path); build it with `swift build --build-tests`")
        }
        return binary
    }
}
