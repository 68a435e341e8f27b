import CaptureAgent
import WireProtocol

extension Netinspect {
    /// What `--version` prints. The version is written once, as
    /// `CaptureAgent.version`, which every agent also sends in its hello:
    /// netinspect and the agent are one package, released together, and a
    /// second copy here would drift from it.
    static let versionText =
        "netinspect \(CaptureAgent.version) (protocol versions \(Wire.supportedVersions.lowerBound)-\(Wire.supportedVersions.upperBound))"
}
