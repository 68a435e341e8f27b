import Foundation
import Synchronization

extension FlowID {
    /// Mints new flow ids without a system call.
    ///
    /// `UUID()` reads 16 bytes from `/dev/urandom` on Linux, opening and
    /// closing it each time: three system calls on every captured flow.
    /// An id needs to be unique, not secret (every viewer sees them all), so
    /// each is made of the process's count of ids, scrambled by a bijection
    /// of 60 bits (distinct counts give distinct ids, and consecutive ones
    /// differ in their first characters, which `--dump` shows), and 62 bits
    /// drawn once per process from the system's generator (two processes'
    /// ids differ unless those bits do too). The version and variant bits
    /// are a random UUID's (version 4).
    enum Minting {
        private static let count = Atomic<UInt64>(0)
        private static let key: (count: UInt64, process: UInt64) = {
            var generator = SystemRandomNumberGenerator()
            return (generator.next(), generator.next())
        }()
        private static let mask: UInt64 = (1 << 60) - 1

        static func next() -> UUID {
            let number = count.wrappingAdd(1, ordering: .relaxed).newValue
            let mixed = scrambled((number ^ key.count) & mask)
            let process = key.process
            return UUID(uuid: (
                UInt8(truncatingIfNeeded: mixed >> 52), UInt8(truncatingIfNeeded: mixed >> 44),
                UInt8(truncatingIfNeeded: mixed >> 36), UInt8(truncatingIfNeeded: mixed >> 28),
                UInt8(truncatingIfNeeded: mixed >> 20), UInt8(truncatingIfNeeded: mixed >> 12),
                0x40 | UInt8(truncatingIfNeeded: mixed >> 8) & 0x0F, UInt8(truncatingIfNeeded: mixed),
                0x80 | UInt8(truncatingIfNeeded: process) & 0x3F, UInt8(truncatingIfNeeded: process >> 8),
                UInt8(truncatingIfNeeded: process >> 16), UInt8(truncatingIfNeeded: process >> 24),
                UInt8(truncatingIfNeeded: process >> 32), UInt8(truncatingIfNeeded: process >> 40),
                UInt8(truncatingIfNeeded: process >> 48), UInt8(truncatingIfNeeded: process >> 56)
            ))
        }

        /// A bijection of the values below 2^60: right xor-shifts and
        /// multiplications by odd constants modulo 2^60 are each invertible.
        static func scrambled(_ value: UInt64) -> UInt64 {
            var x = value
            x ^= x >> 29
            x = (x &* 0xBF58_476D_1CE4_E5B9) & mask
            x ^= x >> 32
            x = (x &* 0x94D0_49BB_1331_11EB) & mask
            x ^= x >> 29
            return x
        }
    }
}
