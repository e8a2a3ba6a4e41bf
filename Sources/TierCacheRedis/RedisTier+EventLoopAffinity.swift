import NIOCore

extension RedisTier {
    /// Runs `body` with one of the tier's event loops as its task executor, so that the Redis
    /// commands it sends take no thread hop: each is queued by the thread that owns its
    /// connection, and its reply resumes the caller on that same thread.
    ///
    /// By default a command costs two wake-ups of other threads: the event loop's, to write the
    /// command, and one of Swift's concurrency pool's, to run the caller again when the reply
    /// comes. On loopback or a fast network those wake-ups, not Redis, are most of a round trip.
    /// Inside `body` the caller prefers the event loop as its task executor
    /// (`withTaskExecutorPreference`), the tier picks the connection on that loop (opening one
    /// there while the pool has room), and neither wake-up happens. Many tasks in such scopes on
    /// one loop pipeline their commands into one write, as `redis-benchmark -P` does.
    ///
    /// ```swift
    /// let hit = try await redis.withEventLoopAffinity {
    ///     try await redis.entry(forKey: key)
    /// }
    /// ```
    ///
    /// The loop is the one the caller already runs on when it belongs to the tier's group, else
    /// the group's next. Commands avoid every hop only where the tier has a connection on that
    /// loop: give the tier as many ``Configuration/connectionsPerNode`` as its group has loops, or a
    /// group of one loop (`eventLoopGroup: MultiThreadedEventLoopGroup.singleton.next()`).
    ///
    /// Called from an actor (the main actor, say), `body` itself stays on the actor: only what it
    /// calls that is not isolated, the tier's methods included, runs on the loop, so each call
    /// still hops there and back. Call it from a task that is not on an actor (a request
    /// handler, a detached or child task) to gain.
    ///
    /// Everything else `body` runs that has no executor of its own runs on the event loop's
    /// thread too, and holds up the loop's other connections while it does: keep it short (a
    /// memory or disk tier's lookup is fine; a long computation is not). The tier's event-loop
    /// group must outlive the call: as with any executor on a SwiftNIO loop, work for a loop that
    /// has shut down is dropped (SwiftNIO prints an error), so `body` would never resume.
    public func withEventLoopAffinity<Result, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let loop = eventLoops.callersLoop ?? eventLoopGroup.next()
        return try await withTaskExecutorPreference(EventLoopTaskExecutor(loop), isolation: isolation, operation: body)
    }
}
