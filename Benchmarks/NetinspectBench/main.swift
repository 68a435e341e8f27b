import Foundation

/// `swift run -c release netinspect-bench [--tiny] [--only N,N] [--rounds N] [--help]`
///
/// Runs every measurement in one process, side by side, and prints Markdown
/// tables (``BenchOptions`` reads the command line). `--tiny` shrinks every
/// size so CI can smoke-run it in seconds; its figures mean nothing.
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == UIBenchmark.childFlag, let count = arguments.dropFirst().first.flatMap({ Int($0) }) {
    UIBenchmark.childMemory(count: count)
    exit(0)
}
if arguments.first == HARBenchmark.childFlag, let path = arguments.dropFirst().first {
    do { try HARBenchmark.childRead(path: path); exit(0) } catch { print("error: \(error)"); exit(1) }
}
if BenchOptions.wantsHelp {
    print(BenchOptions.usage)
    exit(0)
}
if !BenchOptions.unknown.isEmpty {
    FileHandle.standardError.write(Data("netinspect-bench: unknown argument \(BenchOptions.unknown.joined(separator: " "))\n\n\(BenchOptions.usage)\n".utf8))
    exit(2)
}
let tiny = BenchOptions.tiny

print("# netinspect-bench\(tiny ? " (tiny sizes: smoke run, figures are not meaningful)" : "")")
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB; \(Date())\n")

/// Runs section `number` when wanted: its load first, then its table, or
/// `repeats` tables for a section that has no rounds of its own.
func section(_ number: Int, repeats: Int = 1, _ run: () throws -> String) throws {
    guard BenchOptions.wanted(number) else { return }
    for repeatIndex in 0 ..< repeats {
        print("load before section \(number)\(repeats > 1 ? ", run \(repeatIndex + 1) of \(repeats)" : ""): \(BenchOptions.load) (1, 5, 15 min)")
        print(try run())
    }
}

/// Sections that measure once are run this many times (`--rounds`).
let repeats = BenchOptions.rounds ?? 1
do {
    try section(1) { try CaptureBenchmark.run(tiny: tiny).render() }
    try section(2, repeats: repeats) { try CodecBenchmark.run(tiny: tiny).render() }
    try section(3, repeats: repeats) { try IngestBenchmark.run(tiny: tiny).render() }
    try section(4, repeats: repeats) { try UIBenchmark.run(tiny: tiny).render() }
    try section(5, repeats: repeats) { try HARBenchmark.run(tiny: tiny).render() }
    try section(6, repeats: repeats) { try RuleBenchmark.run(tiny: tiny).render() }
    try section(7, repeats: repeats) { try OTLPIngestBenchmark.run(tiny: tiny).render() }
    #if Hummingbird
    try section(8) { try InboundBenchmark.run(tiny: tiny).render() }
    #endif
    #if GRPC
    try section(9) { try GRPCBenchmark.run(tiny: tiny).render() }
    #endif
    #if AsyncHTTPClient
    try section(10) { try StreamBenchmark.run(tiny: tiny).render() }
    #endif
    try section(11, repeats: repeats) { try ServerReplayBenchmark.run(tiny: tiny).render() }
} catch {
    FileHandle.standardError.write(Data("netinspect-bench: \(error)\n".utf8))
    exit(1)
}
