import Foundation

/// `swift run -c release netinspect-bench [--tiny] [--only N,N]`
///
/// Runs every measurement in one process, side by side, and prints Markdown
/// tables. `--tiny` shrinks every size so CI can smoke-run it in seconds; its
/// figures mean nothing.
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == UIBenchmark.childFlag, let count = arguments.dropFirst().first.flatMap({ Int($0) }) {
    UIBenchmark.childMemory(count: count)
    exit(0)
}
if arguments.first == HARBenchmark.childFlag, let path = arguments.dropFirst().first {
    do { try HARBenchmark.childRead(path: path); exit(0) } catch { print("error: \(error)"); exit(1) }
}
let tiny = arguments.contains("--tiny")
let only: Set<Int>? = arguments.firstIndex(of: "--only").flatMap { index in
    arguments.index(after: index) < arguments.endIndex
        ? Set(arguments[arguments.index(after: index)].split(separator: ",").compactMap { Int($0) }) : nil
}
func wanted(_ section: Int) -> Bool { only?.contains(section) ?? true }

print("# netinspect-bench\(tiny ? " (tiny sizes: smoke run, figures are not meaningful)" : "")")
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB; \(Date())\n")

do {
    if wanted(1) { print(try CaptureBenchmark.run(tiny: tiny).render()) }
    if wanted(2) { print(try CodecBenchmark.run(tiny: tiny).render()) }
    if wanted(3) { print(try IngestBenchmark.run(tiny: tiny).render()) }
    if wanted(4) { print(try UIBenchmark.run(tiny: tiny).render()) }
    if wanted(5) { print(try HARBenchmark.run(tiny: tiny).render()) }
    if wanted(6) { print(try RuleBenchmark.run(tiny: tiny).render()) }
    if wanted(7) { print(try OTLPIngestBenchmark.run(tiny: tiny).render()) }
    #if Hummingbird
    if wanted(8) { print(try InboundBenchmark.run(tiny: tiny).render()) }
    #endif
    #if GRPC
    if wanted(9) { print(try GRPCBenchmark.run(tiny: tiny).render()) }
    #endif
    if wanted(10) { print(try StreamBenchmark.run(tiny: tiny).render()) }
    if wanted(11) { print(try ServerReplayBenchmark.run(tiny: tiny).render()) }
} catch {
    FileHandle.standardError.write(Data("netinspect-bench: \(error)\n".utf8))
    exit(1)
}
