import Synchronization
@_spi(TierCacheInternals) import TierCache

/// Where a tier's data connections send the invalidations of the keys they read, in
/// ``RedisCoherence/Configuration/TrackingMode/keysRead`` mode: to the tracking connection that
/// ``RedisCoherence`` holds on the same node (`CLIENT TRACKING ON REDIRECT <id>`).
///
/// The coherence sets the targets; each data connection compares the generation with the one it
/// last applied before every command it sends, on its event loop, and sends the new
/// `CLIENT TRACKING` command first when they differ. Since a connection's commands run in order,
/// no read leaves after a change of targets without the change ahead of it.
///
/// One tier, one coherence: a second coherence over the same tier would take its targets over.
final class TrackingRedirect: Sendable {
    /// A node, by address: the coherence lists primaries as the slot map names them, the pools
    /// as they were made, with credentials that may differ.
    struct Node: Hashable, Sendable {
        var host: String
        var port: Int

        init(_ endpoint: RedisEndpoint) {
            host = endpoint.host
            port = endpoint.port
        }
    }

    private struct Targets {
        var ids: [Node: Int64] = [:]
        /// Told of each write that did not reach Redis (see ``writeNotTracked(_:)``).
        var onWriteNotTracked: (@Sendable (CacheKey) -> Void)?
        /// Told when a data connection whose reads were tracked closes
        /// (see ``redirectedConnectionClosed()``).
        var onRedirectedConnectionClosed: (@Sendable () -> Void)?
    }

    /// Bumped (releasing) after every change of targets; 0 until the first.
    private let changes = Atomic<Int>(0)
    private let targets = Locked(Targets())
    /// Copied out of ``targets`` so that the write path reads it without a lock.
    private let writesRead = Atomic<Bool>(false)

    /// The generation data connections compare with theirs (acquiring: the targets set before
    /// it was bumped are seen).
    var generation: Int { changes.load(ordering: .acquiring) }

    /// Whether a write must read its key first (`EXISTS`), so that the server tracks it for this
    /// process: the server tracks the keys a connection reads, not those it writes, and a value
    /// this process wrote and keeps in its upper tiers would otherwise never be invalidated.
    var tracksWrittenKeys: Bool { writesRead.load(ordering: .relaxed) }

    /// Sets what a write that did not reach Redis calls: the coherence removes the key from the
    /// upper tiers, which stored it first, and which hold a value the rest of the fleet does not
    /// see (and, in keys-read mode, that no invalidation would reach: the server tracks the key
    /// only once the write's `EXISTS` has run).
    func onWriteNotTracked(_ handler: (@Sendable (CacheKey) -> Void)?) {
        targets.withLock { $0.onWriteNotTracked = handler }
    }

    /// A write of `key` failed: while coherence runs, its value must not stay in the upper tiers,
    /// in either mode. Redis may still hold the key's older value, which the rest of the fleet
    /// reads (the cache's removal after a failed store fails too while Redis is unreachable).
    func writeFailed(_ key: CacheKey) {
        guard let handler = targets.withLock({ $0.onWriteNotTracked }) else { return }
        handler(key)
    }

    /// A write of `key` was refused by the tier (which removed the key's older value): in
    /// keys-read mode its value must not stay in the upper tiers, where no invalidation would
    /// reach it. (Broadcast invalidations reach every key: the value may stay.)
    func writeNotTracked(_ key: CacheKey) {
        guard tracksWrittenKeys, let handler = targets.withLock({ $0.onWriteNotTracked }) else { return }
        handler(key)
    }

    /// Sets what a data connection whose reads were tracked calls when it closes: the
    /// coherence empties the upper tiers.
    func onRedirectedConnectionClosed(_ handler: (@Sendable () -> Void)?) {
        targets.withLock { $0.onRedirectedConnectionClosed = handler }
    }

    /// A data connection whose reads the server tracked has closed (a timeout, a reset, the
    /// server's idle `timeout`, `CLIENT KILL`). The server tracks a key for the connection that
    /// read it, and forgets the connection's keys when it closes: a later write of one is reported
    /// to nobody, though the tracking connection is alive, so the upper tiers must let go of what
    /// such reads put there.
    func redirectedConnectionClosed() {
        targets.withLock { $0.onRedirectedConnectionClosed }?()
    }

    /// Redirects every data connection to the tracking connection of its node (`ids`, by node).
    func redirect(to ids: [RedisEndpoint: Int64]) {
        targets.withLock {
            $0.ids = Dictionary(ids.map { (Node($0.key), $0.value) }, uniquingKeysWith: { _, last in last })
        }
        writesRead.store(true, ordering: .relaxed)
        changes.add(1, ordering: .releasing)
    }

    /// The tracking connections are gone: data connections stop tracking (their reads would be
    /// refused, or tracked for nobody) until ``redirect(to:)`` again. Writes keep reading their
    /// key, which costs nothing in correctness.
    func suspend() {
        targets.withLock { $0.ids = [:] }
        changes.add(1, ordering: .releasing)
    }

    /// Coherence has stopped: data connections stop tracking, writes stop reading their key, and
    /// the handlers set with ``onWriteNotTracked(_:)`` and ``onRedirectedConnectionClosed(_:)``
    /// are let go.
    func stop() {
        targets.withLock { $0 = Targets() }
        writesRead.store(false, ordering: .relaxed)
        changes.add(1, ordering: .releasing)
    }

    /// The command that brings a connection to `endpoint` up to date after a change: tracking
    /// redirected to its node's tracking connection (`redirecting`), or off (which a connection
    /// that never tracked accepts too).
    func command(for endpoint: RedisEndpoint) -> (arguments: [[UInt8]], redirecting: Bool) {
        guard let id = targets.withLock({ $0.ids[Node(endpoint)] }) else {
            return (["CLIENT", "TRACKING", "OFF"].map { Array($0.utf8) }, false)
        }
        return (["CLIENT", "TRACKING", "ON", "REDIRECT", String(id)].map { Array($0.utf8) }, true)
    }
}
