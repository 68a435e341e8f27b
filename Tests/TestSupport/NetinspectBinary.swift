import Foundation

/// The `netinspect` binary `swift build` made, for the tests that run it:
/// beside the test bundle, else in `.build/debug` of this package.
///
/// ```swift
/// let binary = NetinspectBinary.url   // …/.build/debug/netinspect
/// ```
public enum NetinspectBinary {
    public static var url: URL {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        if directory.lastPathComponent.hasSuffix(".xctest") || directory.path.contains(".xctest/") {
            while directory.pathExtension != "xctest", directory.path != "/" { directory.deleteLastPathComponent() }
            directory.deleteLastPathComponent()
        }
        let beside = directory.appendingPathComponent("netinspect")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        // This file is Tests/TestSupport/NetinspectBinary.swift.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/netinspect")
    }
}
