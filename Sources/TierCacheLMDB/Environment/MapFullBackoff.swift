#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a write waits after LMDB found the map full even though the tier's accounting has room.
///
/// LMDB reuses a page freed by a commit only once no reader holds a snapshot from before that
/// commit. With many processes reading one store, there is nearly always such a reader, so a full
/// map is mostly pages pinned for a few microseconds. Waiting a little (growing from a yield to
/// 8 ms, under 50 ms over all attempts) lets them go; clearing the reader slots of dead processes
/// (a process killed mid-read leaves its slot, pinning its snapshot for good) frees the rest.
enum MapFullBackoff {
    static func wait(attempt: Int, environment: LMDBEnvironment) {
        if attempt == 0 { environment.clearStaleReaders() }
        if attempt < 2 {
            sched_yield()
        } else {
            usleep(useconds_t(min(8_000, 250 << min(attempt, 10))))
        }
    }
}
