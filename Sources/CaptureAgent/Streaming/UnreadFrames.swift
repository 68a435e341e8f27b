/// The frames written to a Unix socket that the inspector may not have read
/// yet, so that the events in them can be counted as dropped when the
/// connection breaks.
///
/// What the kernel tells (Linux 6.18, measured; pinned by
/// `FaultInjectionTests.testTheKernelChargesUnreadFramesToTheSenderUntilThePeerIsGone`):
/// `ioctl(SIOCOUTQ)` on an `AF_UNIX` stream socket returns the memory
/// (`skb` truesize, not payload bytes: 768 for a 5-byte write, 12,544 for
/// 10,000 bytes) of the data this end wrote that the peer has not consumed;
/// a partly read write stays charged in full. When the peer's socket goes
/// away (close, SIGKILL) its unread data is freed and the value drops to 0,
/// with `SO_ERROR` set to `ECONNRESET` if anything was unread (left clear
/// if the peer had read everything). So the value means nothing once the
/// write has failed: it must be read while the peer is alive. The writer samples it around every write and at every idle
/// tick, and keeps here the shortest run of most recent frames that can
/// account for the charge it last saw.
///
/// Each frame's charge is measured as the rise of the value across its
/// write, and never taken below its payload size. Both are at most the
/// frame's true charge (the peer may consume while we write), so the run
/// kept is never shorter than the frames truly unread when sampled: the
/// count is an upper bound of what the inspector lost, exact when it read
/// nothing between the last sample and its death (a stalled or stopped
/// inspector), and 0 when it had read everything (no `ECONNRESET`). Events a killed inspector had read but not yet shown are
/// invisible to the agent and not counted.
struct UnreadFrames {
    private struct Entry {
        var charge: Int
        var events: Int
    }

    /// Beyond this many frames, the oldest are taken as read. A Unix
    /// socket's buffer (about 208 KiB of charge) never holds that many.
    static let capacity = 4096

    private var entries: [Entry] = []
    private var start = 0

    /// Events in the frames not known to have been read.
    private(set) var events = 0

    /// Frames not known to have been read.
    var count: Int { entries.count - start }

    /// Records a frame of `bytes` payload bytes carrying `events` events,
    /// written between charge samples `before` and `after` (`nil`: no
    /// meaningful sample; the charge is then taken as the payload size).
    mutating func wrote(bytes: Int, events: Int, chargeBefore before: Int?, chargeAfter after: Int?) {
        var charge = bytes
        if let before, let after { charge = max(charge, after - before) }
        entries.append(Entry(charge: max(charge, 1), events: events))
        self.events += events
        if count > Self.capacity { removeFirst(count - Self.capacity) }
        if let after { observe(charge: after) }
    }

    /// The peer has consumed everything but the last frames whose charges
    /// add up to at least `charge`: forgets the others.
    mutating func observe(charge: Int) {
        var total = 0
        var keepFrom = entries.count
        while keepFrom > start, total < charge {
            keepFrom -= 1
            total += entries[keepFrom].charge
        }
        removeFirst(keepFrom - start)
    }

    /// Forgets everything: a new connection.
    mutating func reset() {
        entries.removeAll(keepingCapacity: true)
        start = 0
        events = 0
    }

    private mutating func removeFirst(_ n: Int) {
        guard n > 0 else { return }
        for index in start ..< start + n { events -= entries[index].events }
        start += n
        if start == entries.count {
            entries.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1024, start * 2 > entries.count {
            entries.removeFirst(start)
            start = 0
        }
    }
}
