/// Where a benchmark's walk through its accesses stands between samples.
///
/// A benchmark's closure runs once per sample, so a position kept in the closure restarts at 0
/// every sample: each sample then replays the same first thousand Zipf accesses, a few hundred
/// keys that all stay in the CPU's caches, instead of walking the whole distribution over
/// 100,000 keys. That flattered every memory benchmark and hid what each policy's memory layout
/// costs. A cursor shared by the samples of one benchmark carries on where the last one stopped.
///
/// `@unchecked Sendable` only so a benchmark closure can hold it: a benchmark's samples run one
/// after another on one thread, never at once.
public final class AccessCursor: @unchecked Sendable {
    private var position = 0

    public init() {}

    /// The position the next sample starts at; the cursor moves on by `count`, the accesses the
    /// sample will make.
    public func take(_ count: Int) -> Int {
        defer { position &+= count }
        return position
    }
}
