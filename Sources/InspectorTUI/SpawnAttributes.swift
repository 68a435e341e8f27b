#if canImport(Glibc)
import Glibc
#endif

/// The `posix_spawn` attributes of every program netinspect starts (an
/// editor, a wrapped command): no signal blocked, since the calling
/// thread's mask passes on through exec and a program started with SIGINT
/// blocked would ignore Ctrl-C; and `defaults` back to their default
/// action, since an ignored signal stays ignored across exec (SwiftNIO
/// ignores SIGPIPE). No POSIX_SPAWN_SETPGROUP: the child stays in
/// netinspect's process group, as a shell's foreground job.
enum SpawnAttributes {
    /// Runs `body` with the attributes made and, after, destroyed.
    static func with<Result>(resettingToDefault defaults: [Int32], _ body: (inout posix_spawnattr_t) throws -> Result) rethrows -> Result {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var reset = sigset_t()
        sigemptyset(&reset)
        for number in defaults { sigaddset(&reset, number) }
        posix_spawnattr_setsigdefault(&attributes, &reset)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return try body(&attributes)
    }
}
